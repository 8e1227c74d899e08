"""What the real-model try (llama.cpp's server, qwen2.5-coder) exposed, fixed (issue 14).

- llama.cpp's "The model produced output that does not match the expected peg-native format"
  (its chat parser could not read the model's output) is final: one request, then a message
  saying what happened and what to try, never four identical attempts (UNPARSED-001). The
  bodies are llama.cpp's own, as its server sent them to the bridge in that try: an HTTP 500
  before the stream, and an error event after the stream's first content chunk. It is asked
  again once, not as is: with the format spelled out after the user's words (UNPARSED-002).
- `promptCapabilities` advertises images and audio only when a configured model takes them
  (PROMPTCAP-001).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from loopback_http import LoopbackServer, json_reply, sse, sse_reply

from acp_bridge.client import spawn_bridge
from acp_bridge.providers import (
    FaultKind,
    ModelInfo,
    ModelRequest,
    ToolSpec,
    UserTurn,
    prompt_media,
)
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpProviderOptions,
    OpenAIProvider,
    error_from_payload,
)
from acp_bridge.providers.http import error_from_status as from_status
from acp_bridge.turn import RetryPolicy
from acp_bridge.turn._model_call import FORMAT_HINT

pytestmark = pytest.mark.anyio

PEG_NATIVE = {
    "error": {
        "code": 500,
        "message": "The model produced output that does not match the expected peg-native format",
        "type": "server_error",
    }
}
OLDER_BUILD = {
    "error": {
        "code": 500,
        "message": 'Failed to parse input at pos 13: ```json\n{"entries": []}\n```',
        "type": "server_error",
    }
}
QWEN = "qwen2.5-coder-1.5b"


def _chunk(delta: dict[str, Any]) -> str:
    return sse(
        {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
    )


@pytest.mark.requirement("UNPARSED-001")
@pytest.mark.parametrize("body", [PEG_NATIVE, OLDER_BUILD])
def test_the_servers_parse_failure_is_final(body: dict[str, Any]) -> None:
    before = from_status("openai", 500, {}, json.dumps(body).encode())
    inside = error_from_payload("openai", body)
    for error in (before, inside):
        assert (error.kind, error.retryable) == (FaultKind.UNPARSED_OUTPUT, False)
        decision = RetryPolicy().decide(error, attempt=1, retries_in_turn=0, random=lambda: 0.5)
        assert not decision.retry


@pytest.mark.requirement("UNPARSED-001")
def test_other_server_errors_stay_retryable() -> None:
    busy = {"error": {"code": 500, "message": "Internal server error", "type": "server_error"}}
    error = from_status("openai", 500, {}, json.dumps(busy).encode())
    assert (error.kind, error.retryable) == (FaultKind.SERVER_ERROR, True)
    # The same words in a client error are the request's fault, not the model's output.
    error = from_status("openai", 400, {}, json.dumps(PEG_NATIVE).encode())
    assert error.kind is FaultKind.BAD_REQUEST


async def _prompt(tmp_path: Path, *replies: Any) -> tuple[dict[str, Any], list[Any], list[Any]]:
    async with LoopbackServer(list(replies)) as server:
        options = HttpProviderOptions(QWEN, base_url=server.base_url, idle_timeout=20.0)
        config = scripted_config(tmp_path / "s", OpenAIProvider(options), models=(QWEN,))
        async with running_bridge(config) as ed:
            await ed.initialize()
            session = await ed.new_session(tmp_path)
            with anyio.fail_after(60):
                answer = await ed.request(
                    "session/prompt",
                    {"sessionId": session, "prompt": [{"type": "text", "text": "Plan it"}]},
                )
            updates = ed.updates(session)
        return answer, [request.json() for request in server.requests], updates


def _unparsed(where: str) -> Any:
    if where == "before the stream":
        return json_reply(500, PEG_NATIVE)
    # What llama.cpp streamed: the fence as content, then the parser's error.
    return sse_reply(
        _chunk({"role": "assistant", "content": None}),
        _chunk({"content": "```"}),
        _chunk({"content": "json\n"}),
        sse(PEG_NATIVE),
    )


def _last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


@pytest.mark.requirement("UNPARSED-001")
@pytest.mark.requirement("UNPARSED-002")
@pytest.mark.parametrize("where", ["before the stream", "inside the stream"])
async def test_a_turn_ends_after_the_hinted_request_naming_what_to_try(
    tmp_path: Path, where: str
) -> None:
    answer, bodies, _updates = await _prompt(tmp_path, _unparsed(where), _unparsed(where))
    # Before the fix: 4 identical requests, the same output each time.
    assert len(bodies) == 2
    assert _last_user_text(bodies[0]) == "Plan it"
    assert _last_user_text(bodies[1]) == FORMAT_HINT
    assert bodies[1]["messages"][:-1] == bodies[0]["messages"]
    error = answer["error"]
    assert error["data"]["reason"] == "unparsed_output"
    assert error["data"]["giveUp"] == "not_retryable"
    message = error["message"]
    assert "could not be parsed as a tool call" in message
    assert "does not match the expected peg-native format" in message
    assert "not sent again" in message
    assert "trying again later" not in message
    assert "in other words" in message


def _called() -> Any:
    """A well-formed call, as llama.cpp streams it."""
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "list_directory", "arguments": '{"path": "."}'},
    }
    return sse_reply(
        _chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
        sse({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        "data: [DONE]\n\n",
    )


def _answered() -> Any:
    return sse_reply(
        _chunk({"role": "assistant", "content": "Nothing here yet."}),
        sse({"id": "c2", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        "data: [DONE]\n\n",
    )


@pytest.mark.requirement("UNPARSED-002")
@pytest.mark.requirement("UNPARSED-003")
async def test_the_hinted_request_recovers_the_turn(tmp_path: Path) -> None:
    answer, bodies, updates = await _prompt(
        tmp_path, _unparsed("inside the stream"), _called(), _answered()
    )
    assert answer["result"]["stopReason"] == "end_turn"
    assert len(bodies) == 3
    # The hint went with the retry only: the next model call carries the history as it is.
    assert all(FORMAT_HINT not in json.dumps(body) for body in (bodies[0], bodies[2]))
    # So did the call required of the model (before: no tool_choice in any request).
    assert [body.get("tool_choice") for body in bodies] == [None, "required", None]
    assert bodies[1]["tools"] == bodies[0]["tools"]
    kinds = [u["sessionUpdate"] for u in updates]
    assert "tool_call" in kinds
    # The fence shown by the abandoned attempt is cleared by the next attempt's reset.
    texts = [u for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert texts[0]["content"]["text"].startswith("```")
    assert texts[-1]["content"]["text"] == "Nothing here yet."
    assert any(u.get("_meta", {}).get("reset") for u in updates)


@pytest.mark.requirement("UNPARSED-003")
async def test_a_server_refusing_the_required_call_gets_the_hint_alone(tmp_path: Path) -> None:
    refused = json_reply(
        400,
        {
            "error": {
                "message": "tool_choice 'required' is not supported",
                "type": "invalid_request_error",
                "param": "tool_choice",
            }
        },
    )
    answer, bodies, updates = await _prompt(
        tmp_path, _unparsed("before the stream"), refused, _called(), _answered()
    )
    assert answer["result"]["stopReason"] == "end_turn"
    assert [body.get("tool_choice") for body in bodies] == [None, "required", None, None]
    assert [_last_user_text(body) for body in bodies[:3]] == ["Plan it", FORMAT_HINT, FORMAT_HINT]
    assert "tool_call" in [u["sessionUpdate"] for u in updates]


@pytest.mark.requirement("UNPARSED-003")
async def test_a_bad_request_without_the_required_call_stays_final(tmp_path: Path) -> None:
    bad = json_reply(400, {"error": {"message": "bad messages", "type": "invalid_request_error"}})
    answer, bodies, _updates = await _prompt(tmp_path, _unparsed("before the stream"), bad, bad)
    assert answer["error"]["data"]["reason"] == "bad_request"
    # One retry without the field, then the request's own fault ends the turn.
    assert [body.get("tool_choice") for body in bodies] == [None, "required", None]


def _tool_required_in(kind: str, body: dict[str, Any]) -> object:
    return body.get("toolConfig" if kind == "gemini" else "tool_choice")


@pytest.mark.requirement("UNPARSED-003")
def test_each_provider_says_a_call_is_required_in_its_own_words() -> None:
    tool = ToolSpec("list_directory", "List a directory.", {"type": "object", "properties": {}})
    expected = {
        "openai": "required",
        "anthropic": {"type": "any"},
        "gemini": {"functionCallingConfig": {"mode": "ANY"}},
    }
    for kind, provider_type in (
        ("openai", OpenAIProvider),
        ("anthropic", AnthropicProvider),
        ("gemini", GeminiProvider),
    ):
        options = HttpProviderOptions("m", base_url="http://127.0.0.1:9", api_key="k")
        provider = provider_type(options)
        messages = (UserTurn(("hi",)),)
        for required, seen in ((False, None), (True, expected[kind])):
            request = ModelRequest("m", messages, (tool,), tool_required=required)
            assert _tool_required_in(kind, provider.render(request, "m").body) == seen, kind
        # No tools offered: nothing to require.
        bare = provider.render(ModelRequest("m", messages, tool_required=True), "m").body
        assert _tool_required_in(kind, bare) is None
    # Anthropic refuses a forced tool use beside extended thinking: thinking wins.
    thinking = AnthropicProvider(
        HttpProviderOptions("m", base_url="http://127.0.0.1:9", api_key="k", thinking_budget=2048)
    )
    request = ModelRequest("m", (UserTurn(("hi",)),), (tool,), reasoning="low", tool_required=True)
    body = thinking.render(request, "m").body
    assert "thinking" in body
    assert "tool_choice" not in body


@pytest.mark.requirement("PROMPTCAP-001")
def test_prompt_media_is_what_the_configured_models_take() -> None:
    assert prompt_media("openai", (QWEN,), {}) == (False, False)
    assert prompt_media("openai", ("gpt-4o",), {}) == (True, False)
    assert prompt_media("openai", (QWEN, "gpt-4o-audio-preview"), {}) == (True, True)
    declared = {QWEN: ModelInfo(inputs=frozenset({"text", "image"}))}
    assert prompt_media("openai", (QWEN,), declared) == (True, False)
    assert prompt_media("anthropic", ("claude-sonnet-4-5",), {}) == (True, False)
    assert prompt_media("gemini", ("gemini-2.5-flash",), {}) == (True, True)
    assert prompt_media("scripted", ("scripted",), {}) == (True, True)


@pytest.mark.requirement("PROMPTCAP-001")
async def test_a_text_only_model_alone_advertises_no_image(tmp_path: Path) -> None:
    options = HttpProviderOptions(QWEN, base_url="http://127.0.0.1:9/v1")
    for models, image in (((QWEN,), False), ((QWEN, "gpt-4o"), True)):
        config = scripted_config(tmp_path / "s", OpenAIProvider(options), models=models)
        async with running_bridge(config) as ed:
            caps = (await ed.initialize())["agentCapabilities"]["promptCapabilities"]
        assert (caps["image"], caps["audio"]) == (image, False)


@pytest.mark.requirement("PROMPTCAP-001")
async def test_the_command_line_advertises_what_its_model_takes(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    for key in [k for k in env if k.startswith("ACP_BRIDGE_")]:
        del env[key]
    args = ["--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", QWEN]
    args += ["--state-dir", str(tmp_path / "state")]
    with anyio.fail_after(60):
        async with spawn_bridge(args, env=env) as bridge:
            result = await bridge.client.initialize({"session": {"notices": {}}})
            sent = bridge.client.transcript[0].message["params"]
    assert sent["clientCapabilities"]["session"] == {"notices": {}}  # as transcript.py sends
    caps = result["agentCapabilities"]["promptCapabilities"]
    assert (caps["image"], caps["audio"], caps["embeddedContext"]) == (False, False, True)
