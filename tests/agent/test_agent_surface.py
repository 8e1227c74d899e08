"""The agent surface's rules: ordering, errors, modes, models, auth and cancellation."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from bridge import running_bridge, scripted_config

from acp_bridge.providers.scripted import ScriptedProvider, loads_script

pytestmark = pytest.mark.anyio


@pytest.mark.requirement("AGENT-ORDER-001")
async def test_no_update_before_the_session_new_response(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await ed.prompt(session, "/hello")
        kinds = ["response" if "result" in m else m.get("method") for m in ed.received]
    first_update = kinds.index("session/update")
    assert kinds[:first_update] == ["response", "response"]  # initialize, session/new
    commands = ed.updates(session)[0]
    assert commands["sessionUpdate"] == "available_commands_update"
    names = {c["name"] for c in commands["availableCommands"]}
    assert {"hello", "broken-mid-word", "help-desk-refund"} <= names


@pytest.mark.requirement("AGENT-ERR-001")
async def test_errors_are_precise_and_serving_continues(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        relative = await ed.request("session/new", {"cwd": "rel/dir", "mcpServers": []})
        assert relative["error"]["code"] == -32602
        assert "absolute" in relative["error"]["message"]
        unknown = await ed.request(
            "session/prompt", {"sessionId": "sess_nope", "prompt": [{"type": "text", "text": "x"}]}
        )
        assert unknown["error"]["code"] == -32002
        assert "Unknown session" in unknown["error"]["message"]
        media = await ed.request(
            "session/prompt",
            {
                "sessionId": await ed.new_session(tmp_path),
                "prompt": [{"type": "audio", "data": "AA==", "mimeType": "audio/x-unknown"}],
            },
        )
        assert media["error"]["code"] == -32602
        missing = await ed.request("session/new", {"mcpServers": []})
        assert missing["error"]["code"] == -32602
        assert missing["error"]["data"]["errors"][0]["field"] == "cwd"
        unknown_method = await ed.request("session/fly", {})
        assert unknown_method["error"]["code"] == -32601
        # A cancel for an idle or unknown session is harmless.
        await ed.notify("session/cancel", {"sessionId": "sess_nope"})
        session = await ed.new_session(tmp_path)
        assert (await ed.prompt(session, "/hello"))["result"]["stopReason"] == "end_turn"


@pytest.mark.requirement("AGENT-SESS-001")
async def test_sessions_are_independent(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        one, two = await ed.new_session(tmp_path), await ed.new_session(tmp_path)
        assert one != two
        async with anyio.create_task_group() as tg:
            tg.start_soon(ed.prompt, one, "/broken-mid-word")
            tg.start_soon(ed.prompt, two, "/hello")
        assert any((u.get("_meta") or {}).get("reset") for u in ed.updates(one))
        assert not any((u.get("_meta") or {}).get("reset") for u in ed.updates(two))


@pytest.mark.requirement("AGENT-MODE-001")
async def test_modes_and_read_only_refuses_side_effects(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        result = await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        session = result["sessionId"]
        assert result["modes"]["currentModeId"] == "ask"
        assert [m["id"] for m in result["modes"]["availableModes"]] == [
            "ask",
            "auto-edit",
            "read-only",
        ]
        bad = await ed.request("session/set_mode", {"sessionId": session, "modeId": "yolo"})
        assert bad["error"]["code"] == -32602
        await ed.call("session/set_mode", {"sessionId": session, "modeId": "read-only"})
        reply = await ed.prompt(session, "/tool-call-broken-before-finish")
        updates = ed.updates(session)
    assert reply["result"]["stopReason"] == "end_turn"
    assert {"sessionUpdate": "current_mode_update", "currentModeId": "read-only"} in updates
    assert not (tmp_path / "scripted-note.txt").exists()
    assert not ed.requests_of("session/request_permission")
    failed = [
        u
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "failed"
    ]
    assert len(failed) == 1


@pytest.mark.requirement("AGENT-MODE-001")
async def test_auto_edit_writes_without_asking(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await ed.call("session/set_mode", {"sessionId": session, "modeId": "auto-edit"})
        await ed.prompt(session, "/tool-call-broken-before-finish")
    assert (tmp_path / "scripted-note.txt").exists()
    assert not ed.requests_of("session/request_permission")


@pytest.mark.requirement("AGENT-MODEL-001")
async def test_model_config_option(tmp_path: Path) -> None:
    config = scripted_config(tmp_path / "s", models=("scripted", "scripted-large"))
    async with running_bridge(config) as ed:
        await ed.initialize()
        result = await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        (option,) = result["configOptions"]
        assert (option["id"], option["category"], option["currentValue"]) == (
            "model",
            "model",
            "scripted",
        )
        changed = await ed.call(
            "session/set_config_option",
            {"sessionId": result["sessionId"], "configId": "model", "value": "scripted-large"},
        )
        assert changed["configOptions"][0]["currentValue"] == "scripted-large"
        bad = await ed.request(
            "session/set_config_option",
            {"sessionId": result["sessionId"], "configId": "model", "value": "gpt-9"},
        )
        assert bad["error"]["code"] == -32602


@pytest.mark.requirement("AGENT-AUTH-001")
async def test_missing_api_key_means_auth_required(tmp_path: Path) -> None:
    config = scripted_config(tmp_path / "s", missing_key_vars=("OPENAI_API_KEY",))
    async with running_bridge(config) as ed:
        init = await ed.initialize()
        assert init["authMethods"][0]["id"] == "api-key"
        assert "OPENAI_API_KEY" in init["authMethods"][0]["description"]
        reply = await ed.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert reply["error"]["code"] == -32000
        assert "OPENAI_API_KEY" in reply["error"]["message"]
        auth = await ed.request("authenticate", {"methodId": "api-key"})
        assert auth["error"]["code"] == -32000


SLOW = {
    "name": "slow",
    "description": "streams slowly so a cancel lands mid-stream",
    "calls": [
        {
            "attempts": [
                [
                    {"text": "one "},
                    {"text": "two ", "delay_ms": 5000},
                    {"text": "three ", "delay_ms": 5000},
                    {"finish": "stop"},
                ]
            ]
        }
    ],
}


@pytest.mark.requirement("AGENT-CANCEL-001")
async def test_cancel_while_streaming_answers_cancelled_and_nothing_after(tmp_path: Path) -> None:
    provider = ScriptedProvider(loads_script(json.dumps(SLOW)))
    async with running_bridge(scripted_config(tmp_path / "s", provider=provider)) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        async with anyio.create_task_group() as tg:
            replies: list[dict[str, object]] = []

            async def prompt() -> None:
                replies.append(await ed.prompt(session, "go"))

            tg.start_soon(prompt)
            with anyio.fail_after(5):
                while not any(
                    u["sessionUpdate"] == "agent_message_chunk" for u in ed.updates(session)
                ):
                    await anyio.wait_all_tasks_blocked()
            await ed.notify("session/cancel", {"sessionId": session})
        assert replies[0]["result"]["stopReason"] == "cancelled"  # type: ignore[index]
        index = next(i for i, m in enumerate(ed.received) if m.get("id") == replies[0]["id"])
        assert all(m.get("method") != "session/update" for m in ed.received[index + 1 :])


@pytest.mark.requirement("AGENT-CANCEL-001")
async def test_cancel_while_permission_pending_sends_cancel_request(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        release = ed.hold_permissions()
        async with anyio.create_task_group() as tg:
            replies: list[dict[str, object]] = []

            async def prompt() -> None:
                replies.append(await ed.prompt(session, "/tool-call-broken-before-finish"))

            tg.start_soon(prompt)
            with anyio.fail_after(5):
                await ed.permission_asked.wait()
            await ed.notify("session/cancel", {"sessionId": session})
            with anyio.fail_after(5):
                while not any(m.get("method") == "$/cancel_request" for m in ed.received):
                    await anyio.wait_all_tasks_blocked()
            release.set()
        assert replies[0]["result"]["stopReason"] == "cancelled"  # type: ignore[index]
        permission_id = ed.requests_of("session/request_permission")[0]["id"]
        cancel = next(m for m in ed.received if m.get("method") == "$/cancel_request")
        assert cancel["params"] == {"requestId": permission_id}
    assert not (tmp_path / "scripted-note.txt").exists()


@pytest.mark.requirement("AGENT-ERR-001")
async def test_agent_errors_name_their_field_like_validation_errors(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        relative = await ed.request("session/new", {"cwd": "rel/dir", "mcpServers": []})
        session = await ed.new_session(tmp_path)
        mode = await ed.request("session/set_mode", {"sessionId": session, "modeId": "yolo"})
    for reply, field in ((relative, "cwd"), (mode, "modeId")):
        (error,) = reply["error"]["data"]["errors"]
        assert error["field"] == field
        # The message may quote the offending value once; the problem never repeats it.
        assert reply["error"]["message"].startswith(error["problem"])


ALWAYS_BROKEN = {
    "name": "always-broken",
    "description": "every attempt breaks mid-stream",
    "calls": [
        {
            "attempts": [
                [
                    {"text": "partial "},
                    {"break": "overloaded", "message": "upstream overloaded"},
                ]
            ]
        }
    ],
}


@pytest.mark.requirement("TURN-012")
async def test_exhausted_retries_give_a_clear_error_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    broken = ScriptedProvider(loads_script(json.dumps(ALWAYS_BROKEN)))
    async with running_bridge(scripted_config(tmp_path / "s", provider=broken)) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        failed = await ed.prompt(session, "try")
        error = failed["error"]
        assert error["code"] == -32603
        assert error["message"] != "Internal error"
        assert error["data"]["reason"] == "overloaded"
        assert error["data"]["attempts"] == 4
        assert error["data"]["retryableLater"] is True
        markers = [u for u in ed.updates(session) if (u.get("_meta") or {}).get("reset")]
        # The last marker is the give-up marker (RESET-010): attempt 4's text goes too.
        assert [m["_meta"]["attempt"] for m in markers] == [2, 3, 4, 4]
        assert markers[-1]["_meta"]["reason"] == "gave_up"
        # The failed turn left nothing unpaired behind: the next prompt still works.
        ok = await ed.prompt(session, "/hello")
    assert ok["result"]["stopReason"] == "end_turn"
    # The stored turn says why it failed (a replay shows it), not a bare internal error.
    from acp_bridge.sessions import SessionStore

    with SessionStore(tmp_path / "s") as store:
        first = store.turns(session)[0]
    assert first.state.value == "failed"
    assert "overloaded" in (first.note or "")
