"""End to end: `python -m acp_bridge --provider openai --base-url http://127.0.0.1:PORT/v1`.

A real loopback HTTP server (tests/loopback_http.py) plays OpenAI Chat Completions streams and
breaks the first one on purpose; the bridge runs as the subprocess an editor launches, driven
over its stdio by a raw editor (e2e/stdio_editor.py) that validates every line it reads
against the official ACP v1 schema. Nothing sleeps: the server cuts the stream only after the
editor has seen the text it must later discard, and every wait is bounded by `fail_after`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from e2e.stdio_editor import StdioEditor, reset_aware_messages, spawned_bridge
from loopback_http import Fin, LoopbackServer, ReceivedRequest, Reply, Rst, Send, WaitFor, sse
from loopback_http import sse_reply as reply
from subprocess_util import bridge_argv, isolated_env

from acp_bridge.turn import EffectLedger

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]

# A cold Python start on 2 shared cores plus the bridge's retry back-off (at most 1 s).
WAIT = 60.0
MODEL = "test-model"


# --- OpenAI Chat Completions chunks (model-streams.md §1) ---------------------------------


def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> str:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body = {
        "id": "chatcmpl-e2e",
        "object": "chat.completion.chunk",
        "created": 1753357673,
        "model": MODEL,
        "choices": choices,
        **extra,
    }
    return sse(body)


def text(content: str) -> str:
    return chunk({"content": content})


def call_start(call_id: str, name: str) -> str:
    function = {"name": name, "arguments": ""}
    return chunk(
        {"tool_calls": [{"index": 0, "id": call_id, "type": "function", "function": function}]}
    )


def call_arguments(fragment: str) -> str:
    return chunk({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]})


ROLE = chunk({"role": "assistant", "content": ""})
USAGE = chunk(None, usage={"prompt_tokens": 60, "completion_tokens": 15, "total_tokens": 75})
DONE = sse("[DONE]")


def finished(*events: str, reason: str) -> Reply:
    return reply(ROLE, *events, chunk({}, reason), USAGE, DONE)


# --- one editor session against the bridge process ----------------------------------------


@dataclass
class BridgeRun:
    """What one run left behind: the wire both ways, the server's requests, the disk."""

    editor: StdioEditor
    prompt_result: dict[str, Any]
    requests: list[ReceivedRequest]
    returncode: int | None
    stderr: str
    workspace: Path
    state_dir: Path
    trace: list[dict[str, Any]] = field(default_factory=list)

    @property
    def markers(self) -> list[dict[str, Any]]:
        return [u for u in self.editor.updates if (u.get("_meta") or {}).get("reset") is True]

    def message_chunks(self) -> list[dict[str, Any]]:
        return [u for u in self.editor.updates if u["sessionUpdate"] == "agent_message_chunk"]


async def run_prompt(
    tmp_path: Path,
    replies: list[Reply],
    *,
    release: anyio.Event,
    when_shown: str,
    env: Mapping[str, str] | None = None,
    trace: bool = False,
) -> BridgeRun:
    """One session, one prompt. `release` is set once the editor has read `when_shown`."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    state_dir = tmp_path / "state"
    trace_path = tmp_path / "trace.ndjson"

    def on_update(update: Mapping[str, Any]) -> None:
        if update["sessionUpdate"] == "agent_message_chunk" and when_shown in str(
            update["content"].get("text")
        ):
            release.set()

    with anyio.fail_after(WAIT), (tmp_path / "stderr.log").open("w+b") as stderr:
        async with LoopbackServer(replies) as server:
            argv = bridge_argv(
                *("--provider", "openai", "--base-url", f"{server.base_url}/v1"),
                *("--model", MODEL, "--state-dir", str(state_dir)),
                *(("--trace", str(trace_path)) if trace else ()),
            )
            environment = isolated_env(tmp_path / "home", env)
            async with spawned_bridge(argv, env=environment, cwd=tmp_path, stderr=stderr) as proc:
                editor = StdioEditor(proc, on_update=on_update)
                await editor.initialize()
                session_id = await editor.new_session(workspace)
                result = await editor.prompt(session_id, "Please write the notes file.")
                assert await editor.close() == []
                returncode = await proc.wait()
        stderr.seek(0)
        log = stderr.read().decode("utf-8", "replace")
    records = [json.loads(line) for line in trace_path.read_text().splitlines()] if trace else []
    return BridgeRun(
        editor, result, server.requests, returncode, log, workspace, state_dir, records
    )


def provider_records(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trace's provider records (`provider_request`, `_response`, `_event`, `_error`).

    Selected by `type`: the error record's fault kind currently overwrites its `kind`.
    """
    return [r for r in trace if str(r.get("type", "")).startswith("provider_")]


