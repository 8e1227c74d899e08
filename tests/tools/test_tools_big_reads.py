"""Big files at the tool level: bounded editor reads, the range named, large diffs stored hashed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from acp_bridge.tools import (
    DiffContent,
    ReadFile,
    TextContent,
    ToolLimits,
    diff_from_stored,
    diff_to_stored,
)
from acp_bridge.tools._stored import STORED_DIFF_CHARS

pytestmark = pytest.mark.anyio


def _numbered(count: int) -> str:
    return "".join(f"line {n}\n" for n in range(1, count + 1))


@pytest.mark.requirement("PERF-BIG-003")
async def test_an_editor_read_asks_for_a_page_and_names_the_range(
    workspace: Path, make_ctx, make_editor
) -> None:
    (workspace / "huge.txt").write_text(_numbered(250_000))
    editor = make_editor(read=True, write=False)
    asked: list[tuple[int | None, int | None]] = []
    read = editor.read_text_file

    async def recording(path: str, *, line: int | None = None, limit: int | None = None) -> str:
        asked.append((line, limit))
        return await read(path, line=line, limit=limit)

    editor.read_text_file = recording
    outcome = await ReadFile().run({"path": "huge.txt"}, make_ctx(editor))
    assert asked == [(None, 2001)]
    text, hint = outcome.for_model.rsplit("\n", 1)
    assert text == _numbered(2000).rstrip("\n")
    assert hint == "Lines 1-2000 shown; the file goes on. Continue with read_file line=2001."
    assert outcome.raw_output["truncated"] is True

    asked.clear()
    later = await ReadFile().run({"path": "huge.txt", "line": 2001}, make_ctx(editor))
    assert asked == [(2001, 2001)]
    assert later.for_model.startswith("line 2001\n")
    assert later.for_model.endswith("Lines 2001-4000 shown; the file goes on. "
                                    "Continue with read_file line=4001.")  # fmt: skip


@pytest.mark.requirement("PERF-BIG-003")
async def test_an_editor_read_that_fits_is_whole_and_unmarked(
    workspace: Path, make_ctx, make_editor
) -> None:
    (workspace / "small.txt").write_text(_numbered(2000))
    outcome = await ReadFile().run({"path": "small.txt"}, make_ctx(make_editor(write=False)))
    assert outcome.for_model == _numbered(2000)
    assert outcome.raw_output["truncated"] is False


@pytest.mark.requirement("PERF-BIG-003")
async def test_a_byte_cut_names_the_lines_shown_too(workspace: Path, make_ctx, make_editor) -> None:
    (workspace / "wide.txt").write_text(
        "".join(f"{n:04d}" + "x" * 95 + "\n" for n in range(1, 3000))
    )
    limits = ToolLimits(read_bytes=1000)
    outcome = await ReadFile(limits).run({"path": "wide.txt"}, make_ctx(make_editor(write=False)))
    *_, marker, hint = outcome.for_model.split("\n")
    assert marker.endswith(" more bytes truncated ...]")
    assert hint == "Lines 1-10 shown; the file goes on. Continue with read_file line=11."


@pytest.mark.requirement("PERF-BIG-002")
def test_a_large_diff_is_stored_by_its_hashes_and_read_back_as_what_changed() -> None:
    old = "a" * STORED_DIFF_CHARS
    new = old + "b"
    stored = diff_to_stored(DiffContent("/w/big.txt", new, old))
    assert stored == {
        "type": "diff",
        "path": "/w/big.txt",
        "newSha256": hashlib.sha256(new.encode()).hexdigest(),
        "newBytes": len(new),
        "oldSha256": hashlib.sha256(old.encode()).hexdigest(),
        "oldBytes": len(old),
    }
    back = diff_from_stored(stored)
    assert isinstance(back, TextContent)
    assert back.text.startswith(f"Changed /w/big.txt: {len(old)} bytes (sha256 ")
    assert back.text.endswith("The diff of a large file is not stored.")
    created = diff_from_stored(diff_to_stored(DiffContent("/w/new.txt", new)))
    assert isinstance(created, TextContent)
    assert created.text.startswith("Created /w/new.txt: ")
    small = DiffContent("/w/s.txt", "new\n", "old\n")
    assert diff_from_stored(diff_to_stored(small)) == small
