"""Stale-write protection (spec/workspace.md, WS-STALE-001..003): a file the user changes while
write_file's or edit_file's permission prompt is open is never overwritten.

Real files on the local disk, and an editor whose buffers differ from the disk (the fake
editor of conftest.py), are changed between the preview and the run; the turn engine is run
with an editor that edits the file before it answers the permission request.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from bridge import RecordingProvider, running_bridge, scripted_config
from editor import choose
from turn.turnkit import FakeProvider, RecordingSink, finish, make_request, start, text, tool_call

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.providers import FinishReason
from acp_bridge.providers.scripted import ScriptedProvider, loads_script
from acp_bridge.tools import (
    EditFile,
    TextContent,
    ToolContext,
    WriteFile,
    _stale,
)
from acp_bridge.tools._base import Tool
from acp_bridge.turn import (
    EffectKey,
    EffectLedger,
    EffectState,
    PermissionDecision,
    PermissionOption,
    ToolCallChanged,
    ToolCallShown,
    ToolStatus,
    Turn,
)

pytestmark = pytest.mark.anyio

EDIT: JsonObject = {"path": "notes.txt", "old_text": "two", "new_text": "2"}
WRITE: JsonObject = {"path": "notes.txt", "content": "the model's version\n"}
NEW: JsonObject = {"path": "fresh.txt", "content": "the model's new file\n"}
USERS = "one\ntwo\nthree\nthe user's line\n"

CHANGED = (
    "notes.txt changed after it was read for this call's diff (edited by the user or another "
    "program while the permission was asked); nothing was written. Read notes.txt again and "
    "redo the change against what it holds now."
)


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads judged a minute after the files' last change, as for a file not touched just
    before the call: its stat identity is trusted (not "racy")."""
    monkeypatch.setattr(_stale, "_now", lambda: time.time_ns() + 60_000_000_000)


