"""`acp-bridge-agent demo`: a real acp-bridge process, driven the way an editor drives it.

It spawns `python -m acp_bridge` (scripted model: no key, no network; a temporary workspace
and state directory) with the reference client (`acp_bridge.client`), plays a few built-in
scripts in their own sessions, and prints what three kinds of editor show for each: one that
appends every chunk, one that honours `messageId` but not the reset flag, and a reset-aware
one (spec/reset-extension.md). Then which tools ran, with which effect keys (from the effect
ledger), how many permission prompts there were and how many attempts were billed.

The demo is not the protocol process: it prints to stdout, through one `write` function.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio

from acp_bridge.cli._demo_play import play
from acp_bridge.cli._demo_report import Style, Write, print_run, run_ok, summary
from acp_bridge.client import WireMessage
from acp_bridge.providers.scripted import builtin_scripts

__all__ = ["DEFAULT_SCENARIOS", "add_demo_arguments", "main_demo", "run_demo"]

DEFAULT_SCENARIOS = ("hello", "broken-mid-word", "help-desk-refund-file")


def _stdout(text: str) -> None:
    line = text + "\n"
    try:
        sys.stdout.write(line)
    except UnicodeEncodeError:  # a terminal that cannot show "━" or "✓" still gets the text
        encoding = sys.stdout.encoding or "ascii"
        sys.stdout.write(line.encode(encoding, "replace").decode(encoding))
    sys.stdout.flush()


def add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    names = sorted(builtin_scripts())
    parser.add_argument(
        "--scenario",
        action="append",
        choices=names,
        metavar="NAME",
        help=f"a built-in script to play (repeatable; default: {', '.join(DEFAULT_SCENARIOS)}). "
        f"Choices: {', '.join(names)}",
    )
    parser.add_argument("--no-color", action="store_true", help="plain text, no ANSI colours")
    parser.add_argument("--json", action="store_true", help="print a machine-readable summary")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-bridge-agent demo",
        description="Spawn acp-bridge as an editor does and show what editors display for a "
        "normal answer and for broken, retried model streams.",
    )
    add_demo_arguments(parser)
    return parser


async def run_demo(
    args: argparse.Namespace | Sequence[str],
    *,
    write: Write | None = None,
    transcript: list[WireMessage] | None = None,
) -> int:
    """Runs the demo; 0 when the bridge answered every scenario and exited cleanly.

    `write` receives each block of output (default: stdout). `transcript`, when given, gets
    every JSON-RPC message exchanged with the bridge, in wire order.
    """
    options = args if isinstance(args, argparse.Namespace) else _parser().parse_args(list(args))
    out = write or _stdout
    names = tuple(dict.fromkeys(options.scenario or DEFAULT_SCENARIOS))
    color = not options.no_color and not options.json and "NO_COLOR" not in os.environ
    style = Style(color and write is None and sys.stdout.isatty())
    with tempfile.TemporaryDirectory(prefix="acp-bridge-demo-") as tmp:
        root = Path(tmp)
        try:
            with anyio.fail_after(60):
                run = await play(names, root, transcript if transcript is not None else [])
        except Exception as exc:  # the bridge died or hung: say so, no traceback
            out(f"acp-bridge-agent demo: the bridge did not complete the demo: {exc!r}")
            return 1
        if options.json:
            out(json.dumps(summary(run), indent=2, ensure_ascii=False))
        else:
            print_run(run, out, style)
    if not run_ok(run) and not options.json:
        out(style.bad("the demo did not complete cleanly; acp-bridge's log follows:"))
        out(run.stderr)
    return 0 if run_ok(run) else 1


def main_demo(argv: Sequence[str] | None = None) -> int:
    """`acp-bridge-agent demo [--scenario NAME]... [--no-color] [--json]`."""
    options = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))

    async def main() -> int:
        return await run_demo(options)

    return anyio.run(main)
