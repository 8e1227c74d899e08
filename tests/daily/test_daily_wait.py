"""Retries people can see: retry notices, a stalled-stream notice, a cap on the waiting, and
an idle timeout that SSE keep-alive comments do not reset (14.6, 11.9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from loopback_http import KeepAlive, LoopbackServer, WaitFor, drain, sse, sse_reply
from turn.turnkit import (
    FakeProvider,
    Hold,
    RecordingSink,
    broken,
    finish,
    make_request,
    start,
    text,
)

from acp_bridge.providers import FaultKind, ModelRequest, UserTurn
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider
from acp_bridge.turn import RetryPolicy, TurnFailed, TurnUpdate, UserNotice, run_turn

pytestmark = pytest.mark.anyio


async def initialize(ed: Any, notices: bool) -> None:
    caps: dict[str, Any] = {"fs": {"readTextFile": True, "writeTextFile": True}}
    if notices:
        caps["session"] = {"notices": {}}
    await ed.call("initialize", {"protocolVersion": 1, "clientCapabilities": caps})


@pytest.mark.requirement("WAIT-001")
@pytest.mark.parametrize("notices", [True, False])
async def test_a_retry_is_told_in_words(tmp_path: Path, notices: bool) -> None:
    provider = FakeProvider(
        [start(), *text("Hel"), broken()],
        [start(), broken(FaultKind.RATE_LIMITED, status=429, retry_after=0.01)],
        [start(), *text("Hello."), finish()],
    )
    async with running_bridge(scripted_config(tmp_path / "s", provider)) as ed:
        await initialize(ed, notices)
        session = await ed.new_session(tmp_path)
        reply = await ed.prompt(session, "hi")
        assert reply["result"]["stopReason"] == "end_turn"
        updates = ed.updates(session)
    shown = [u for u in updates if u["sessionUpdate"] == "notice"]
    if not notices:  # the schema: notices only to clients that advertised them
        assert shown == []
        return
    assert [(n["severity"], n["title"]) for n in shown] == [
        ("warning", "The connection to the model broke; retrying now, attempt 2 of 4"),
        ("warning", "Rate limited by the model provider; retrying now, attempt 3 of 4"),
    ]
    assert all(n["_meta"]["acpBridge"]["kind"] == "retry" for n in shown)
    # The notice comes before the reset chunk of the attempt it announces.
    kinds = [u["sessionUpdate"] for u in updates]
    first_notice = kinds.index("notice")
    reset = next(i for i, u in enumerate(updates) if u.get("_meta", {}).get("reset"))
    assert first_notice < reset


class NoticeSink(RecordingSink):
    def __init__(self) -> None:
        super().__init__()
        self.stalled = anyio.Event()

    async def send_update(self, update: TurnUpdate) -> None:
        await super().send_update(update)
        if isinstance(update, UserNotice) and update.kind == "stalled":
            self.stalled.set()


@pytest.mark.requirement("WAIT-002")
async def test_a_stalled_stream_is_told_before_any_timeout() -> None:
    hold = Hold()
    provider = FakeProvider([start(), *text("Hel"), hold, *text("lo."), finish()])
    sink = NoticeSink()
    policy = RetryPolicy(stall_notice_after=0.05, max_wait=None)
    async with anyio.create_task_group() as tg:
        tg.start_soon(run_turn, make_request(provider, sink, policy=policy))
        with anyio.fail_after(10):
            await sink.stalled.wait()
        hold.release.set()  # the stream resumes: the turn completes normally
    notices = [u for u in sink.updates if isinstance(u, UserNotice)]
    assert len(notices) == 1
    assert notices[0].title.startswith("No data from the model for ")


@pytest.mark.requirement("WAIT-003")
async def test_a_dead_provider_is_given_up_after_max_wait() -> None:
    hold = Hold()  # never released: headers came, then nothing, for ever
    provider = FakeProvider([start(), hold])
    policy = RetryPolicy(stall_notice_after=None, max_wait=0.2)
    with anyio.fail_after(10), pytest.raises(TurnFailed) as caught:
        await run_turn(make_request(provider, RecordingSink(), policy=policy))
    assert caught.value.details["giveUp"] == "max_wait_exceeded"
    message = caught.value.message
    assert "max_wait" in message
    assert "base_url" in message
    assert len(provider.requests) == 1  # not retried as-is after the cap


@pytest.mark.requirement("WAIT-003")
async def test_no_back_off_past_max_wait() -> None:
    provider = FakeProvider([start(), broken(FaultKind.RATE_LIMITED, status=429, retry_after=20)])
    policy = RetryPolicy(max_wait=10, max_retry_after=30)
    with anyio.fail_after(10), pytest.raises(TurnFailed) as caught:
        await run_turn(make_request(provider, RecordingSink(), policy=policy))
    assert caught.value.details["giveUp"] == "max_wait_exceeded"
    assert caught.value.details["reason"] == "rate_limited"


@pytest.mark.requirement("WAIT-004")
async def test_keep_alive_comments_do_not_hold_a_stream_open() -> None:
    chunk = sse({"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hel"}}]})
    request = ModelRequest(model="", messages=[UserTurn(("hi",))])
    async with LoopbackServer([sse_reply(chunk, KeepAlive(every=0.02))]) as server:
        options = HttpProviderOptions("m", base_url=server.base_url, idle_timeout=0.3)
        async with OpenAIProvider(options) as provider:
            with anyio.fail_after(20):  # before the fix: open as long as the keep-alives
                _events, error = await drain(provider.stream(request))
    assert error is not None
    assert error.kind is FaultKind.IDLE_TIMEOUT
    assert "only keep-alives" in error.message


@pytest.mark.requirement("WAIT-003")
@pytest.mark.requirement("USAGE-004")
def test_max_wait_and_context_window_settings(tmp_path: Path) -> None:
    from acp_bridge.cli._run import build_config
    from acp_bridge.cli._settings import resolve

    config_file = tmp_path / "config.toml"
    config_file.write_text("stall_notice_after = 5\ncontext_window = 32768\n")
    settings = resolve({"max_wait": 42.0}, {"ACP_BRIDGE_CONTEXT_WINDOW": "8192"}, str(config_file))
    config = build_config(settings)
    assert config.retry_policy.max_wait == 42.0
    assert config.retry_policy.stall_notice_after == 5.0
    assert config.context_window == 8192  # the environment over the file
    off = build_config(resolve({"max_wait": 0.0}, {}, str(config_file)))
    assert off.retry_policy.max_wait is None  # 0 turns the cap off


def openai_text(*parts: str) -> list[str]:
    """An OpenAI-compatible stream: the role chunk, then `parts`, a stop and `[DONE]`."""
    choice: dict[str, Any] = {"index": 0, "delta": {"role": "assistant"}}
    chunks = [sse({"id": "c1", "choices": [choice]})]
    chunks += [sse({"id": "c1", "choices": [{"index": 0, "delta": {"content": p}}]}) for p in parts]
    stop = {"index": 0, "delta": {}, "finish_reason": "stop"}
    return [*chunks, sse({"id": "c1", "choices": [stop]}), sse("[DONE]")]


@pytest.mark.requirement("TIMEOUT-002")
@pytest.mark.requirement("WAIT-002")
async def test_a_model_silent_past_the_idle_timeout_before_its_first_token_is_waited_out() -> None:
    sink = NoticeSink()
    role, *rest = openai_text("Hello.")
    # Headers and the role chunk, then silence until the stall notice (0.6 s: three idle
    # timeouts), as a local model processing a long prompt; then the answer.
    reply = sse_reply(role, WaitFor(sink.stalled), *rest)
    policy = RetryPolicy(stall_notice_after=0.6, max_wait=None)
    async with LoopbackServer([reply]) as server:
        options = HttpProviderOptions(
            "m", base_url=server.base_url, idle_timeout=0.2, first_token_timeout=30.0
        )
        async with OpenAIProvider(options) as provider:
            with anyio.fail_after(20):
                result = await run_turn(make_request(provider, sink, policy=policy))
    # Before the fix: "The model stopped sending data; retrying now, attempt 2 of 4".
    assert (result.stop_reason, result.retries, len(server.requests)) == ("end_turn", 0, 1)
    notices = [u for u in sink.updates if isinstance(u, UserNotice)]
    assert [n.kind for n in notices] == ["stalled"]


@pytest.mark.requirement("TIMEOUT-002")
@pytest.mark.requirement("WAIT-003")
async def test_max_wait_still_caps_a_wait_for_the_first_token() -> None:
    release = anyio.Event()
    role, *_ = openai_text()
    policy = RetryPolicy(stall_notice_after=None, max_wait=0.5)
    try:
        async with LoopbackServer([sse_reply(role, WaitFor(release))]) as server:
            options = HttpProviderOptions(
                "m", base_url=server.base_url, idle_timeout=0.1, first_token_timeout=30.0
            )
            async with OpenAIProvider(options) as provider:
                with anyio.fail_after(20), pytest.raises(TurnFailed) as caught:
                    await run_turn(make_request(provider, RecordingSink(), policy=policy))
    finally:
        release.set()
    assert caught.value.details["giveUp"] == "max_wait_exceeded"
    assert len(server.requests) == 1  # neither the idle timeout nor a retry came first