def _no_temporary_files(workspace: Path) -> None:
    assert not [p.name for p in workspace.rglob("*.tmp")]


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files the run hashed again to tell whether they changed."""
    seen: list[str] = []
    real = _stale._hash_entry

    def counting(parent: int, name: str) -> str | None:
        seen.append(name)
        return real(parent, name)

    monkeypatch.setattr(_stale, "_hash_entry", counting)
    return seen


async def _previewed(
    make_ctx: Callable[..., ToolContext], tool: Tool, arguments: JsonObject, editor: object = None
) -> ToolContext:
    """A context on which `tool` previewed `arguments` (its run then finds the preview)."""
    ctx = make_ctx(editor)
    await tool.preview(arguments, ctx)
    return ctx


# -- the local disk ---------------------------------------------------------------------------


@pytest.mark.requirement("WS-STALE-001")
@pytest.mark.parametrize(("tool", "arguments"), [(EditFile, EDIT), (WriteFile, WRITE)])
async def test_a_file_changed_after_the_preview_is_not_written(
    workspace: Path, make_ctx, tool: type[Tool], arguments: JsonObject
) -> None:
    notes = workspace / "notes.txt"
    ctx = await _previewed(make_ctx, tool(), arguments)
    notes.write_text(USERS)  # the user edits it while the permission prompt is open
    with pytest.raises(ToolError) as refused:
        await tool().run(arguments, ctx)
    assert str(refused.value) == CHANGED
    assert not refused.value.may_have_changed  # nothing written: not final (EFFECT-FINAL-001)
    assert notes.read_text() == USERS
    _no_temporary_files(workspace)


@pytest.mark.requirement("WS-STALE-001")
@pytest.mark.parametrize(("tool", "arguments"), [(EditFile, EDIT), (WriteFile, WRITE)])
async def test_a_file_deleted_after_the_preview_is_not_recreated(
    workspace: Path, make_ctx, tool: type[Tool], arguments: JsonObject
) -> None:
    ctx = await _previewed(make_ctx, tool(), arguments)
    (workspace / "notes.txt").unlink()
    with pytest.raises(ToolError, match=r"^notes.txt was deleted after it was read .*"):
        await tool().run(arguments, ctx)
    assert not (workspace / "notes.txt").exists()
    _no_temporary_files(workspace)


@pytest.mark.requirement("WS-STALE-001")
@pytest.mark.parametrize(("tool", "arguments"), [(EditFile, EDIT), (WriteFile, WRITE)])
async def test_a_file_whose_directory_was_removed_is_not_recreated(
    workspace: Path, make_ctx, tool: type[Tool], arguments: JsonObject
) -> None:
    arguments = {**arguments, "path": "src/app.py", "old_text": "return 1"}
    ctx = await _previewed(make_ctx, tool(), arguments)
    shutil.rmtree(workspace / "src")
    with pytest.raises(ToolError, match=r"^src/app.py was deleted after it was read"):
        await tool().run(arguments, ctx)
    assert not (workspace / "src").exists()  # not even its directory made again


@pytest.mark.requirement("WS-STALE-001")
async def test_a_new_file_created_after_the_preview_is_not_replaced(
    workspace: Path, make_ctx
) -> None:
    ctx = await _previewed(make_ctx, WriteFile(), NEW)
    (workspace / "fresh.txt").write_text("the user's own file\n")
    with pytest.raises(ToolError) as refused:
        await WriteFile().run(NEW, ctx)
    assert str(refused.value) == (
        "fresh.txt did not exist when this call was previewed and exists now (it was created "
        "meanwhile); nothing was written. Read fresh.txt again and redo the change against "
        "what it holds now."
    )
    assert (workspace / "fresh.txt").read_text() == "the user's own file\n"


@pytest.mark.requirement("WS-STALE-002")
@pytest.mark.parametrize(("tool", "arguments"), [(EditFile, EDIT), (WriteFile, WRITE)])
async def test_an_unchanged_file_is_told_by_its_stat_and_written(
    workspace: Path,
    make_ctx,
    hashes: list[str],
    settled: None,
    tool: type[Tool],
    arguments: JsonObject,
) -> None:
    notes = workspace / "notes.txt"
    ctx = await _previewed(make_ctx, tool(), arguments)
    outcome = await tool().run(arguments, ctx)
    assert outcome.ok
    assert notes.read_text() in ("one\n2\nthree\n", "the model's version\n")
    assert hashes == []  # same device, inode, size, mtime and ctime: not read again


@pytest.mark.requirement("WS-STALE-002")
async def test_a_file_touched_but_unchanged_is_hashed_and_written(
    workspace: Path, make_ctx, hashes: list[str], settled: None
) -> None:
    notes = workspace / "notes.txt"
    ctx = await _previewed(make_ctx, EditFile(), EDIT)
    past = notes.stat().st_mtime_ns - 60_000_000_000
    os.utime(notes, ns=(past, past))  # touched: other times, the same text
    await EditFile().run(EDIT, ctx)
    assert hashes == ["notes.txt"]
    assert notes.read_text() == "one\n2\nthree\n"


@pytest.mark.requirement("WS-STALE-002")
async def test_a_file_modified_just_before_its_read_is_hashed_not_trusted_by_its_stat(
    workspace: Path, make_ctx, hashes: list[str]
) -> None:
    # Written a moment ago: a change within the same clock tick could keep its times, so its
    # stat identity alone is not trusted (git's "racy" entries).
    (workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    ctx = await _previewed(make_ctx, EditFile(), EDIT)
    await EditFile().run(EDIT, ctx)
    assert hashes == ["notes.txt"]


@pytest.mark.requirement("WS-STALE-002")
async def test_a_same_size_change_that_keeps_the_mtime_is_still_caught(
    workspace: Path, make_ctx
) -> None:
    # Caught by its ctime, or (in the same clock tick as the read) by the hash of a racy read.
    notes = workspace / "notes.txt"
    kept = notes.stat().st_mtime_ns
    ctx = await _previewed(make_ctx, EditFile(), EDIT)
    with notes.open("r+") as out:  # in place, same size, then the old mtime put back
        out.write("ONE")
    os.utime(notes, ns=(kept, kept))
    with pytest.raises(ToolError, match="changed after it was read"):
        await EditFile().run(EDIT, ctx)
    assert notes.read_text() == "ONE\ntwo\nthree\n"


@pytest.mark.requirement("WS-STALE-001")
async def test_a_run_without_its_preview_checks_what_it_read_itself(
    workspace: Path, make_ctx
) -> None:
    outcome = await EditFile().run(EDIT, make_ctx())  # no preview: it reads, plans, writes
    assert outcome.ok
    assert (workspace / "notes.txt").read_text() == "one\n2\nthree\n"


# -- through the editor ------------------------------------------------------------------------


@pytest.mark.requirement("WS-STALE-003")
@pytest.mark.parametrize(("tool", "arguments"), [(EditFile, EDIT), (WriteFile, WRITE)])
@pytest.mark.parametrize("write", [True, False], ids=["editor-writes", "disk-writes"])
async def test_an_unsaved_edit_in_the_editor_is_not_overwritten(
    workspace: Path, make_ctx, make_editor, tool: type[Tool], arguments: JsonObject, write: bool
) -> None:
    notes = str(workspace / "notes.txt")
    editor = make_editor(write=write)
    ctx = await _previewed(make_ctx, tool(), arguments, editor)
    editor.buffers[notes] = USERS  # typed in the editor, not saved, while the prompt is open
    with pytest.raises(ToolError) as refused:
        await tool().run(arguments, ctx)
    assert str(refused.value) == CHANGED
    assert editor.methods() == ["fs/read_text_file", "fs/read_text_file"]  # never written
    assert editor.buffers[notes] == USERS
    assert (workspace / "notes.txt").read_text() == "one\ntwo\nthree\n"


@pytest.mark.requirement("WS-STALE-003")
async def test_an_unchanged_buffer_is_read_again_and_written(
    workspace: Path, make_ctx, make_editor
) -> None:
    notes = str(workspace / "notes.txt")
    editor = make_editor(buffers={notes: "one\ntwo\nthree\nunsaved\n"})
    ctx = await _previewed(make_ctx, EditFile(), EDIT, editor)
    outcome = await EditFile().run(EDIT, ctx)
    assert outcome.ok
    assert editor.methods() == ["fs/read_text_file", "fs/read_text_file", "fs/write_text_file"]
    assert (workspace / "notes.txt").read_text() == "one\n2\nthree\nunsaved\n"


@pytest.mark.requirement("WS-STALE-003")
async def test_a_file_the_editor_saw_missing_and_now_has_is_not_replaced(
    workspace: Path, make_ctx, make_editor
) -> None:
    editor = make_editor()
    ctx = await _previewed(make_ctx, WriteFile(), NEW, editor)
    (workspace / "fresh.txt").write_text("made meanwhile\n")
    with pytest.raises(ToolError, match="it was created meanwhile"):
        await WriteFile().run(NEW, ctx)
    assert "fs/write_text_file" not in editor.methods()
    assert (workspace / "fresh.txt").read_text() == "made meanwhile\n"


@pytest.mark.requirement("WS-STALE-001")
async def test_an_editor_that_writes_but_does_not_read_is_checked_on_the_disk(
    workspace: Path, make_ctx, make_editor
) -> None:
    editor = make_editor(read=False)
    ctx = await _previewed(make_ctx, EditFile(), EDIT, editor)  # read from the disk
    (workspace / "notes.txt").write_text(USERS)
    with pytest.raises(ToolError, match="changed after it was read"):
        await EditFile().run(EDIT, ctx)
    assert editor.methods() == []
    assert (workspace / "notes.txt").read_text() == USERS


# -- a big file ---------------------------------------------------------------------------------


@pytest.mark.requirement("WS-STALE-002")
@pytest.mark.parametrize("changed", [False, True], ids=["touched", "changed"])
async def test_a_big_file_is_checked_by_a_streaming_hash(
    workspace: Path, make_ctx, traced: None, changed: bool
) -> None:
    big = workspace / "big.txt"
    body = "".join(f"an ordinary line {n:08d} of a big file\n" for n in range(150_000))
    big.write_text(body + "NEEDLE\n")
    size = big.stat().st_size
    arguments = {"path": "big.txt", "old_text": "NEEDLE", "new_text": "EDITED"}
    ctx = await _previewed(make_ctx, EditFile(), arguments)
    big.write_text(body + ("NEEDLE\n" if not changed else "NEEDLE\nmore\n"))  # new times
    start_size = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    if changed:
        with pytest.raises(ToolError, match="changed after it was read"):
            await EditFile().run(arguments, ctx)
    else:
        await EditFile().run(arguments, ctx)
    peak = tracemalloc.get_traced_memory()[1] - start_size
    assert big.read_text().endswith("EDITED\n" if not changed else "NEEDLE\nmore\n")
    # The check reads a chunk at a time; the write encodes slices: never the file again whole.
    assert peak <= 0.5 * size, f"peak {peak / size:.2f}x the file"


# -- the turn engine: the editor edits the file before it answers ------------------------------


class EditingSink(RecordingSink):
    """Answers the permission request allow-once, after changing the file (once)."""

    def __init__(self, change: Callable[[], None] | None) -> None:
        super().__init__()
        self.change = change

    async def request_permission(
        self, call: ToolCallShown, options: Sequence[PermissionOption]
    ) -> PermissionDecision:
        change, self.change = self.change, None
        if change is not None:
            change()
        return await super().request_permission(call, options)


async def _turn(
    workspace: Path, ledger: EffectLedger, change: Callable[[], None] | None, editor: object
) -> tuple[EditingSink, FakeProvider]:
    provider = FakeProvider(
        [start(), *tool_call("c1", "edit_file", EDIT), finish(FinishReason.TOOL_CALLS)],
        [start(), *text("Done."), finish()],
    )
    sink = EditingSink(change)
    request = make_request(provider, sink, ledger=ledger)
    request = dataclasses.replace(
        request,
        tools={"edit_file": EditFile()},
        make_context=lambda: ToolContext(
            session_id="s1",
            cwd=workspace,
            roots=(workspace,),
            editor=editor,  # type: ignore[arg-type]
        ),
    )
    await Turn(request).run()
    return sink, provider


@pytest.mark.requirement("WS-STALE-001")
@pytest.mark.requirement("WS-STALE-004")
@pytest.mark.parametrize("through", ["disk", "editor"])
async def test_the_refused_call_fails_and_the_same_call_runs_again(
    workspace: Path, make_editor, through: str
) -> None:
    notes = workspace / "notes.txt"
    editor = make_editor() if through == "editor" else None

    def users_edit() -> None:
        if editor is None:
            notes.write_text(USERS)
        else:
            editor.buffers[str(notes)] = USERS  # unsaved, in the editor

    ledger = EffectLedger.in_memory()
    sink, provider = await _turn(workspace, ledger, users_edit, editor)
    (failed,) = [
        u for u in sink.updates if isinstance(u, ToolCallChanged) and u.status is ToolStatus.FAILED
    ]
    assert failed.content == (TextContent(CHANGED),)  # the editor sees why
    assert CHANGED in repr(provider.requests[1])  # and so does the model
    assert notes.read_text() == ("one\ntwo\nthree\n" if editor else USERS)
    key = EffectKey.derive("s1-turn1", "edit_file", EDIT)
    record = ledger.lookup(key)
    assert record is not None
    assert record.state is EffectState.DONE
    assert record.outcome is not None
    assert not record.outcome.final
    # The same call again (the turn sent again, the file as it is now): it runs, not reused.
    sink, _ = await _turn(workspace, ledger, None, editor)
    assert [u.status for u in sink.updates if isinstance(u, ToolCallChanged) and u.status] == [
        ToolStatus.IN_PROGRESS,
        ToolStatus.COMPLETED,
    ]
    assert notes.read_text() == "one\n2\nthree\nthe user's line\n"  # on the user's version
    record = ledger.lookup(key)
    assert record is not None
    assert record.outcome is not None
    assert record.outcome.final


# -- over the wire: the editor edits the file, then answers the permission request ------------

REDO = {
    "name": "stale-edit",
    "description": "an edit refused as stale, a read, the same edit again",
    "calls": [
        {"attempts": [[{"tool_call": "edit_file", "arguments": EDIT}, {"finish": "auto"}]]},
        {
            "attempts": [
                [{"tool_call": "read_file", "arguments": {"path": "notes.txt"}}, {"finish": "auto"}]
            ]
        },
        {"attempts": [[{"tool_call": "edit_file", "arguments": EDIT}, {"finish": "auto"}]]},
        {"attempts": [[{"text": "Edited."}, {"finish": "stop"}]]},
    ],
}


@pytest.mark.requirement("WS-STALE-001")
@pytest.mark.requirement("WS-STALE-003")
@pytest.mark.parametrize("fs", [False, True], ids=["local-disk", "editor-fs"])
async def test_over_the_wire_a_stale_edit_fails_and_the_redone_edit_lands(
    tmp_path: Path, fs: bool
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    notes = workspace / "notes.txt"
    notes.write_text("one\ntwo\nthree\n")
    allow = choose("allow_once")
    asked = 0

    def edit_then_allow(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal asked
        asked += 1
        if asked == 1:  # the user saves a change while the first prompt is open
            notes.write_text(USERS)
        return allow(params)

    provider = RecordingProvider(ScriptedProvider(loads_script(json.dumps(REDO)), delay_ms=0))
    config = scripted_config(tmp_path / "state", provider=provider)
    async with running_bridge(config, fs=fs, permission=edit_then_allow) as ed:
        await ed.initialize()
        session = await ed.new_session(workspace)
        reply = await ed.prompt(session, "edit the notes")
        updates = ed.updates(session)
    assert reply["result"]["stopReason"] == "end_turn"
    ends = [u for u in updates if u.get("status") in ("completed", "failed")]
    assert [u["status"] for u in ends] == ["failed", "completed", "completed"]
    assert ends[0]["content"] == [{"type": "content", "content": {"type": "text", "text": CHANGED}}]
    assert CHANGED in repr(provider.requests[1])  # the model read why
    assert notes.read_text() == "one\n2\nthree\nthe user's line\n"  # the user's line kept
