"""`acp-bridge`: the command editors launch. Parses options, claims stdio, serves ACP.

Nothing here writes to stdout: while serving, fd 1 belongs to the protocol (see
`acp_bridge.wire.open_stdio`). Errors before serving go to stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from collections.abc import Sequence
from typing import Any

from acp_bridge import __version__
from acp_bridge.cli._setting_table import setting
from acp_bridge.cli._settings import PROVIDER_KINDS, SettingsError, resolve

__all__ = ["SUBCOMMANDS", "TTY_HINT", "build_parser", "main"]

SUBCOMMANDS = ("login", "logout", "doctor")
TTY_HINT = (
    "acp-bridge: acp-bridge is an ACP agent an editor launches over stdio; "
    "try `acp-bridge-agent demo`, see README "
    "(serving on this terminal anyway: type JSON-RPC lines, Ctrl-D to end)"
)

_log = logging.getLogger("acp_bridge")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-bridge-agent",
        description="A retry-safe Agent Client Protocol (ACP v1) agent over stdio. "
        "Editors launch it; it streams a model's answer and runs its tool calls "
        "through the editor. With no model configured it plays built-in scripts.",
        epilog="Subcommands: `acp-bridge-agent demo` shows a broken stream retried, as "
        "editors see it; `acp-bridge-agent conformance` grades an editor's reducer or client "
        "against the kit; `acp-bridge-agent login` / `logout` store or remove a provider's API "
        "key; `acp-bridge-agent doctor` checks the configuration, the key, the provider and "
        "the state directory. Settings: flags over ACP_BRIDGE_* environment variables over the "
        "config file.",
    )
    parser.add_argument(
        "command",
        nargs="?",
        choices=SUBCOMMANDS,
        help="login, logout or doctor (without one: serve ACP on stdio)",
    )
    parser.add_argument("--version", action="version", version=f"acp-bridge {__version__}")
    parser.add_argument(
        "--provider", choices=PROVIDER_KINDS, help="model provider (default scripted)"
    )
    parser.add_argument("--model", help="model id (provider default when omitted)")
    parser.add_argument(
        "--models", help="comma-separated model ids offered in the editor's model picker"
    )
    parser.add_argument(
        "--base-url", dest="base_url", help="provider endpoint, e.g. http://127.0.0.1:11434/v1"
    )
    parser.add_argument("--script", help="play this scripted-stream file as the default script")
    parser.add_argument(
        "--config", help="TOML config file (default: ~/.config/acp-bridge/config.toml)"
    )
    parser.add_argument(
        "--state-dir", dest="state_dir", help="where the effect ledger and sessions live"
    )
    parser.add_argument(
        "--trace", help="append every JSON-RPC message and provider event to FILE (NDJSON)"
    )
    parser.add_argument(
        "--inject-fault",
        dest="inject_fault",
        help="break the provider's stream on purpose, e.g. after-events:5, in-tool-call, "
        "before-finish (first attempt only unless @attempts=N)",
    )
    parser.add_argument(
        "--system-prompt",
        dest="system_prompt",
        help="system instruction for the model (replaces the built-in one)",
    )
    parser.add_argument(
        "--append-system-prompt",
        dest="append_system_prompt",
        help="text added after the system instruction (project instructions follow it)",
    )
    parser.add_argument(
        "--log-level",
        dest="log_level",
        choices=["debug", "info", "warning", "error"],
        help="stderr log level",
    )
    parser.add_argument(
        "--max-line-bytes", dest="max_line_bytes", type=int, help="largest accepted message"
    )
    parser.add_argument(
        "--max-wait",
        dest="max_wait",
        type=float,
        help="seconds a model call may wait without progress, retries included (default 180)",
    )
    parser.add_argument(
        "--context-window",
        dest="context_window",
        type=int,
        help="the model's context window in tokens (default: known models, else 128000)",
    )
    parser.add_argument(
        "--reasoning-effort",
        dest="reasoning_effort",
        choices=setting("reasoning_effort").choices,
        help="the sessions' default reasoning effort (default: default, none sent)",
    )
    parser.add_argument(
        "--fetch-models",
        dest="fetch_models",
        choices=setting("fetch_models").choices,
        help="offer the provider's model list in the model picker (default yes; no: none)",
    )
    parser.add_argument(
        "--merge-chunks",
        dest="merge_chunks",
        choices=setting("merge_chunks").choices,
        help="no: write every text chunk as its own update (default yes: merge queued ones)",
    )
    parser.add_argument(
        "--compaction-threshold",
        dest="compaction_threshold",
        type=float,
        help="compact once the context reaches this fraction of the window (default 0.8)",
    )
    parser.add_argument(
        "--compaction-keep-turns",
        dest="compaction_keep_turns",
        type=int,
        help="recent prompt turns a compaction keeps whole (default 2)",
    )
    return parser


def _configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("acp-bridge %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "demo":
        from acp_bridge.cli._demo import main_demo

        return main_demo(args[1:])
    if args and args[0] == "conformance":
        from acp_bridge.conformance import main_conformance

        return main_conformance(args[1:])
    # STARTUP-003: no collection while the start path loads; serving turns it back on once
    # the agent is loaded (`cli._run._frozen`), and every other way out of here does too.
    gc.disable()
    try:
        return _main(args)
    finally:
        gc.enable()


def _main(args: list[str]) -> int:
    options = build_parser().parse_args(args)
    flags: dict[str, Any] = {
        k: v for k, v in vars(options).items() if k not in ("config", "command")
    }
    try:
        settings = resolve(flags, config_path=options.config)
    except SettingsError as exc:
        if options.command == "doctor":
            from acp_bridge.cli._doctor import report_settings_error

            return report_settings_error(exc)
        print(f"acp-bridge: {exc}", file=sys.stderr)
        return 2
    if options.command == "login":
        from acp_bridge.cli._login import main_login

        return main_login(settings)
    if options.command == "logout":
        from acp_bridge.cli._login import main_logout

        return main_logout(settings)
    if options.command == "doctor":
        from acp_bridge.cli._doctor import main_doctor

        return main_doctor(settings)
    for note in settings.notes:
        print(f"acp-bridge: {note}", file=sys.stderr)
    if _on_terminal():
        print(TTY_HINT, file=sys.stderr)
    _configure_logging(settings.log_level)
    # STARTUP-008: the serving layers' dataclasses take their generated code from the cache
    # (compiling it was some 40% of the start), so it is installed before they are imported.
    from acp_bridge.cli._code_cache import install

    install()
    from acp_bridge.cli._run import run

    return run(settings)


def _on_terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
