"""list, resume, close, delete, titles, ownership, settings and retried turns, in-process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import RecordingProvider, scripted_config
from editor import choose
from sessions.sesskit import EditorLog, load, serving, settle

from acp_bridge.providers.scripted import ScriptedProvider, loads_script

pytestmark = pytest.mark.anyio

WRITE_THEN_FAIL = """{
  "name": "write-then-fail",
  "description": "Writes a file, then the next model call fails for good",
  "calls": [
    {"attempts": [[
      {"text": "Writing it. "},
      {"tool_call": "write_file", "arguments": {"path": "out.txt", "content": "one\\n"}},
      {"finish": "auto"}
    ]]},
    {"attempts": [[{"http_error": 400, "message": "bad request"}]]}
  ]
}"""


@pytest.mark.requirement("SESS-041")
async def test_session_list_pages_newest_first_and_filters_by_cwd(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    async with serving(scripted_config(tmp_path / "state")) as editor:
        await editor.initialize()
        made = [await editor.new_session(one if i % 3 else two) for i in range(55)]
        await editor.prompt(made[0], "Tell me about the project")
        first = await editor.call("session/list", {})
        second = await editor.call("session/list", {"cursor": first["nextCursor"]})
        filtered = await editor.call("session/list", {"cwd": str(two)})
        bad_cursor = await editor.request("session/list", {"cursor": "garbage!"})
        relative = await editor.request("session/list", {"cwd": "two"})
    listed = [s["sessionId"] for s in first["sessions"] + second["sessions"]]
    assert len(first["sessions"]) == 50
    assert "nextCursor" not in second
    assert sorted(listed) == sorted(made)
    assert listed[0] == made[0]  # the prompted session is the most recent activity
    assert first["sessions"][0]["title"] == "Tell me about the project"
    assert first["sessions"][0]["updatedAt"].endswith("Z")
    assert {s["cwd"] for s in filtered["sessions"]} == {str(two)}
    assert len(filtered["sessions"]) == len([i for i in range(55) if i % 3 == 0])
    assert bad_cursor["error"]["code"] == -32602
    assert relative["error"]["code"] == -32602


@pytest.mark.requirement("SESS-042")
async def test_resume_restores_without_replay_and_keeps_the_history(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        session_id = await editor.new_session(tmp_path)
        await editor.prompt(session_id, "/hello first")
        await editor.call("session/set_mode", {"sessionId": session_id, "modeId": "auto-edit"})
    provider = RecordingProvider(ScriptedProvider(None))
    async with serving(scripted_config(state, provider)) as editor:
        await editor.initialize()
        before = len(editor.received)
        reply = await editor.request(
            "session/resume", {"sessionId": session_id, "cwd": str(tmp_path)}
        )
        await settle()
        after = editor.received[before:]
        assert reply["result"]["modes"]["currentModeId"] == "auto-edit"
        prompt = await editor.prompt(session_id, "/hello second")
        assert prompt["result"]["stopReason"] == "end_turn"
        assert prompt["result"]["_meta"]["acpBridge"]["turnId"] == f"{session_id}-turn2"
    updates = [m["params"]["update"]["sessionUpdate"] for m in after if "method" in m]
    assert after[0] == reply
    assert updates == ["available_commands_update"]  # nothing replayed
    (request,) = provider.requests
    texts = [getattr(m, "parts", None) or getattr(m, "text", None) for m in request.messages]
    assert texts[0] == ("/hello first",)
    assert texts[-1] == ("/hello second",)


@pytest.mark.requirement("SESS-043")
async def test_close_cancels_the_running_turn_and_frees_the_session(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        session_id = await editor.new_session(tmp_path)
        editor.hold_permissions()
        async with anyio.create_task_group() as tg:
            replies: list[dict[str, Any]] = []

            async def prompt() -> None:
                replies.append(await editor.prompt(session_id, "/help-desk-refund-file"))

            tg.start_soon(prompt)
            with anyio.fail_after(10):
                await editor.permission_asked.wait()
            closed = await editor.call("session/close", {"sessionId": session_id})
        again = await editor.call("session/close", {"sessionId": session_id})
        gone = await editor.prompt(session_id, "/hello")
    assert closed == {}
    assert again == {}
    assert replies[0]["result"]["stopReason"] == "cancelled"
    assert gone["error"]["code"] == -32002
    assert not (tmp_path / "refunds").exists()
    async with serving(scripted_config(state)) as other:  # freed: another connection opens it
        await other.initialize()
        reply, replayed = await load(other, session_id, tmp_path)
    assert "result" in reply
    calls = [u for u in replayed if u["sessionUpdate"] == "tool_call"]
    assert [c["status"] for c in calls] == ["failed"]


@pytest.mark.requirement("SESS-015")
@pytest.mark.requirement("SESS-050")
async def test_a_session_open_in_one_connection_is_refused_to_another(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with serving(scripted_config(state)) as first:
        await first.initialize()
        session_id = await first.new_session(tmp_path)
        await first.prompt(session_id, "/hello")
        async with serving(scripted_config(state)) as second:
            await second.initialize()
            refused, replayed = await load(second, session_id, tmp_path)
            resumed = await second.request(
                "session/resume", {"sessionId": session_id, "cwd": str(tmp_path)}
            )
            deleted = await second.request("session/delete", {"sessionId": session_id})
            listed = await second.call("session/list", {})
        assert (await first.prompt(session_id, "/hello"))["result"]["stopReason"] == "end_turn"
    for reply in (refused, resumed, deleted):
        error = reply["error"]
        assert error["code"] == -32603
        assert error["data"] == {
            "reason": "session_in_use",
            "sessionId": session_id,
            "ownerPid": os.getpid(),
        }
        assert "in use" in error["message"]
    assert replayed == []
    assert [s["sessionId"] for s in listed["sessions"]] == [session_id]


@pytest.mark.requirement("SESS-044")
async def test_delete_forgets_a_session_and_unknown_ones_succeed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        keep = await editor.new_session(tmp_path)
        drop = await editor.new_session(tmp_path)
        await editor.prompt(drop, "/hello")
        assert await editor.call("session/delete", {"sessionId": drop}) == {}
        assert await editor.call("session/delete", {"sessionId": "sess_never"}) == {}
        listed = await editor.call("session/list", {})
        gone = await editor.prompt(drop, "/hello")
    assert [s["sessionId"] for s in listed["sessions"]] == [keep]
    assert gone["error"]["code"] == -32002
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        missing, _ = await load(editor, drop, tmp_path)
    assert missing["error"]["code"] == -32002


@pytest.mark.requirement("SESS-033")
async def test_the_title_follows_the_first_turn_before_its_response(tmp_path: Path) -> None:
    async with serving(scripted_config(tmp_path / "state")) as editor:
        await editor.initialize()
        session_id = await editor.new_session(tmp_path)
        await settle()
        start = len(editor.received)
        await editor.prompt(session_id, "/hello   Fix the   flaky test in CI")
        first = editor.received[start:]
        start = len(editor.received)
        await editor.prompt(session_id, "/hello again")
        second = editor.received[start:]
    kinds = [m["params"]["update"]["sessionUpdate"] if "method" in m else "response" for m in first]
    assert kinds[-2:] == ["session_info_update", "response"]
    info = first[-2]["params"]["update"]
    assert info["title"] == "/hello Fix the flaky test in CI"
    assert info["updatedAt"].endswith("Z")
    assert all(
        m.get("method") != "session/update"
        or m["params"]["update"]["sessionUpdate"] != "session_info_update"
        for m in second
    )


@pytest.mark.requirement("SESS-032")
async def test_settings_survive_a_restart_but_always_answers_do_not(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with serving(scripted_config(state), permission=choose("allow_always")) as editor:
        await editor.initialize()
        session_id = await editor.new_session(tmp_path)
        await editor.call("session/set_mode", {"sessionId": session_id, "modeId": "ask"})
        await editor.prompt(session_id, "/help-desk-refund-file")
        await editor.prompt(session_id, "/help-desk-refund-file")
        asked_live = len(editor.requests_of("session/request_permission"))
    assert asked_live == 1  # the second write was allowed from memory
    async with serving(scripted_config(state), permission=choose("allow_once")) as editor:
        await editor.initialize()
        await load(editor, session_id, tmp_path)
        await editor.prompt(session_id, "/help-desk-refund-file")
        asked_after = len(editor.requests_of("session/request_permission"))
    assert asked_after == 1  # a new connection asks again


@pytest.mark.requirement("SESS-021")
async def test_a_failed_turn_sent_again_keeps_its_turn_id_and_reuses_its_effect(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(loads_script(WRITE_THEN_FAIL))
    async with serving(scripted_config(tmp_path / "state", provider)) as editor:
        log = EditorLog(editor)
        await editor.initialize()
        session_id = await editor.new_session(tmp_path)
        failed = await log.prompt(session_id, "write it")
        (tmp_path / "out.txt").write_text("changed by the user\n")
        again = await log.prompt(session_id, "write it")
        # The effect was not run a second time: the user's change is still there.
        assert (tmp_path / "out.txt").read_text() == "changed by the user\n"
        other = await log.prompt(session_id, "something else")  # a new turn: it writes
    assert failed["error"]["code"] == -32603
    assert again["error"]["code"] == -32603  # the script fails again, by design
    assert again["error"]["data"]["reason"] == "bad_request"
    assert (tmp_path / "out.txt").read_text() == "one\n"
    reused = [
        u
        for u in editor.updates(session_id)
        if u["sessionUpdate"] == "tool_call_update" and "Not run again" in str(u.get("content"))
    ]
    assert len(reused) == 1
    assert other["error"]["code"] == -32603
    ids = {u["toolCallId"] for u in editor.updates(session_id) if u["sessionUpdate"] == "tool_call"}
    assert ids == {
        f"{session_id}-turn1-t1",
        f"{session_id}-turn1-r1-t1",
        f"{session_id}-turn2-t1",
    }