def assert_one_marker_opening_attempt_2(run: BridgeRun, abandoned_text: str) -> None:
    """RESET-001/002: exactly one marker, the first chunk of attempt 2, after attempt 1's text."""
    assert len(run.markers) == 1, run.editor.updates
    (marker,) = run.markers
    # Nothing of attempt 2 (text, thought, tool call) precedes its marker.
    updates = run.editor.updates
    last_of_attempt_1 = max(
        i for i, u in enumerate(updates) if u.get("messageId", "").endswith("-m1-a1")
    )
    assert updates[last_of_attempt_1 + 1] is marker
    chunks = run.message_chunks()
    index = next(i for i, u in enumerate(chunks) if u["messageId"].endswith("-a2"))
    assert chunks[index] is marker
    assert marker["_meta"] == {"reset": True, "attempt": 2, "reason": "stream_interrupted"}
    assert marker["content"] == {"type": "text", "text": ""}
    before = chunks[:index]
    assert all(u["messageId"].endswith("-m1-a1") for u in before)
    assert "".join(u["content"]["text"] for u in before) == abandoned_text
    assert all(u["messageId"].endswith("-a2") for u in chunks[index:] if "-m1-" in u["messageId"])


# --- FIN inside a text fragment that splits a word ----------------------------------------

ABANDONED_TEXT = "The stream broke in the middle of a wo"
CUT_EVENT = text("rd, and the rest of this event never arrives")
# The socket closes inside the JSON string of the next fragment: `..."content":"rd`.
CUT_AT = CUT_EVENT.index('"rd, and') + 3
COMPLETED_TEXT = "Here is the whole answer, word for word."


def fin_in_a_word(release: anyio.Event) -> list[Reply]:
    first = reply(
        ROLE,
        text("The stream broke "),
        text("in the middle of a wo"),
        WaitFor(release),
        Send(CUT_EVENT[:CUT_AT]),
        then=Fin(),
    )
    second = finished(text("Here is the whole answer, "), text("word for word."), reason="stop")
    return [first, second]


@pytest.mark.requirement("E2E-001")
@pytest.mark.requirement("E2E-002")
@pytest.mark.requirement("RESET-001")
@pytest.mark.requirement("RESET-002")
@pytest.mark.requirement("PROV-TRANSPORT-001")
@pytest.mark.requirement("PROV-RETRY-001")
async def test_fin_inside_a_word_is_retried_with_one_reset_marker(tmp_path: Path) -> None:
    release = anyio.Event()
    run = await run_prompt(tmp_path, fin_in_a_word(release), release=release, when_shown=" a wo")

    assert run.returncode == 0, run.stderr
    assert run.prompt_result["stopReason"] == "end_turn"
    assert_one_marker_opening_attempt_2(run, ABANDONED_TEXT)
    assert reset_aware_messages(run.editor.updates) == [COMPLETED_TEXT]
    # One attempt is one upstream request, and the retry asks the same question again.
    assert [(r.method, r.path) for r in run.requests] == [("POST", "/v1/chat/completions")] * 2
    assert run.requests[0].json() == run.requests[1].json()
    assert "authorization" not in run.requests[0].headers  # a local URL needs no key
    assert run.requests[0].json()["model"] == MODEL
    assert not run.editor.permission_requests
    assert not [u for u in run.editor.updates if u["sessionUpdate"].startswith("tool_call")]


# --- RST right after a write_file tool-call event -----------------------------------------

NOTES = "notes.txt"
ABANDONED_CONTENT = "written by the abandoned attempt\n"
COMPLETED_CONTENT = "written by the completed attempt\n"


def rst_after_tool_call(release: anyio.Event) -> list[Reply]:
    abandoned_arguments = json.dumps({"path": NOTES, "content": ABANDONED_CONTENT})
    completed_arguments = json.dumps({"path": NOTES, "content": COMPLETED_CONTENT})
    half = len(completed_arguments) // 2
    first = reply(
        ROLE,
        text("I will save the notes."),
        WaitFor(release),
        call_start("call_abandoned", "write_file"),
        call_arguments(abandoned_arguments),  # a complete JSON object, but no finish_reason
        then=Rst(),
    )
    second = finished(
        text("Saving the notes now."),
        call_start("call_completed", "write_file"),
        call_arguments(completed_arguments[:half]),
        call_arguments(completed_arguments[half:]),
        reason="tool_calls",
    )
    third = finished(text("Saved notes.txt."), reason="stop")
    return [first, second, third]


