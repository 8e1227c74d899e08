"""Workspace confinement: every path a tool touches lies inside the session's roots.

The roots are the session cwd and its additional directories (`ToolContext.roots`, cwd
first). A path from the model may be relative to the cwd or absolute. It is accepted only
when the file it really names lies inside a root:

- ``..`` is resolved lexically first (as editors and ``cd`` do), so the path sent to the
  editor and the path checked name the same file;
- then every symbolic link is resolved (`os.path.realpath`, also through parts that do not
  exist yet, and through a dangling link): a link inside pointing out, a path through a
  linked directory leading out, or a new file under such a directory is refused;
- containment is compared by path components (``/w2`` is not inside ``/w``).

The same check guards the editor's `fs/*` (the editor's file system is not a way out,
TOOLS-006). A refused path raises `ToolError` with a message the model can read (TOOLS-005).
The check names the root the path lies in and the path below it (`root`, `relative`): the
local disk is then asked for that path one component at a time by directory handle, so a
link swapped in between the check and the I/O leads nowhere (`_local`, WS-RACE-001).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from acp_bridge.errors import ToolError
from acp_bridge.tools._base import ToolContext

__all__ = ["WorkspacePath", "real_roots", "resolve_path"]


@dataclass(frozen=True, slots=True)
class WorkspacePath:
    """A path the model asked for, checked to lie inside the workspace.

    Attributes:
        requested: the path as the model wrote it.
        path: absolute, ``..`` removed: what the editor is sent and what `locations` show.
        real: every link resolved: what the local disk is asked for.
        display: relative to the cwd when inside it (``src/app.py``), else absolute.
        root: the session root (links resolved) that `real` lies in.
        relative: `real` below `root`, POSIX form, ``""`` for the root itself.
    """

    requested: str
    path: Path
    real: Path
    display: str
    root: Path
    relative: str


def real_roots(ctx: ToolContext) -> tuple[Path, ...]:
    """The session's roots with links resolved, cwd first, without repeats."""
    roots: list[Path] = []
    for root in (ctx.cwd, *ctx.roots):
        real = Path(os.path.realpath(root))
        if real not in roots:
            roots.append(real)
    return tuple(roots)


def _display(path: Path, cwd: Path) -> str:
    if path == cwd:
        return "."
    if path.is_relative_to(cwd):
        return path.relative_to(cwd).as_posix()
    return str(path)


def _realpath(path: Path, requested: str) -> Path:
    # A link replaced while it is resolved makes realpath's readlink fail (EINVAL): the path
    # is changing under the check; asked again, it is stable or still refused (WS-RACE-001).
    for _ in range(3):
        try:
            return Path(os.path.realpath(path))
        except OSError:
            continue
    raise ToolError(f"path {requested} keeps changing while it is checked; try again later")


def resolve_path(requested: str, ctx: ToolContext) -> WorkspacePath:
    """Check `requested` against the session roots (TOOLS-005); raise `ToolError` if outside."""
    if "\x00" in requested:
        raise ToolError(f"path {requested!r} contains a NUL character")
    cwd = Path(os.path.normpath(ctx.cwd))
    path = Path(os.path.normpath(cwd / (requested or ".")))
    real = _realpath(path, requested)
    roots = real_roots(ctx)
    inside = [root for root in roots if real.is_relative_to(root)]
    if not inside:
        allowed = ", ".join(str(root) for root in roots)
        through_link = "" if real == path else f" (it resolves to {real} through a symbolic link)"
        raise ToolError(
            f"path {requested} is outside the workspace {cwd}{through_link}; "
            f"allowed roots: {allowed}"
        )
    root = inside[0]
    relative = "" if real == root else real.relative_to(root).as_posix()
    return WorkspacePath(requested, path, real, _display(path, cwd), root, relative)
