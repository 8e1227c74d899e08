"""An edit of a big file holds its old and new text once (issue 15 item 5, PERF-BIG-005);
a write never reads the file again for its diff at run time (PERF-BIG-006).

The run reuses the texts its preview computed (it writes only while the file is still what
the preview read: WS-STALE-001, tests/tools/test_tools_stale_writes.py), and a worker thread
never keeps a file's bytes alive after they were decoded. Measured with tracemalloc,
structurally: the edit's peak traced growth as a multiple of the file's size, never a timing.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from acp_bridge.tools import DiffContent, EditFile, ToolOutcome, ToolPreview, WriteFile

pytestmark = pytest.mark.anyio

SIZE = 6_000_000
ARGUMENTS = {"path": "big.txt", "old_text": "NEEDLE_LINE", "new_text": "EDITED_LINE"}


def _write_big(path: Path) -> None:
    line = "this is an ordinary line of a big file, numbered {:08d}\n"
    count = SIZE // len(line.format(0))
    lines = [line.format(n) for n in range(count)]
    lines[count // 2] = "NEEDLE_LINE\n"
    path.write_text("".join(lines), encoding="utf-8")


def _assert_same_diff(preview: ToolPreview, outcome: ToolOutcome) -> None:
    """The run's diff is the preview's: the very same texts, not equal copies."""
    (shown,) = preview.content
    (done,) = outcome.content
    assert isinstance(shown, DiffContent)
    assert isinstance(done, DiffContent)
    assert done.new_text is shown.new_text
    assert done.old_text is shown.old_text


@pytest.mark.requirement("PERF-BIG-005")
async def test_a_big_edit_holds_its_old_and_new_text_once(
    workspace: Path, make_ctx, traced: None
) -> None:
    big = workspace / "big.txt"
    _write_big(big)
    size = big.stat().st_size
    tool = EditFile()
    ctx = make_ctx()
    start = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    preview = await tool.preview(ARGUMENTS, ctx)
    outcome = await tool.run(ARGUMENTS, ctx)
    peak = tracemalloc.get_traced_memory()[1] - start
    assert outcome.ok
    assert "EDITED_LINE" in big.read_text(encoding="utf-8")
    _assert_same_diff(preview, outcome)
    # Old and new text (2x), plus slices of a few 100 KB while comparing and writing; reading
    # the file again whole, or a thread keeping its bytes, would add 2-3x the file.
    assert peak <= 2.5 * size, f"peak {peak / size:.2f}x the file"


@pytest.mark.requirement("PERF-BIG-005")
async def test_another_call_with_the_same_context_is_planned_afresh(
    workspace: Path, make_ctx
) -> None:
    (workspace / "notes.txt").write_text("a\nNEEDLE_LINE\nb\n", encoding="utf-8")
    tool = EditFile()
    ctx = make_ctx()
    await tool.preview({**ARGUMENTS, "path": "notes.txt"}, ctx)
    other = {"path": "notes.txt", "old_text": "a\n", "new_text": "A\n"}
    outcome = await tool.run(other, ctx)  # not the previewed call: its plan is not reused
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "A\nNEEDLE_LINE\nb\n"
    assert outcome.ok


@pytest.mark.requirement("PERF-BIG-006")
async def test_a_write_runs_without_reading_the_file_again(
    workspace: Path, make_ctx, make_editor, traced: None
) -> None:
    big = workspace / "big.txt"
    _write_big(big)
    size = big.stat().st_size
    content = "a new file\n" * (SIZE // 11)
    arguments = {"path": "big.txt", "content": content}
    tool = WriteFile()
    ctx = make_ctx()
    preview = await tool.preview(arguments, ctx)
    start = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    outcome = await tool.run(arguments, ctx)
    peak = tracemalloc.get_traced_memory()[1] - start
    assert big.read_text(encoding="utf-8") == content
    _assert_same_diff(preview, outcome)
    assert outcome.raw_output == {"path": str(big), "bytes": len(content), "created": False}
    # The write encodes the new text (1x); reading the file again whole (its bytes, then its
    # text) would add 2x the file.
    assert peak <= 1.5 * size, f"peak {peak / size:.2f}x the file"
    # Through the editor, the preview reads the file and the run reads it once more only to
    # check it is unchanged (WS-STALE-002), not for its diff.
    editor = make_editor()
    ctx = make_ctx(editor)
    arguments = {"path": "notes.txt", "content": "rewritten\n"}
    await tool.preview(arguments, ctx)
    outcome = await tool.run(arguments, ctx)
    assert editor.methods() == ["fs/read_text_file", "fs/read_text_file", "fs/write_text_file"]
    assert outcome.for_model == "Wrote notes.txt (10 bytes, 1 lines)."


@pytest.mark.requirement("PERF-BIG-006")
async def test_a_write_without_its_preview_reads_what_it_replaces(
    workspace: Path, make_ctx
) -> None:
    tool = WriteFile()
    ctx = make_ctx()
    await tool.preview({"path": "notes.txt", "content": "previewed\n"}, ctx)
    other = {"path": "notes.txt", "content": "another call\n"}  # not the previewed call
    outcome = await tool.run(other, ctx)
    (done,) = outcome.content
    assert isinstance(done, DiffContent)
    assert done.old_text == "one\ntwo\nthree\n"
    created = await tool.run({"path": "fresh.txt", "content": "x\n"}, make_ctx())
    assert created.raw_output["created"] is True
    assert created.for_model == "Created fresh.txt (2 bytes, 1 lines)."
