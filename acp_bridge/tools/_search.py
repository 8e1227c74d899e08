"""`search_files {pattern, path?, glob?}`: a regular expression over the workspace, like ripgrep.

Results are ``path:line: text`` lines, paths as the model would write them, sorted by path.
ACP has no editor method for searching, so this reads the local disk (unsaved buffers are
not seen). Which files are searched is decided as ripgrep decides it (`_ignore`): files
ignored by ``.gitignore``, ``.ignore``, ``.rgignore`` or git's excludes, hidden files and
binary files are skipped, links are not followed; the `glob` argument overrides the ignore
rules for what it matches. ripgrep does the walk when it is installed (`_search_rg`), else
the Python engine (`_search_walk`) makes the same walk; either way every line shown is read
through a descriptor opened beneath the searched directory with no link followed, and a
file with several hard links is not shown (issue 11 item 5).

Never silently incomplete (PERF-SEARCH-001): stopping at `search_max_matches`, unreadable
entries and hidden hard-linked matches set ``complete: false`` and are named in the text.
"""

from __future__ import annotations

import copy
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio
import anyio.to_thread

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.tools._args import optional_str, required_str
from acp_bridge.tools._base import (
    Location,
    TextContent,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolPreview,
)
from acp_bridge.tools._beneath import open_beneath
from acp_bridge.tools._ignore import IgnoreRules
from acp_bridge.tools._paths import WorkspacePath, real_roots, resolve_path
from acp_bridge.tools._search_rg import ripgrep_binary, ripgrep_search
from acp_bridge.tools._search_scan import Pattern
from acp_bridge.tools._search_walk import SearchReport, Stop, walk_search
from acp_bridge.tools._text import ToolLimits, fenced, truncate_head, truncation_marker

__all__ = ["SearchFiles"]

_NAMED = 10  # unreadable or linked files named in the text; the rest are counted
_SKIPPED = "not searched, as ripgrep does: ignored, hidden and binary files"

_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Regular expression (Python syntax) matched against each line.",
        },
        "path": {
            "type": "string",
            "description": "Directory or file to search (default: the working directory).",
        },
        "glob": {
            "type": "string",
            "description": "Only search files whose name matches this glob, e.g. '*.py'; a "
            "glob with '/' is matched against the path below the searched directory. "
            "Files it matches are searched even when ignored or hidden.",
        },
    },
    "required": ["pattern"],
}


def _named(label: str, items: list[str]) -> str:
    shown = ", ".join(items[:_NAMED])
    more = f" and {len(items) - _NAMED} more" if len(items) > _NAMED else ""
    return f"({label}: {shown}{more})"


def _text(report: SearchReport, skipped: str) -> str:
    """The matches, then one line of what was found and not searched, then what failed."""
    lines = [f"{path}:{number}: {text}" for path, number, text in sorted(report.matches)]
    summary = [f"{len(report.matches)} matches in {report.files} files"] if lines else []
    if report.stopped:
        summary[0] = f"stopped after {summary[0]}: the rest was not searched"
        summary.append("narrow the pattern, path or glob")
    if skipped:
        summary.append(skipped)
    if not lines:
        lines.append("No matches.")
    if summary:
        lines.append(f"({'; '.join(summary)})")
    if report.unreadable:
        lines.append(_named("could not be read, not searched", report.unreadable))
    if report.linked:
        lines.append(_named("matches not shown from files with several hard links", report.linked))
    return "\n".join(lines)


def _root_of(where: WorkspacePath, ctx: ToolContext) -> tuple[Path, str]:
    for root in real_roots(ctx):
        if where.real.is_relative_to(root):
            return root, where.real.relative_to(root).as_posix()
    raise ToolError(f"{where.display} is outside the workspace")  # resolve_path checked it


