"""`run_command {command, timeout_seconds?}`: a shell command in the session's working directory.

The command line is run by a shell, `bash -c COMMAND` (`sh -c` where there is no bash; the
same program on both paths), in the session cwd: in an editor terminal when the client
advertised `terminal` (see `_terminal`), else as a local process (see `_process`). Both are
bounded by a timeout (default and maximum in `ToolLimits`) and an output limit.

Outcome: a command that exits, with any exit code, is `ok=True`: a non-zero exit is
information for the model (failing tests, grep without matches), and the model always reads
`[exit code N]` (TOOLS-015). A timed-out command is `ok=False`. The model's text keeps the
head and tail of the output with a truncation marker; the editor gets its own terminal, or
the whole captured output as text content when the command ran locally.

Permission memory: `command_prefix` gives the scope allow_always / reject_always remember.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.tools._args import optional_number, required_str
from acp_bridge.tools._base import (
    TerminalContent,
    TextContent,
    ToolContent,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolPreview,
)
from acp_bridge.tools._process import CommandResult, run_local
from acp_bridge.tools._terminal import run_in_terminal
from acp_bridge.tools._text import ToolLimits, fenced, truncate_middle

__all__ = ["RunCommand", "command_prefix", "shell_argv"]

logger = logging.getLogger(__name__)

# Shell syntax that chains, substitutes or redirects: such a command is remembered exactly.
_COMPOUND = re.compile(r"[;&|<>`\n\r]|\$\(")
_SUBCOMMAND = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")
# Runners whose subcommand names what actually runs ("npm run test", "uv run pytest").
_RUNNERS: dict[str, frozenset[str]] = {
    "npm": frozenset({"run", "run-script", "exec", "x"}),
    "pnpm": frozenset({"run", "exec", "dlx"}),
    "yarn": frozenset({"run", "exec", "dlx"}),
    "bun": frozenset({"run", "x"}),
    "uv": frozenset({"run", "tool"}),
    "poetry": frozenset({"run"}),
    "pipx": frozenset({"run"}),
}
_TITLE_CHARS = 80


def command_prefix(command: str) -> str:
    """What allow_always / reject_always remember for `command`.

    The program plus its first subcommand when there is one ("git status" for
    "git status --short", "cargo build" for "cargo build --release"), plus the script for
    runners ("npm run test", "uv run pytest"); a flag ends the prefix ("python" for
    "python -m pytest"). A command that chains, substitutes or redirects (``;``, ``&&``,
    ``|``, ``>``, backticks, ``$(``), or starts with a variable assignment, is its own
    prefix: remembering "git status" must never allow "git status && rm -rf ~".
    """
    exact = command.strip()
    if _COMPOUND.search(exact):
        return exact
    try:
        words = shlex.split(exact)
    except ValueError:
        return exact
    if not words:
        return ""
    if "=" in words[0]:
        return exact
    prefix = [words[0]]
    rest = words[1:]
    if rest and _SUBCOMMAND.fullmatch(rest[0]):
        prefix.append(rest[0])
        runs = _RUNNERS.get(os.path.basename(words[0]), frozenset())
        if rest[0] in runs and len(rest) > 1 and _SUBCOMMAND.fullmatch(rest[1]):
            prefix.append(rest[1])
    return " ".join(prefix)


def shell_argv(command: str) -> list[str]:
    """The program and arguments that run `command`: ``[bash, "-c", command]``."""
    shell = shutil.which("bash") or shutil.which("sh") or "/bin/sh"
    return [shell, "-c", command]


def _title(command: str) -> tuple[str, bool]:
    lines = command.strip().splitlines() or [""]
    shown = lines[0]
    shortened = len(lines) > 1 or len(shown) > _TITLE_CHARS
    if shortened:
        shown = shown[: _TITLE_CHARS - 1] + "…"
    return f"Run `{shown}`", shortened


def _ending(result: CommandResult, timeout: float) -> str:
    if result.timed_out:
        return f"[timed out after {timeout:g} s; the command was killed]"
    if result.signal is not None:
        return f"[killed by {result.signal}]"
    return f"[exit code {result.exit_code}]"


@dataclass(frozen=True, slots=True)
class RunCommand:
    """Run a shell command, with a timeout and an output limit."""

    limits: ToolLimits = field(default_factory=ToolLimits)

    name = "run_command"
    ignores_unknown_arguments = True  # EFFECT-CANON-001: other keys cannot matter
    kind = ToolKind.EXECUTE
    side_effect = True

    @property
    def description(self) -> str:
        return (
            "Run a shell command (bash -c) in the working directory, without input. Returns "
            "stdout and stderr together and the exit code; long output keeps its start and "
            f"end. Timeout: {self.limits.default_timeout_seconds:g} s unless timeout_seconds "
            f"says otherwise (at most {self.limits.max_timeout_seconds:g} s)."
        )

    @property
    def parameters(self) -> JsonObject:
        return {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The shell command line to run."},
                "timeout_seconds": {
                    "type": "number",
                    "description": "Seconds before the command is killed (default "
                    f"{self.limits.default_timeout_seconds:g}, at most "
                    f"{self.limits.max_timeout_seconds:g}).",
                    # The same command with or without its default keys the same effect
                    # (EFFECT-CANON-001).
                    "default": self.limits.default_timeout_seconds,
                },
            },
            "required": ["command"],
        }

    def _arguments(self, arguments: JsonObject) -> tuple[str, float]:
        command = required_str(arguments, "command")
        if not command.strip():
            raise ToolError("argument `command` must not be blank")
        timeout = optional_number(arguments, "timeout_seconds")
        if timeout is None:
            timeout = self.limits.default_timeout_seconds
        return command, min(timeout, self.limits.max_timeout_seconds)

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        command, _ = self._arguments(arguments)
        title, shortened = _title(command)
        prefix = command_prefix(command)
        shown: tuple[ToolContent, ...] = (TextContent(fenced(command)),) if shortened else ()
        return ToolPreview(
            title=title,
            kind=self.kind,
            content=shown,
            permission_scope=f"{self.name}:{prefix}",
            scope_label=prefix,
            # A command is not confined to the workspace the way file tools are.
            inside_workspace=False,
        )

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        command, timeout = self._arguments(arguments)
        argv = shell_argv(command)
        logger.debug("run_command %r (effect %s)", command, ctx.effect_key)
        editor = ctx.editor
        terminal_id: str | None = None
        if editor is not None and editor.capabilities.terminal:
            terminal_id, result = await run_in_terminal(
                editor,
                ctx,
                argv[0],
                argv[1:],
                time_limit=timeout,
                output_limit=self.limits.command_capture_bytes,
            )
        else:
            result = await run_local(
                argv,
                cwd=ctx.cwd,
                time_limit=timeout,
                capture_bytes=self.limits.command_capture_bytes,
            )
        return self._outcome(result, timeout, terminal_id)

    def _outcome(
        self, result: CommandResult, timeout: float, terminal_id: str | None
    ) -> ToolOutcome:
        ending = _ending(result, timeout)
        output = result.output
        if terminal_id is not None and result.output_truncated:
            # The editor keeps the end of the output and drops its start.
            output = "[... earlier output truncated ...]\n" + output
        body = truncate_middle(output, self.limits.model_output_bytes) if output else "(no output)"
        separator = "" if body.endswith("\n") else "\n"
        shown: tuple[ToolContent, ...]
        if terminal_id is not None:
            shown = (TerminalContent(terminal_id),)
        else:
            shown = (TextContent(fenced(output) + "\n" + ending if output else ending),)
        return ToolOutcome(
            ok=not result.timed_out,
            for_model=f"{body}{separator}{ending}",
            content=shown,
            raw_output={
                "exit_code": result.exit_code,
                "signal": result.signal,
                "timed_out": result.timed_out,
                "terminal_id": terminal_id,
            },
        )