@pytest.mark.requirement("E2E-002")
@pytest.mark.requirement("TURN-002")
@pytest.mark.requirement("TURN-006")
@pytest.mark.requirement("PROV-TOOL-002")
async def test_rst_after_a_tool_call_runs_only_the_completed_attempts_call(
    tmp_path: Path,
) -> None:
    release = anyio.Event()
    run = await run_prompt(
        tmp_path,
        rst_after_tool_call(release),
        release=release,
        when_shown="save the notes",
        trace=True,
    )

    assert run.returncode == 0, run.stderr
    assert run.prompt_result["stopReason"] == "end_turn"
    assert_one_marker_opening_attempt_2(run, "I will save the notes.")
    assert reset_aware_messages(run.editor.updates) == ["Saving the notes now.", "Saved notes.txt."]

    # The bridge did receive the abandoned call before the reset (its trace says so) ...
    first_attempt = [r for r in provider_records(run.trace) if r["attempt"] == 1]
    assert any("call_abandoned" in str(r.get("data")) for r in first_attempt)
    errors = [r for r in provider_records(run.trace) if r["type"] == "provider_error"]
    assert [(e["attempt"], "stream_interrupted" in e.values()) for e in errors] == [(1, True)]

    # ... but it was never shown, never asked about and never run.
    wire = json.dumps(run.editor.received)
    assert ABANDONED_CONTENT.strip() not in wire
    assert "call_abandoned" not in wire
    calls = [u for u in run.editor.updates if u["sessionUpdate"] == "tool_call"]
    assert len(calls) == 1
    assert calls[0]["rawInput"] == {"path": NOTES, "content": COMPLETED_CONTENT}
    (asked,) = run.editor.permission_requests
    assert asked["toolCall"]["toolCallId"] == calls[0]["toolCallId"]
    assert (run.workspace / NOTES).read_text() == COMPLETED_CONTENT
    assert sorted(p.name for p in run.workspace.iterdir()) == [NOTES]
    with EffectLedger(run.state_dir) as ledger:
        effects = [(r.tool, r.state.value) for r in ledger.records()]
    assert effects == [("write_file", "done")]  # written once

    # Two attempts of model call 1, then model call 2 with the completed call's result only.
    assert len(run.requests) == 3
    assert run.requests[0].json() == run.requests[1].json()
    history = run.requests[2].json()["messages"]
    assert "call_abandoned" not in json.dumps(history)
    assistant, result = history[-2:]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_completed"]
    assert (result["role"], result["tool_call_id"]) == ("tool", "call_completed")


# --- --trace FILE ---------------------------------------------------------------------------


@pytest.mark.requirement("E2E-003")
@pytest.mark.requirement("PROV-SECRET-001")
async def test_trace_has_both_directions_and_attempts_and_never_the_key(tmp_path: Path) -> None:
    key = f"sk-test-SECRET-{secrets.token_hex(16)}"
    release = anyio.Event()
    run = await run_prompt(
        tmp_path,
        fin_in_a_word(release),
        release=release,
        when_shown=" a wo",
        env={"OPENAI_API_KEY": key},
        trace=True,
    )

    assert run.returncode == 0, run.stderr
    # The key was really in play: the server got it on both attempts.
    assert [r.headers.get("authorization") for r in run.requests] == [f"Bearer {key}"] * 2
    trace_text = (tmp_path / "trace.ndjson").read_text()
    assert key not in trace_text
    assert key not in run.stderr
    assert key not in json.dumps(run.editor.received)

    rpc = [r for r in run.trace if r["kind"] == "jsonrpc"]
    inbound = [r["message"] for r in rpc if r["dir"] == "editor->bridge"]
    outbound = [r["message"] for r in rpc if r["dir"] == "bridge->editor"]
    assert inbound == run.editor.sent
    assert outbound == run.editor.received

    provider = provider_records(run.trace)
    assert all(isinstance(r.get("attempt"), int) and r["provider"] == "openai" for r in provider)
    seen = {(r["type"], r["attempt"]) for r in provider}
    assert {
        ("provider_request", 1),
        ("provider_response", 1),
        ("provider_event", 1),
        ("provider_error", 1),
        ("provider_request", 2),
        ("provider_response", 2),
        ("provider_event", 2),
    } <= seen
    assert ("provider_error", 2) not in seen
    requests = [r for r in provider if r["type"] == "provider_request"]
    assert all(r["headers"].get("authorization") != f"Bearer {key}" for r in requests)
    events = [r["data"] for r in provider if r["type"] == "provider_event" and r["attempt"] == 2]
    assert events[-1] == "[DONE]"