@dataclass(frozen=True, slots=True)
class SearchFiles:
    """Search file contents with a regular expression."""

    limits: ToolLimits = field(default_factory=ToolLimits)
    # "auto": ripgrep when installed, else the Python engine (same results, PERF-SEARCH-002).
    engine: Literal["auto", "python"] = "auto"

    name = "search_files"
    ignores_unknown_arguments = True  # EFFECT-CANON-001: other keys cannot matter
    kind = ToolKind.SEARCH
    side_effect = False
    description = (
        "Search the contents of the workspace's text files with a regular expression, as "
        "ripgrep does: files ignored by .gitignore/.ignore, hidden and binary files are "
        "skipped. Returns matching lines as 'path:line: text'. Narrow it with `path` and `glob`."
    )

    @property
    def parameters(self) -> JsonObject:
        return copy.deepcopy(_PARAMETERS)

    def _arguments(
        self, arguments: JsonObject, ctx: ToolContext
    ) -> tuple[Pattern, WorkspacePath, str | None]:
        pattern = required_str(arguments, "pattern")
        try:
            regex = Pattern.compile(pattern)
        except re.error as error:
            raise ToolError(f"pattern is not a valid regular expression: {error}") from None
        where = resolve_path(optional_str(arguments, "path") or ".", ctx)
        return regex, where, optional_str(arguments, "glob")

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        regex, where, glob = self._arguments(arguments, ctx)
        within = f" ({glob})" if glob else ""
        return ToolPreview(
            title=f"Search `{regex.line.pattern}` in {where.display}{within}",
            kind=self.kind,
            locations=(Location(str(where.path)),),
            permission_scope=self.name,
            scope_label="searching files",
        )

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        pattern, glob = required_str(arguments, "pattern"), optional_str(arguments, "glob")
        compiled, where, _ = self._arguments(arguments, ctx)
        report = SearchReport(
            self.limits.search_max_matches, self.limits.search_max_line_chars, "python"
        )
        root, relative = _root_of(where, ctx)
        try:
            fd = open_beneath(root, relative, directory=False)
        except FileNotFoundError:
            raise ToolError(f"{where.display}: no such file or directory") from None
        except OSError as error:
            raise ToolError(f"{where.display}: cannot be searched ({error.strerror})") from None
        stop = Stop()
        try:
            skipped = ""
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                searched = await anyio.to_thread.run_sync(report.take, where.display, fd, compiled)
                if not searched:
                    skipped = f"{where.display} is a binary or special file: not searched"
            else:
                skipped = _SKIPPED
                binary = ripgrep_binary() if self.engine != "python" else None
                if binary is not None:
                    report.engine = "ripgrep"
                    searched = await ripgrep_search(
                        binary, where.real, fd, where.display, pattern, glob, compiled, report
                    )
                    if not searched:  # a pattern ripgrep cannot compile: Python searches
                        report.engine = "python"
                if report.engine == "python":
                    walked, fd = fd, -1
                    await anyio.to_thread.run_sync(
                        _walk,
                        walked,
                        where,
                        glob,
                        compiled,
                        report,
                        stop,
                        abandon_on_cancel=True,
                    )
        finally:
            stop.requested = True
            if fd >= 0:
                os.close(fd)
        text = _text(report, skipped)
        kept, omitted = truncate_head(text, self.limits.model_output_bytes)
        for_model = kept if not omitted else f"{kept}{truncation_marker(omitted)}"
        return ToolOutcome(
            ok=True,
            for_model=for_model,
            content=(TextContent(fenced(text)),),
            raw_output={
                "matches": len(report.matches),
                "files": report.files,
                "complete": not (report.stopped or report.unreadable or report.linked),
                "engine": report.engine,
            },
        )


def _walk(
    fd: int,
    where: WorkspacePath,
    glob: str | None,
    pattern: Pattern,
    report: SearchReport,
    stop: Stop,
) -> None:
    rules = IgnoreRules.for_root(where.real, glob)
    walk_search(fd, str(where.real), where.display, rules, pattern, report, stop)
