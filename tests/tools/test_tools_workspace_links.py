"""Hard links, links swapped in after the check, atomic writes: the file tools stay inside.

Issue 11 item 5: a hard link to an outside file was followed by read, write and edit, and a
directory swapped for a symbolic link between `resolve_path` and the I/O led out. Here the
swap is made deterministically, right after the check; the racing version is
test_tools_workspace_race.py.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_bridge.errors import ToolError
from acp_bridge.tools import (
    EditFile,
    ListDirectory,
    ReadFile,
    ToolContext,
    WriteFile,
    _edit,
    _files,
    _listing,
    _paths,
)

pytestmark = pytest.mark.anyio


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every entry below `root` with its bytes (None for a directory)."""
    return {
        path.relative_to(root).as_posix(): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.fixture
def linked(workspace: Path) -> Path:
    """`innocent.txt` in the workspace: a hard link to the outside secret."""
    os.link(workspace.parent / "outside" / "secret.txt", workspace / "innocent.txt")
    return workspace / "innocent.txt"


WRITES = [
    (WriteFile(), {"path": "innocent.txt", "content": "overwritten\n"}),
    (EditFile(), {"path": "innocent.txt", "old_text": "top secret", "new_text": "edited"}),
]


@pytest.mark.requirement("WS-LINK-001")
@pytest.mark.parametrize("through_editor", [False, True], ids=["local", "editor-fs"])
@pytest.mark.parametrize(("tool", "arguments"), WRITES, ids=["write_file", "edit_file"])
async def test_a_file_with_several_hard_links_is_not_written(
    workspace: Path, linked: Path, make_ctx, make_editor, tool, arguments, through_editor: bool
) -> None:
    editor = make_editor(read=False, write=True) if through_editor else None
    outside = _tree(workspace.parent / "outside")
    with pytest.raises(ToolError) as refused:
        await tool.run(arguments, make_ctx(editor))
    assert str(refused.value).startswith(
        "innocent.txt has 2 hard links, and one may be a file outside the workspace: it is not "
    )
    assert _tree(workspace.parent / "outside") == outside
    assert _text(linked) == "top secret\n"
    assert not refused.value.may_have_changed
    assert editor is None or editor.calls == []


@pytest.mark.requirement("WS-LINK-002")
@pytest.mark.parametrize("through_editor", [False, True], ids=["local", "editor-fs"])
async def test_a_file_with_several_hard_links_is_not_read(
    linked: Path, make_ctx, make_editor, through_editor: bool
) -> None:
    editor = make_editor(read=True, write=False) if through_editor else None
    with pytest.raises(ToolError, match=r"innocent\.txt has 2 hard links") as refused:
        await ReadFile().run({"path": "innocent.txt"}, make_ctx(editor))
    assert "top secret" not in str(refused.value)
    assert "it is not read (a file with one link is)" in str(refused.value)
    assert editor is None or editor.calls == []


@pytest.mark.requirement("WS-LINK-002")
async def test_a_fifo_is_refused_without_blocking(workspace: Path, make_ctx) -> None:
    os.mkfifo(workspace / "pipe")
    with pytest.raises(ToolError, match="pipe is not a regular file"):
        await ReadFile().run({"path": "pipe"}, make_ctx())


def _swap_after_check(
    monkeypatch: pytest.MonkeyPatch, module: object, directory: Path, outside: Path
) -> None:
    """Make `module`'s path check pass, then put a link to `outside` where `directory` was."""

    def check_then_swap(requested: str, ctx: ToolContext) -> _paths.WorkspacePath:
        where = _paths.resolve_path(requested, ctx)
        if not directory.is_symlink():
            directory.rename(directory.with_name(".parked"))
            directory.symlink_to(outside, target_is_directory=True)
        return where

    monkeypatch.setattr(module, "resolve_path", check_then_swap)


SWAPPED: list[tuple[object, Callable[[], object], dict[str, str], str]] = [
    (_files, ReadFile, {"path": "d/sub/secret.txt"}, "read"),
    (_files, WriteFile, {"path": "d/sub/secret.txt", "content": "mine\n"}, "read"),
    (_files, WriteFile, {"path": "d/sub/new/file.txt", "content": "mine\n"}, "read"),
    (_edit, EditFile, {"path": "d/sub/secret.txt", "old_text": "secret", "new_text": "X"}, "read"),
    (_listing, ListDirectory, {"path": "d/sub"}, "listed"),
    (_listing, ListDirectory, {"path": "d"}, "listed"),
]


@pytest.mark.requirement("WS-RACE-001")
@pytest.mark.parametrize(
    ("module", "tool", "arguments", "action"),
    SWAPPED,
    ids=["read", "write", "write-new-dirs", "edit", "list-below", "list"],
)
async def test_a_directory_swapped_for_a_link_after_the_check_leads_nowhere(
    workspace: Path, make_ctx, monkeypatch: pytest.MonkeyPatch, module, tool, arguments, action
) -> None:
    outside = workspace.parent / "outside"
    (outside / "sub").mkdir()
    (outside / "sub" / "secret.txt").write_text("top secret\n")
    (workspace / "d" / "sub").mkdir(parents=True)
    (workspace / "d" / "sub" / "secret.txt").write_text("inside secret\n")
    before = _tree(outside)
    _swap_after_check(monkeypatch, module, workspace / "d", outside)
    with pytest.raises(ToolError) as refused:
        await tool().run(arguments, make_ctx())
    assert str(refused.value) == (
        f"d is a symbolic link now (it changed after the path was checked; nothing was {action})"
    )
    assert _tree(outside) == before


@pytest.mark.requirement("WS-WRITE-001")
async def test_a_write_replaces_the_file_atomically_keeping_its_mode(
    workspace: Path, make_ctx
) -> None:
    notes = workspace / "notes.txt"
    notes.chmod(0o640)
    await WriteFile().run({"path": "notes.txt", "content": "new\n"}, make_ctx())
    await EditFile().run({"path": "notes.txt", "old_text": "new", "new_text": "newer"}, make_ctx())
    assert _text(notes) == "newer\n"
    assert stat.S_IMODE(notes.stat().st_mode) == 0o640
    assert sorted(os.listdir(workspace)) == ["notes.txt", "src"]


@pytest.mark.requirement("WS-WRITE-001")
async def test_a_write_that_fails_leaves_the_file_as_it_was(
    workspace: Path, make_ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write

    def disk_full(fd: int, data: bytes | memoryview) -> int:
        if bytes(data[:11]) == b"NEW CONTENT":
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", disk_full)
    with pytest.raises(ToolError) as failed:
        await WriteFile().run({"path": "notes.txt", "content": "NEW CONTENT\n"}, make_ctx())
    assert str(failed.value) == (
        "cannot write notes.txt: No space left on device; the file is unchanged"
    )
    assert not failed.value.may_have_changed
    assert _text(workspace / "notes.txt") == "one\ntwo\nthree\n"
    assert sorted(os.listdir(workspace)) == ["notes.txt", "src"]


@pytest.mark.requirement("WS-RACE-001")
async def test_a_link_inside_the_workspace_still_works(workspace: Path, make_ctx) -> None:
    (workspace / "alias").symlink_to(workspace / "src", target_is_directory=True)
    ctx = make_ctx()
    await WriteFile().run({"path": "alias/app.py", "content": "x = 2\n"}, ctx)
    outcome = await ReadFile().run({"path": "alias/app.py"}, ctx)
    assert outcome.for_model == "x = 2\n"
    assert (workspace / "alias").is_symlink()
    listing = await ListDirectory().run({"path": "."}, ctx)
    assert listing.for_model == "alias@\nnotes.txt\nsrc/"


@pytest.mark.requirement("WS-RACE-001")
@pytest.mark.parametrize(
    ("module", "tool", "arguments"),
    [
        (_files, WriteFile, {"path": "d/sub/secret.txt", "content": "mine\n"}),
        (_files, WriteFile, {"path": "d/sub/new/file.txt", "content": "mine\n"}),
        (_edit, EditFile, {"path": "d/sub/secret.txt", "old_text": "secret", "new_text": "X"}),
    ],
    ids=["write", "write-new-dirs", "edit"],
)
async def test_a_directory_swapped_for_a_link_after_the_read_is_not_written_through(
    workspace: Path, make_ctx, monkeypatch: pytest.MonkeyPatch, module, tool, arguments
) -> None:
    outside = workspace.parent / "outside"
    (outside / "sub").mkdir()
    (outside / "sub" / "secret.txt").write_text("top secret\n")
    (workspace / "d" / "sub").mkdir(parents=True)
    (workspace / "d" / "sub" / "secret.txt").write_text("inside secret\n")
    before = _tree(outside)
    real_write = module.write_text

    async def swap_then_write(
        ctx: ToolContext, where: _paths.WorkspacePath, text: str, **checks: Any
    ) -> None:
        (workspace / "d").rename(workspace / ".parked")
        (workspace / "d").symlink_to(outside, target_is_directory=True)
        await real_write(ctx, where, text, **checks)

    monkeypatch.setattr(module, "write_text", swap_then_write)
    with pytest.raises(ToolError) as refused:
        await tool().run(arguments, make_ctx())
    assert str(refused.value) == (
        "d is a symbolic link now (it changed after the path was checked; nothing was written)"
    )
    assert _tree(outside) == before
