"""edit_file: exact replacement, clear failures, and idempotence on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_bridge.errors import ToolError
from acp_bridge.tools import DiffContent, EditFile, EditPlan, Location, TextContent, plan_edit

pytestmark = pytest.mark.anyio


def test_plan_replaces_the_single_occurrence() -> None:
    plan = plan_edit("a\nb\nc\n", "b\n", "B\n", display="f")
    assert plan == EditPlan(text="a\nB\nc\n", line=2, already_applied=False)


@pytest.mark.requirement("TOOLS-008")
def test_absent_old_text_fails_clearly() -> None:
    with pytest.raises(ToolError) as refused:
        plan_edit("a\nb\n", "x", "y", display="src/f.py")
    assert str(refused.value) == (
        "old_text was not found in src/f.py; read the file again and copy the exact text, "
        "including whitespace and indentation"
    )


@pytest.mark.requirement("TOOLS-008")
def test_ambiguous_old_text_says_how_many_times_and_asks_for_context() -> None:
    with pytest.raises(ToolError) as refused:
        plan_edit("x = 1\ny = 2\nx = 1\nx = 1\n", "x = 1", "x = 3", display="f.py")
    assert str(refused.value) == (
        "old_text appears 3 times in f.py; include more surrounding lines in old_text so that "
        "it matches exactly once"
    )


@pytest.mark.requirement("TOOLS-008")
def test_overlapping_occurrences_count_as_ambiguous() -> None:
    with pytest.raises(ToolError, match="appears 2 times"):
        plan_edit("aaa", "aa", "b", display="f")


@pytest.mark.requirement("TOOLS-009")
def test_replacement_already_applied_is_recognised() -> None:
    plan = plan_edit("a\nB\nc\n", "b\n", "B\n", display="f")
    assert plan == EditPlan(text="a\nB\nc\n", line=2, already_applied=True)


@pytest.mark.requirement("TOOLS-009")
def test_insertion_already_applied_is_not_inserted_twice() -> None:
    # new_text keeps old_text: after the edit old_text is still there, inside new_text.
    plan = plan_edit(
        "import os\nimport re\n\nx = 1\n", "import os\n", "import os\nimport re\n", display="f"
    )
    assert plan.already_applied
    assert plan.text == "import os\nimport re\n\nx = 1\n"
    fresh = plan_edit("import os\n\nx = 1\n", "import os\n", "import os\nimport re\n", display="f")
    assert fresh == EditPlan("import os\nimport re\n\nx = 1\n", 1, already_applied=False)


def test_degenerate_edits_are_refused() -> None:
    with pytest.raises(ToolError, match="old_text must not be empty"):
        plan_edit("a", "", "b", display="f")
    with pytest.raises(ToolError, match="nothing to change"):
        plan_edit("a", "a", "a", display="f")


def test_crlf_files_keep_their_line_endings() -> None:
    plan = plan_edit("one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "one\n2\n", display="f")
    assert plan.text == "one\r\n2\r\nthree\r\n"


@pytest.mark.requirement("TOOLS-007")
@pytest.mark.requirement("TOOLS-009")
async def test_edit_previews_its_diff_applies_once_and_replays_as_already_applied(
    workspace: Path, make_ctx
) -> None:
    app = workspace / "src" / "app.py"
    arguments = {"path": "src/app.py", "old_text": "return 1", "new_text": "return 2"}
    tool = EditFile()
    preview = await tool.preview(arguments, make_ctx())
    assert preview.title == "Edit src/app.py"
    assert preview.locations == (Location(str(app), 2),)
    assert preview.content == (
        DiffContent(
            path=str(app),
            old_text="def main():\n    return 1\n",
            new_text="def main():\n    return 2\n",
        ),
    )
    assert preview.permission_scope == "edit_file"
    assert app.read_text() == "def main():\n    return 1\n"  # preview changes nothing

    first = await tool.run(arguments, make_ctx())
    assert first.ok
    assert first.for_model == "Edited src/app.py: replaced 1 occurrence at line 2."
    assert first.raw_output == {"path": str(app), "status": "applied", "line": 2}

    mtime = app.stat().st_mtime_ns
    replay = await tool.run(arguments, make_ctx())
    assert replay.ok
    assert "already applied" in replay.for_model
    assert replay.raw_output == {"path": str(app), "status": "already_applied", "line": 2}
    assert app.read_text() == "def main():\n    return 2\n"
    assert app.stat().st_mtime_ns == mtime  # not written again
    again = await tool.preview(arguments, make_ctx())
    assert again.content == (TextContent("This edit is already applied to src/app.py."),)


async def test_editing_a_missing_file_points_to_write_file(make_ctx) -> None:
    with pytest.raises(ToolError, match="no such file; use write_file"):
        await EditFile().preview({"path": "nope.py", "old_text": "a", "new_text": "b"}, make_ctx())


async def test_edit_through_the_editor_never_touches_the_disk_directly(
    workspace: Path, make_ctx, make_editor
) -> None:
    editor = make_editor()
    arguments = {"path": "notes.txt", "old_text": "two", "new_text": "2"}
    await EditFile().preview(arguments, make_ctx(editor))
    await EditFile().run(arguments, make_ctx(editor))
    notes = str(workspace / "notes.txt")
    assert editor.calls == [
        ("fs/read_text_file", notes),  # preview
        ("fs/read_text_file", notes),  # run reads again: the buffer may have changed
        ("fs/write_text_file", notes),
    ]
