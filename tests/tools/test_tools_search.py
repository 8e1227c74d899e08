"""search_files and list_directory: bounded, line-numbered, confined."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_bridge.errors import ToolError
from acp_bridge.tools import ListDirectory, Location, SearchFiles, TextContent, ToolKind, ToolLimits

pytestmark = pytest.mark.anyio

SKIPPED = "not searched, as ripgrep does: ignored, hidden and binary files"


@pytest.fixture(params=["auto", "python"])
def engine(request: pytest.FixtureRequest) -> str:
    """Each search test runs with ripgrep (when installed) and with the Python engine."""
    return str(request.param)


async def test_search_returns_line_numbered_matches(workspace: Path, make_ctx, engine: str) -> None:
    (workspace / "src" / "util.py").write_text("import os\ndef helper():\n    pass\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("def not_searched\n")
    outcome = await SearchFiles(engine=engine).run({"pattern": r"^def \w+"}, make_ctx())
    assert outcome.for_model == (
        "src/app.py:1: def main():\nsrc/util.py:2: def helper():\n"
        f"(2 matches in 2 files; {SKIPPED})"
    )
    assert outcome.raw_output["complete"] is True
    assert (outcome.raw_output["matches"], outcome.raw_output["files"]) == (2, 2)
    assert outcome.content == (TextContent(f"```\n{outcome.for_model}\n```"),)


async def test_search_path_and_glob_narrow_it(workspace: Path, make_ctx, engine: str) -> None:
    (workspace / "src" / "app.txt").write_text("def main():\n")
    search = SearchFiles(engine=engine)
    by_glob = await search.run({"pattern": "main", "glob": "*.py"}, make_ctx())
    assert by_glob.for_model.splitlines()[0] == "src/app.py:1: def main():"
    assert by_glob.raw_output["matches"] == 1
    deep_glob = await search.run({"pattern": "main", "glob": "**/*.txt"}, make_ctx())
    assert deep_glob.for_model.splitlines()[0] == "src/app.txt:1: def main():"
    one_file = await search.run({"pattern": "t", "path": "notes.txt"}, make_ctx())
    assert one_file.for_model == "notes.txt:2: two\nnotes.txt:3: three\n(2 matches in 1 files)"


@pytest.mark.requirement("PERF-SEARCH-001")
async def test_search_is_bounded(workspace: Path, make_ctx, engine: str) -> None:
    (workspace / "many.txt").write_text("hit " + "x" * 500 + "\n" + "hit\n" * 50)
    limits = ToolLimits(search_max_matches=5, search_max_line_chars=20)
    outcome = await SearchFiles(limits, engine=engine).run({"pattern": "hit"}, make_ctx())
    lines = outcome.for_model.splitlines()
    assert lines[0] == "many.txt:1: hit " + "x" * 16 + " [...]"
    assert len(lines) == 6
    assert lines[-1] == (
        "(stopped after 5 matches in 1 files: the rest was not searched; "
        f"narrow the pattern, path or glob; {SKIPPED})"
    )
    assert outcome.raw_output["complete"] is False
    small = await SearchFiles(ToolLimits(model_output_bytes=40), engine=engine).run(
        {"pattern": "hit"}, make_ctx()
    )
    assert small.for_model.endswith("more bytes truncated ...]")


async def test_search_skips_binary_files_and_refuses_bad_patterns(
    workspace: Path, make_ctx, engine: str
) -> None:
    (workspace / "blob.bin").write_bytes(b"needle\x00\x01")
    search = SearchFiles(engine=engine)
    outcome = await search.run({"pattern": "needle"}, make_ctx())
    assert outcome.for_model == f"No matches.\n({SKIPPED})"
    named = await search.run({"pattern": "needle", "path": "blob.bin"}, make_ctx())
    assert named.for_model == "No matches.\n(blob.bin is a binary or special file: not searched)"
    with pytest.raises(ToolError, match="not a valid regular expression"):
        await SearchFiles().preview({"pattern": "("}, make_ctx())
    with pytest.raises(ToolError, match="no such file or directory"):
        await SearchFiles().run({"pattern": "x", "path": "nowhere"}, make_ctx())


async def test_search_preview(workspace: Path, make_ctx) -> None:
    preview = await SearchFiles().preview(
        {"pattern": "TODO", "path": "src", "glob": "*.py"}, make_ctx()
    )
    assert preview.title == "Search `TODO` in src (*.py)"
    assert preview.kind is ToolKind.SEARCH
    assert preview.locations == (Location(str(workspace / "src")),)


async def test_list_directory_marks_directories_and_links(workspace: Path, make_ctx) -> None:
    (workspace / "alias.txt").symlink_to(workspace / "notes.txt")
    outcome = await ListDirectory().run({"path": "."}, make_ctx())
    assert outcome.for_model == "alias.txt@\nnotes.txt\nsrc/"
    preview = await ListDirectory().preview({"path": "src"}, make_ctx())
    assert preview.title == "List src"
    assert preview.locations == (Location(str(workspace / "src")),)
    (workspace / "empty").mkdir()
    assert (
        await ListDirectory().run({"path": "empty"}, make_ctx())
    ).for_model == "(empty directory)"


async def test_list_directory_is_bounded_and_errors_are_readable(workspace: Path, make_ctx) -> None:
    for n in range(5):
        (workspace / "src" / f"f{n}.py").write_text("")
    outcome = await ListDirectory(ToolLimits(list_max_entries=3)).run({"path": "src"}, make_ctx())
    assert outcome.for_model == "app.py\nf0.py\nf1.py\n[... 3 more entries not shown ...]"
    with pytest.raises(ToolError, match="no such directory"):
        await ListDirectory().run({"path": "nope"}, make_ctx())
    with pytest.raises(ToolError, match="is a file, not a directory"):
        await ListDirectory().run({"path": "notes.txt"}, make_ctx())
