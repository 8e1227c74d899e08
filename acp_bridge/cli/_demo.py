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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from acp_bridge.client import (
    EditorView,
    PromptOutcome,
    ReduceMode,
    ToolCallEntry,
    WireMessage,
    reduce,
    spawn_bridge,
)
from acp_bridge.providers.scripted import builtin_scripts
from acp_bridge.turn import EffectLedger, EffectRecord

__all__ = ["DEFAULT_SCENARIOS", "add_demo_arguments", "main_demo", "run_demo"]

DEFAULT_SCENARIOS = ("hello", "broken-mid-word", "help-desk-refund-file")
_HELLO_PROMPT = "Hello, bridge!"
_SEED_README = (
    "# Demo workspace\n\nA scratch folder acp-bridge's demo made; it is deleted afterwards.\n"
)
_VIEWS = (
    (ReduceMode.APPEND_ONLY, "append-only editor (ignores messageId and _meta)"),
    (ReduceMode.NAIVE, "messageId-aware editor that ignores the reset flag"),
    (ReduceMode.RESET_AWARE, "reset-aware editor (spec/reset-extension.md)"),
)
_WIDTH = 96

Write = Callable[[str], None]


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


# -- running the scenarios -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Played:
    name: str
    workspace: Path
    outcome: PromptOutcome


@dataclass(frozen=True, slots=True)
class _Run:
    argv: tuple[str, ...]
    returncode: int | None
    stderr: str
    agent: Mapping[str, Any]
    played: tuple[_Played, ...]
    effects: tuple[EffectRecord, ...]


def _bridge_environment() -> dict[str, str]:
    # The user's own ACP_BRIDGE_* settings must not turn the demo into a real model run.
    return {k: v for k, v in os.environ.items() if not k.startswith("ACP_BRIDGE_")}


async def _play(names: Sequence[str], root: Path, transcript: list[WireMessage]) -> _Run:
    state = root / "state"
    config = root / "config.toml"
    config.write_text("# empty: the demo uses only its flags\n", encoding="utf-8")
    args = ["--provider", "scripted", "--state-dir", str(state), "--config", str(config)]
    played: dict[str, _Played] = {}
    async with spawn_bridge(args, env=_bridge_environment()) as bridge:
        client = bridge.client
        await client.initialize()

        async def scenario(name: str) -> None:
            workspace = root / "workspaces" / name
            workspace.mkdir(parents=True)
            (workspace / "README.md").write_text(_SEED_README, encoding="utf-8")
            session_id = await client.new_session(workspace)
            prompt = _HELLO_PROMPT if name == "hello" else f"/{name}"
            played[name] = _Played(name, workspace, await client.prompt(session_id, prompt))

        # Each scenario has its own session; they run side by side like editor tabs.
        async with anyio.create_task_group() as tg:
            for name in names:
                tg.start_soon(scenario, name)
        transcript.extend(client.transcript)
    with EffectLedger(state) as ledger:
        effects = tuple(ledger.records())
    return _Run(
        argv=bridge.argv,
        returncode=bridge.returncode,
        stderr=bridge.stderr_text,
        agent=client.agent_info,
        played=tuple(played[name] for name in names),
        effects=effects,
    )


# -- what to say about a scenario ----------------------------------------------------------


def _views(outcome: PromptOutcome) -> dict[ReduceMode, EditorView]:
    # The prompt is printed in the heading; the views show the agent's side only.
    return {mode: reduce(outcome.events[1:], mode) for mode, _ in _VIEWS}


def _shown(view: EditorView) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return view.messages, view.thoughts


def _effect_key(entry: ToolCallEntry, records: Sequence[EffectRecord]) -> EffectRecord | str | None:
    """The call's effect key: from the update's `_meta` when the bridge sends it, else the
    ledger record with the same tool arguments."""
    meta = entry.meta
    nested = meta.get("acpBridge")
    key = meta.get("effectKey") or (nested.get("effectKey") if isinstance(nested, dict) else None)
    for record in records:
        if record.key == key:
            return record
        if key is None and entry.raw_input is not None:
            try:
                same = json.loads(record.arguments) == entry.raw_input
            except ValueError:
                same = False
            if same:
                return record
    return str(key) if key else None


