"""The Python search engine: the walk ripgrep would make, when ripgrep is not installed.

The walk goes down by directory descriptor, each entry opened with ``O_NOFOLLOW``
(`_beneath`), so a directory swapped for a link between listing and entering is not
followed; links are never searched, as ripgrep does without ``--follow``. Entries are
skipped by the rules of `_ignore`, files matched by `_search_scan`. It stops at the result
limit, or when `Stop.requested` is set (the tool call was cancelled).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from acp_bridge.tools._beneath import file_problem, open_child
from acp_bridge.tools._ignore import IgnoreRules, level_for
from acp_bridge.tools._search_scan import Pattern, scan_file

__all__ = ["SearchReport", "Stop", "walk_search"]


@dataclass(slots=True)
class Stop:
    requested: bool = False


@dataclass(slots=True)
class SearchReport:
    """What a search found and exactly what it did not search."""

    limit: int
    max_chars: int
    engine: str
    matches: list[tuple[str, int, str]] = field(default_factory=list)
    files: int = 0
    stopped: bool = False
    unreadable: list[str] = field(default_factory=list)  # "path (reason)"
    linked: list[str] = field(default_factory=list)  # matching files with several links

    def take(self, shown: str, fd: int, pattern: Pattern) -> bool:
        """Match the opened file `fd` (shown as `shown`); False if it is binary or special.

        The caller closes `fd`.
        """
        problem = file_problem(fd)
        if problem == "not a regular file":
            return False
        scan = scan_file(fd, pattern, self.limit - len(self.matches), self.max_chars)
        if not scan.lines:
            return not scan.binary
        if problem is not None:
            self.linked.append(shown)
            return True
        self.files += 1
        self.matches.extend((shown, number, text) for number, text in scan.lines)
        if len(self.matches) >= self.limit:
            self.stopped = True
        return True

    def could_not_read(self, shown: str, error: OSError) -> None:
        self.unreadable.append(f"{shown} ({error.strerror or error})")


def _join(prefix: str, name: str) -> str:
    return name if prefix in ("", ".") else f"{prefix}/{name}"


_MAX_DEPTH = 400  # deeper directories are reported as not searched, never silently dropped


def walk_search(
    fd: int,
    path: str,
    shown: str,
    rules: IgnoreRules,
    pattern: Pattern,
    report: SearchReport,
    stop: Stop,
    depth: int = 0,
) -> None:
    """Search the directory `fd` (`path` on disk, `shown` to the model); closes `fd`."""
    try:
        inner = rules.below(level_for(path, fd))
        with os.scandir(fd) as listing:
            entries = sorted(
                (entry.name, entry.is_dir(follow_symlinks=False))
                for entry in listing
                if entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False)
            )
        for name, is_dir in entries:
            if report.stopped or stop.requested:
                return
            child = f"{path}/{name}" if path != "/" else f"/{name}"
            if not inner.searched(child, name, is_dir):
                continue
            display = _join(shown, name)
            if is_dir and depth >= _MAX_DEPTH:
                report.unreadable.append(f"{display} (more than {_MAX_DEPTH} levels deep)")
                continue
            try:
                opened = open_child(fd, name, directory=is_dir)
            except OSError as error:
                report.could_not_read(display, error)
                continue
            if is_dir:
                walk_search(opened, child, display, inner, pattern, report, stop, depth + 1)
                continue
            try:
                report.take(display, opened, pattern)
            except OSError as error:
                report.could_not_read(display, error)
            finally:
                os.close(opened)
    except OSError as error:
        report.could_not_read(shown, error)
    finally:
        os.close(fd)
