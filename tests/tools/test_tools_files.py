"""read_file / write_file / edit_file through the editor's fs, the local disk, or a mix."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_bridge.errors import PeerError, PeerGone, ToolError
from acp_bridge.tools import (
    DiffContent,
    EditFile,
    Location,
    ReadFile,
    ToolKind,
    ToolLimits,
    WriteFile,
)

pytestmark = pytest.mark.anyio

SCRIPT = [
    (WriteFile(), {"path": "pkg/deep/new.py", "content": "x = 1\n"}),
    (EditFile(), {"path": "src/app.py", "old_text": "return 1", "new_text": "return 2"}),
    (EditFile(), {"path": "notes.txt", "old_text": "two\n", "new_text": "two\n2.5\n"}),
    (WriteFile(), {"path": "notes.txt", "content": "rewritten\n"}),
    (ReadFile(), {"path": "src/app.py"}),
]


def _snapshot(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


async def _play(ctx) -> list[str]:
    seen = []
    for tool, arguments in SCRIPT:
        await tool.preview(arguments, ctx)
        outcome = await tool.run(arguments, ctx)
        assert outcome.ok
        seen.append(outcome.for_model)
    return seen


@pytest.mark.requirement("TOOLS-001")
@pytest.mark.requirement("TOOLS-002")
@pytest.mark.parametrize(
    ("read", "write", "expected_methods"),
    [
        (True, True, {"fs/read_text_file", "fs/write_text_file"}),
        (True, False, {"fs/read_text_file"}),
        (False, True, {"fs/write_text_file"}),
        (False, False, set()),
    ],
    ids=["editor-fs", "editor-read-only", "editor-write-only", "editor-without-fs"],
)
async def test_same_operations_give_the_same_file_changes(
    workspace: Path, make_ctx, make_editor, read, write, expected_methods
) -> None:
    editor = make_editor(read=read, write=write, terminal=False)
    seen = await _play(make_ctx(editor))
    assert _snapshot(workspace) == {
        "notes.txt": "rewritten\n",
        "pkg/deep/new.py": "x = 1\n",
        "src/app.py": "def main():\n    return 2\n",
    }
    assert seen[-1] == "def main():\n    return 2\n"
    assert set(editor.methods()) == expected_methods  # and nothing unadvertised (the fake asserts)
    if write:
        written = [path for method, path in editor.calls if method == "fs/write_text_file"]
        assert written == [
            str(workspace / "pkg/deep/new.py"),
            str(workspace / "src/app.py"),
            str(workspace / "notes.txt"),
            str(workspace / "notes.txt"),
        ]


async def test_without_any_editor_the_disk_is_used(workspace: Path, make_ctx) -> None:
    await _play(make_ctx(None))
    assert (workspace / "pkg/deep/new.py").read_text() == "x = 1\n"


@pytest.mark.requirement("TOOLS-002")
async def test_unsaved_buffer_wins_over_the_disk(workspace: Path, make_ctx, make_editor) -> None:
    app = str(workspace / "src" / "app.py")
    editor = make_editor(buffers={app: "def main():\n    return 'unsaved'\n"})
    ctx = make_ctx(editor)
    read = await ReadFile().run({"path": "src/app.py"}, ctx)
    assert "unsaved" in read.for_model
    edit = {"path": "src/app.py", "old_text": "'unsaved'", "new_text": "'saved'"}
    preview = await EditFile().preview(edit, ctx)
    assert preview.content == (
        DiffContent(
            path=app,
            old_text="def main():\n    return 'unsaved'\n",
            new_text="def main():\n    return 'saved'\n",
        ),
    )
    await EditFile().run(edit, ctx)
    assert (workspace / "src" / "app.py").read_text() == "def main():\n    return 'saved'\n"
    # The disk alone never had that text: without the editor the same edit fails.
    (workspace / "src" / "app.py").write_text("def main():\n    return 1\n")
    with pytest.raises(ToolError, match="not found"):
        await EditFile().run(edit, make_ctx(None))


@pytest.mark.requirement("TOOLS-002")
async def test_read_only_editor_reads_buffer_but_writes_disk(
    workspace: Path, make_ctx, make_editor
) -> None:
    notes = str(workspace / "notes.txt")
    editor = make_editor(write=False, terminal=False, buffers={notes: "one\nTWO\nthree\n"})
    ctx = make_ctx(editor)
    await EditFile().run({"path": "notes.txt", "old_text": "TWO", "new_text": "2"}, ctx)
    assert (workspace / "notes.txt").read_text() == "one\n2\nthree\n"
    assert editor.methods() == ["fs/read_text_file"]


async def test_read_range_through_editor_and_disk(workspace: Path, make_ctx, make_editor) -> None:
    arguments = {"path": "notes.txt", "line": 2, "limit": 1}
    editor = make_editor()
    for ctx in (make_ctx(editor), make_ctx(None)):
        outcome = await ReadFile().run(arguments, ctx)
        assert outcome.for_model == "two\n"
    assert editor.methods() == ["fs/read_text_file"]
    preview = await ReadFile().preview(arguments, make_ctx())
    assert preview.title == "Read notes.txt (lines 2-2)"
    assert preview.kind is ToolKind.READ
    assert preview.locations == (Location(str(workspace / "notes.txt"), 2),)
    assert preview.permission_scope == "read_file"


@pytest.mark.requirement("TOOLS-011")
async def test_long_read_is_truncated_with_a_marker_and_a_place_to_continue(
    workspace: Path, make_ctx
) -> None:
    (workspace / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    outcome = await ReadFile(ToolLimits(read_bytes=100)).run({"path": "big.txt"}, make_ctx())
    kept, marker, hint = outcome.for_model.rsplit("\n", 2)
    assert len(kept.encode()) <= 100
    assert kept.endswith("\nline 13")  # 95 bytes: whole lines only
    assert marker.startswith("[... ")
    assert marker.endswith(" more bytes truncated ...]")
    assert int(marker.split()[1]) == len("".join(f"line {n}\n" for n in range(14, 1001)))
    assert hint == "Lines 1-13 of 1000 shown. Continue with read_file line=14."
    assert outcome.raw_output == {
        "path": str(workspace / "big.txt"),
        "bytes": 8893,
        "truncated": True,
    }


async def test_read_errors_are_readable(workspace: Path, make_ctx) -> None:
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    (workspace / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    cases = [
        ({"path": "missing.txt"}, "missing.txt: no such file"),
        ({"path": "src"}, "src is a directory; use list_directory"),
        ({"path": "blob.bin"}, "binary"),
        ({"path": "latin.txt"}, "not UTF-8 text"),
        ({"path": "notes.txt", "line": 0}, "at least 1"),
        ({"path": 3}, "`path` is required and must be a string"),
    ]
    for arguments, message in cases:
        with pytest.raises(ToolError, match=message):
            await ReadFile().run(arguments, make_ctx())
    empty = workspace / "empty.txt"
    empty.write_text("")
    assert (await ReadFile().run({"path": "empty.txt"}, make_ctx())).for_model == "(empty file)"


async def test_editor_errors_become_tool_errors_but_a_lost_editor_does_not(
    make_ctx, make_editor
) -> None:
    refusing = make_editor(fail={"fs/read_text_file": PeerError(-32603, "buffer is locked")})
    with pytest.raises(ToolError, match=r"the editor could not read notes\.txt: buffer is locked"):
        await ReadFile().run({"path": "notes.txt"}, make_ctx(refusing))
    gone = make_editor(fail={"fs/write_text_file": PeerGone()})
    with pytest.raises(PeerGone):
        await WriteFile().run({"path": "x.txt", "content": "x"}, make_ctx(gone))


@pytest.mark.requirement("TOOLS-007")
async def test_write_preview_shows_the_diff_before_anything_changes(
    workspace: Path, make_ctx, make_editor
) -> None:
    editor = make_editor()
    ctx = make_ctx(editor)
    new = await WriteFile().preview({"path": "docs/readme.md", "content": "# hi\n"}, ctx)
    assert new.title == "Write docs/readme.md"
    assert new.kind is ToolKind.EDIT
    assert new.content == (
        DiffContent(path=str(workspace / "docs/readme.md"), new_text="# hi\n", old_text=None),
    )
    assert new.locations == (Location(str(workspace / "docs/readme.md")),)
    old = await WriteFile().preview({"path": "notes.txt", "content": "1\n"}, ctx)
    assert old.content == (
        DiffContent(
            path=str(workspace / "notes.txt"), new_text="1\n", old_text="one\ntwo\nthree\n"
        ),
    )
    assert not (workspace / "docs").exists()
    assert (workspace / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert "fs/write_text_file" not in editor.methods()


@pytest.mark.requirement("TOOLS-011")
async def test_write_result_keeps_the_whole_diff_for_the_editor(workspace: Path, make_ctx) -> None:
    content = "y" * 50_000
    outcome = await WriteFile().run({"path": "big.txt", "content": content}, make_ctx())
    assert outcome.for_model == "Created big.txt (50000 bytes, 1 lines)."
    assert outcome.content == (
        DiffContent(path=str(workspace / "big.txt"), new_text=content, old_text=None),
    )
    again = await WriteFile().run({"path": "big.txt", "content": content}, make_ctx())
    assert again.for_model.startswith("Wrote big.txt")
    assert (workspace / "big.txt").read_text() == content
