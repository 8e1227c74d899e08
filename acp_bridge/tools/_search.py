"""`search_files {pattern, path?, glob?}`: a regular expression over the workspace's text files.

Results are ``path:line: text`` lines, paths as the model would write them. ACP has no
editor method for searching, so this reads the local disk (unsaved buffers are not seen).
The walk is confined: it starts at a checked path, never follows a symbolic link (a linked
file or directory is skipped) and skips VCS directories (``.git``, ``.hg``, ``.svn``).
Bounded: at most `search_max_matches` matches, long lines cut, files over
`search_max_file_bytes` and binary files skipped, output within `model_output_bytes`.
The walk runs in a worker thread; cancelling abandons it.
"""

from __future__ import annotations

import copy
import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

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
from acp_bridge.tools._paths import WorkspacePath, resolve_path
from acp_bridge.tools._text import ToolLimits, fenced, truncate_head, truncation_marker

__all__ = ["SearchFiles"]

_SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn"})
_MAX_FILES = 50_000

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
            "glob with '/' is matched against the path below the searched directory.",
        },
    },
    "required": ["pattern"],
}


@dataclass(slots=True)
class _Found:
    lines: list[str] = field(default_factory=list)
    files: int = 0
    stopped: bool = False


def _glob_matches(glob: str, relative: str) -> bool:
    if "/" not in glob:
        return fnmatch.fnmatchcase(relative.rsplit("/", 1)[-1], glob)
    if fnmatch.fnmatchcase(relative, glob):
        return True
    return glob.startswith("**/") and fnmatch.fnmatchcase(relative, glob[3:])


def _files(root: Path) -> list[tuple[Path, str]]:
    """Every regular file below `root` (links skipped), with its path relative to `root`."""
    if not root.is_dir():
        return [(root, root.name)] if root.is_file() and not root.is_symlink() else []
    found: list[tuple[Path, str]] = []
    for directory, dirnames, filenames in os.walk(root):
        # os.walk does not descend into linked directories; drop them and VCS data here.
        dirnames[:] = sorted(
            name
            for name in dirnames
            if name not in _SKIPPED_DIRECTORIES
            and not os.path.islink(os.path.join(directory, name))
        )
        base = Path(directory)
        for name in sorted(filenames):
            file = base / name
            if not file.is_symlink() and file.is_file():
                found.append((file, file.relative_to(root).as_posix()))
            if len(found) >= _MAX_FILES:
                return found
    return found


def _search(
    where: WorkspacePath, regex: re.Pattern[str], glob: str | None, limits: ToolLimits
) -> _Found:
    found = _Found()
    prefix = "" if where.display == "." else where.display + "/"
    for file, relative in _files(where.real):
        if glob is not None and not _glob_matches(glob, relative):
            continue
        try:
            if file.stat().st_size > limits.search_max_file_bytes:
                continue
            data = file.read_bytes()
        except OSError:
            continue
        if b"\x00" in data[:8192]:
            continue
        shown = where.display if file == where.real else prefix + relative
        matched = False
        for number, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
            if not regex.search(line):
                continue
            matched = True
            text = line.rstrip("\r")
            if len(text) > limits.search_max_line_chars:
                text = text[: limits.search_max_line_chars] + " [...]"
            found.lines.append(f"{shown}:{number}: {text}")
            if len(found.lines) >= limits.search_max_matches:
                found.stopped = True
                found.files += 1
                return found
        if matched:
            found.files += 1
    return found


@dataclass(frozen=True, slots=True)
class SearchFiles:
    """Search file contents with a regular expression."""

    limits: ToolLimits = field(default_factory=ToolLimits)

    name = "search_files"
    kind = ToolKind.SEARCH
    side_effect = False
    description = (
        "Search the contents of the workspace's text files with a regular expression. Returns "
        "matching lines as 'path:line: text'. Narrow it with `path` and `glob`."
    )

    @property
    def parameters(self) -> JsonObject:
        return copy.deepcopy(_PARAMETERS)

    def _arguments(
        self, arguments: JsonObject, ctx: ToolContext
    ) -> tuple[re.Pattern[str], WorkspacePath, str | None]:
        pattern = required_str(arguments, "pattern")
        try:
            regex = re.compile(pattern)
        except re.error as error:
            raise ToolError(f"pattern is not a valid regular expression: {error}") from None
        where = resolve_path(optional_str(arguments, "path") or ".", ctx)
        return regex, where, optional_str(arguments, "glob")

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        regex, where, glob = self._arguments(arguments, ctx)
        within = f" ({glob})" if glob else ""
        return ToolPreview(
            title=f"Search `{regex.pattern}` in {where.display}{within}",
            kind=self.kind,
            locations=(Location(str(where.path)),),
            permission_scope=self.name,
            scope_label="searching files",
        )

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        regex, where, glob = self._arguments(arguments, ctx)
        if not await anyio.Path(where.real).exists():
            raise ToolError(f"{where.display}: no such file or directory")
        found = await anyio.to_thread.run_sync(
            _search, where, regex, glob, self.limits, abandon_on_cancel=True
        )
        if not found.lines:
            text = "No matches."
        else:
            text = "\n".join(found.lines)
            count = f"{len(found.lines)} matches in {found.files} files"
            if found.stopped:
                count = f"stopped after {count}; narrow the pattern, path or glob"
            text += f"\n({count})"
        kept, omitted = truncate_head(text, self.limits.model_output_bytes)
        for_model = kept if not omitted else f"{kept}{truncation_marker(omitted)}"
        return ToolOutcome(
            ok=True,
            for_model=for_model,
            content=(TextContent(fenced(text)),),
            raw_output={
                "matches": len(found.lines),
                "files": found.files,
                "complete": not found.stopped,
            },
        )