def _workspace_files(workspace: Path) -> list[tuple[str, int, str]]:
    files = []
    for path in sorted(workspace.rglob("*")):
        if path.is_file() and path.name != "README.md":
            text = path.read_text(encoding="utf-8", errors="replace")
            files.append((path.relative_to(workspace).as_posix(), path.stat().st_size, text))
    return files


def _attempt_line(attempts: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for a in attempts:
        reason = f" ({a['reason']})" if a.get("reason") else ""
        parts.append(
            f"call {a.get('modelCall')}/attempt {a.get('attempt')} {a.get('state')}{reason}"
        )
    return "; ".join(parts) or "none reported"


# -- printing -------------------------------------------------------------------------------


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def good(self, text: str) -> str:
        return self._wrap("32", text)

    def bad(self, text: str) -> str:
        return self._wrap("31", text)

    def head(self, text: str) -> str:
        return self._wrap("1;36", text)


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line else line for line in text.splitlines())


def _print_scenario(
    index: int, total: int, item: _Played, effects: Sequence[EffectRecord], write: Write, s: _Style
) -> None:
    outcome = item.outcome
    title = f"{index}/{total}  {outcome.prompt}"
    write(s.head("━━ " + title + " " + "━" * max(3, _WIDTH - len(title) - 4)))
    write(s.dim("  " + builtin_scripts()[item.name].description))
    write("")
    if outcome.error is not None:
        error = outcome.error
        write(s.bad(f"  the turn failed: {error.get('message')} {error.get('data') or ''}"))
    views = _views(outcome)
    reference = views[ReduceMode.RESET_AWARE]
    # Paths in tool calls are absolute on the wire; relative ones read better here.
    prefix = str(item.workspace.resolve()) + "/"
    renders = {mode: views[mode].render(width=_WIDTH - 4).replace(prefix, "") for mode in views}
    if len(set(renders.values())) == 1:
        write(s.bold("  ▌ every editor shows the same (no retry, so no reset marker)"))
        write(_indent(renders[ReduceMode.RESET_AWARE]))
        write("")
    else:
        for mode, label in _VIEWS:
            if mode is ReduceMode.RESET_AWARE:
                verdict = s.good("✓ exactly the completed attempt's answer")
            elif _shown(views[mode]) == _shown(reference):
                verdict = s.good("✓ same text")
            else:
                verdict = s.bad("✗ shows the abandoned attempt's output")
            write(f"  {s.bold('▌ ' + label)}  {verdict}")
            write(_indent(renders[mode]))
            write("")
    mine = [r for r in effects if r.session_id == outcome.session_id]
    calls = reference.tool_calls
    write(f"  {s.bold('tools')}")
    if not calls:
        write("    none called")
    for call in calls:
        record = _effect_key(call, mine)
        key = record.key if isinstance(record, EffectRecord) else record
        ledger = (
            f", ledger: {record.tool} {record.state.value}"
            if isinstance(record, EffectRecord)
            else ""
        )
        effect = f"effect key {key[:12]}…{key[-6:]}{ledger}" if key else "no side effect, no key"
        write(f"    {call.title} [{call.kind}, {call.status}] · {effect}")
    for path, size, text in _workspace_files(item.workspace):
        first = text.splitlines()[0] if text else ""
        write(f"    workspace now has {path} ({size} bytes): {s.dim(repr(first))}")
    if mine:
        runs = ", ".join(f"{r.tool} {r.state.value}" for r in mine)
        write(f"    effect ledger for this session: {len(mine)} effect(s): {runs}")
    prompts = outcome.permission_prompts
    answers = ", ".join(f"{p.title}: {p.chosen_kind or 'cancelled'}" for p in prompts)
    write(
        f"  {s.bold('permission prompts')}  {len(prompts)}" + (f" ({answers})" if answers else "")
    )
    billed = outcome.billed_attempts
    write(f"  {s.bold('attempts billed')}  {billed}  {s.dim(_attempt_line(outcome.attempts))}")
    write(
        f"  {s.bold('stop reason')}  {outcome.stop_reason}  {s.dim(f'in {outcome.seconds:.2f} s')}"
    )
    write("")


