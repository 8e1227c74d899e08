"""search_files shows nothing from outside the workspace, even while the tree changes under it.

Issue 11 item 5: a directory swapped for a symbolic link between check and use, and a hard
link to an outside file, both led out. Both engines are raced here by a thread that keeps
swapping a directory of the workspace for a link to the outside and back.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import anyio
import pytest

from acp_bridge.tools import SearchFiles

pytestmark = [pytest.mark.anyio, pytest.mark.requirement("PERF-SEARCH-003")]


@pytest.mark.parametrize("engine", ["auto", "python"])
async def test_a_hard_link_to_an_outside_file_is_not_shown(
    workspace: Path, make_ctx, engine: str
) -> None:
    os.link(workspace.parent / "outside" / "secret.txt", workspace / "innocent.txt")
    outcome = await SearchFiles(engine=engine).run({"pattern": "secret"}, make_ctx())
    assert "top secret" not in outcome.for_model
    assert outcome.for_model.splitlines()[-1] == (
        "(matches not shown from files with several hard links: innocent.txt)"
    )
    assert outcome.raw_output["complete"] is False


def _swap(workspace: Path, outside: Path, stop: threading.Event) -> None:
    directory, parked = workspace / "d", workspace / ".parked"
    while not stop.is_set():
        os.rename(directory, parked)
        os.symlink(outside, directory)
        os.unlink(directory)
        os.rename(parked, directory)


@pytest.mark.parametrize("engine", ["auto", "python"])
async def test_a_directory_swapped_for_a_link_during_the_search_leads_nowhere(
    workspace: Path, make_ctx, engine: str
) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "secret.txt").write_text("inside secret\n")
    outside = workspace.parent / "outside"
    stop = threading.Event()
    swapper = threading.Thread(target=_swap, args=(workspace, outside, stop), daemon=True)
    swapper.start()
    seen: list[str] = []
    try:
        with anyio.fail_after(120):
            for _ in range(100):
                outcome = await SearchFiles(engine=engine).run({"pattern": "secret"}, make_ctx())
                seen.append(outcome.for_model)
    finally:
        stop.set()
        swapper.join(timeout=30)
    assert not [text for text in seen if "top secret" in text]
