"""The symlink-swap race, run for thousands of calls per tool: nothing outside is touched.

Issue 11 item 5 measured, per 300 racing calls, 24-43 escapes for read, write and list and 1
for edit. Here an adversary process keeps exchanging a directory of the workspace with a
symbolic link to an outside directory (``renameat2(RENAME_EXCHANGE)``: the name is always one
or the other, never missing) while each tool (read, write, edit, list, and search_files on
ripgrep and on the Python engine) is called 2000 times. An escape is any text from
outside in what a tool returned, or any change to the outside tree. Refusals ("is a symbolic
link now", "outside the workspace") are the expected outcome of a lost race.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.tools import EditFile, ListDirectory, ReadFile, SearchFiles, WriteFile
from acp_bridge.tools._base import Tool

pytestmark = [pytest.mark.anyio, pytest.mark.requirement("WS-RACE-001")]

CALLS = 2000

# The adversary: exchange `d` and the link `.swap` (-> outside) forever, as fast as it can.
SWAPPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
def exchange():
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
exchange(); exchange()
print("swapping", flush=True)
while True:
    exchange()
"""


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        path.relative_to(root).as_posix(): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


@pytest.fixture
async def racing(workspace: Path) -> AsyncIterator[Path]:
    """The workspace with `d/sub/secret.txt`, while `d` keeps being swapped with `outside`."""
    outside = workspace.parent / "outside"
    for top in (outside, workspace / "d"):
        (top / "sub").mkdir(parents=True)
    (outside / "sub" / "secret.txt").write_text("top secret\n")
    (outside / "outside-only.txt").write_text("x\n")
    (outside / "sub" / "outside-only.txt").write_text("x\n")
    (workspace / "d" / "sub" / "secret.txt").write_text("inside secret\n")
    (workspace / ".swap").symlink_to(outside, target_is_directory=True)
    process: Process = await anyio.open_process(
        [sys.executable, "-c", SWAPPER, str(workspace / "d"), str(workspace / ".swap")]
    )
    try:
        assert process.stdout is not None
        with anyio.fail_after(60):
            assert (await process.stdout.receive()).startswith(b"swapping")
        yield outside
    finally:
        process.kill()
        with anyio.fail_after(30):
            await process.wait()


def _calls(name: str, index: int) -> tuple[Tool, JsonObject]:
    if name == "read":
        return ReadFile(), {"path": "d/sub/secret.txt"}
    if name == "write":
        target = "d/sub/secret.txt" if index % 2 else f"d/sub/new-{index}/file.txt"
        return WriteFile(), {"path": target, "content": "inside secret\n"}
    if name == "edit":
        old, new = ("secret", "SECRET") if index % 2 else ("SECRET", "secret")
        return EditFile(), {"path": "d/sub/secret.txt", "old_text": old, "new_text": new}
    if name.startswith("search"):
        engine = "python" if name == "search-python" else "auto"  # auto: ripgrep when installed
        return SearchFiles(engine=engine), {
            "pattern": "secret",
            "path": "d" if index % 2 else "d/sub",
        }
    return ListDirectory(), {"path": "d/sub" if index % 2 else "d"}


@pytest.mark.parametrize("name", ["read", "write", "edit", "list", "search", "search-python"])
async def test_thousands_of_racing_calls_escape_nothing(racing: Path, make_ctx, name: str) -> None:
    before = _tree(racing)
    ctx = make_ctx()
    escapes: list[str] = []
    done = refused = 0
    with anyio.fail_after(600):
        for index in range(CALLS):
            tool, arguments = _calls(name, index)
            try:
                outcome = await tool.run(arguments, ctx)
            except ToolError:
                refused += 1
                continue
            done += 1
            if "top secret" in outcome.for_model or "outside-only" in outcome.for_model:
                escapes.append(outcome.for_model)
    assert escapes == []
    assert _tree(racing) == before, "the outside tree changed"
    assert done > 0, f"no call got through ({refused} refused): the test raced nothing"
    print(f"{name}: {done} done, {refused} refused, 0 escapes")