def _print_run(run: _Run, write: Write, s: _Style) -> None:
    write(
        s.bold("acp-bridge-agent demo")
        + " · what editors show when a model stream breaks and is retried"
    )
    write(s.dim(f"spawned like an editor does: {' '.join(run.argv)}"))
    write(s.dim("scripted model: no API key, no network; temporary workspace and state directory"))
    write("")
    for index, item in enumerate(run.played, 1):
        _print_scenario(index, len(run.played), item, run.effects, write, s)
    write(
        s.dim(
            f"acp-bridge exited with status {run.returncode}; its log: "
            f"{len(run.stderr.splitlines())} stderr lines"
        )
    )


def _summary(run: _Run) -> dict[str, Any]:
    scenarios = []
    for item in run.played:
        outcome = item.outcome
        views = _views(outcome)
        reference = views[ReduceMode.RESET_AWARE]
        mine = [r for r in run.effects if r.session_id == outcome.session_id]
        calls = []
        for call in reference.tool_calls:
            record = _effect_key(call, mine)
            calls.append(
                {
                    "toolCallId": call.tool_call_id,
                    "title": call.title,
                    "kind": call.kind,
                    "status": call.status,
                    "effectKey": record.key if isinstance(record, EffectRecord) else record,
                }
            )
        scenarios.append(
            {
                "name": item.name,
                "prompt": outcome.prompt,
                "stopReason": outcome.stop_reason,
                "error": outcome.error,
                "seconds": round(outcome.seconds, 3),
                "views": {
                    mode.value: {
                        "messages": list(views[mode].messages),
                        "thoughts": list(views[mode].thoughts),
                        "text": views[mode].text(),
                    }
                    for mode, _ in _VIEWS
                },
                "resets": [{"attempt": r.attempt, "reason": r.reason} for r in reference.retries],
                "toolCalls": calls,
                "permissionPrompts": [
                    {"toolCallId": p.tool_call_id, "title": p.title, "answer": p.chosen_kind}
                    for p in outcome.permission_prompts
                ],
                "attempts": [dict(a) for a in outcome.attempts],
                "billedAttempts": outcome.billed_attempts,
                "effects": [
                    {"key": r.key, "tool": r.tool, "state": r.state.value, "step": r.step}
                    for r in mine
                ],
                "workspaceFiles": [
                    {"path": path, "bytes": size}
                    for path, size, _ in _workspace_files(item.workspace)
                ],
            }
        )
    return {
        "bridge": {
            "argv": list(run.argv),
            "exitCode": run.returncode,
            "agentInfo": dict(run.agent),
        },
        "scenarios": scenarios,
        "ok": _ok(run),
    }


def _ok(run: _Run) -> bool:
    return run.returncode == 0 and all(p.outcome.error is None for p in run.played)


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
    style = _Style(color and write is None and sys.stdout.isatty())
    with tempfile.TemporaryDirectory(prefix="acp-bridge-demo-") as tmp:
        root = Path(tmp)
        try:
            with anyio.fail_after(60):
                run = await _play(names, root, transcript if transcript is not None else [])
        except Exception as exc:  # the bridge died or hung: say so, no traceback
            out(f"acp-bridge-agent demo: the bridge did not complete the demo: {exc!r}")
            return 1
        if options.json:
            out(json.dumps(_summary(run), indent=2, ensure_ascii=False))
        else:
            _print_run(run, out, style)
    if not _ok(run) and not options.json:
        out(style.bad("the demo did not complete cleanly; acp-bridge's log follows:"))
        out(run.stderr)
    return 0 if _ok(run) else 1


def main_demo(argv: Sequence[str] | None = None) -> int:
    """`acp-bridge-agent demo [--scenario NAME]... [--no-color] [--json]`."""
    options = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))

    async def main() -> int:
        return await run_demo(options)

    return anyio.run(main)
