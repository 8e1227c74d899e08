"""Prompt audio: advertised where the provider takes it, per-provider bodies, refusals (14.1)."""

from __future__ import annotations

import base64
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from daily.media_kit import agent_text, inline_parts, refusal, refused_upstream, round_trip
from daily.test_daily_instructions import PROVIDERS
from loopback_http import LoopbackServer

from acp_bridge.providers.http import HttpProviderOptions

pytestmark = pytest.mark.anyio

WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt fake-samples").decode()
MP3 = base64.b64encode(b"ID3\x04\x00fake-frames").decode()
PROMPT: list[dict[str, Any]] = [
    {"type": "text", "text": "Transcribe these."},
    {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
    {
        "type": "resource",
        "resource": {"uri": "file:///tmp/memo.mp3", "blob": MP3, "mimeType": "audio/mpeg"},
    },
]
AUDIO_MODELS = {"openai": "gpt-4o-audio-preview", "gemini": "gemini-2.5-flash"}


def audio_of(kind: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(format or media type, base64 data) of every audio part in the body's user turns."""
    if kind != "openai":
        return inline_parts(body)
    return [
        (part["input_audio"]["format"], part["input_audio"]["data"])
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "input_audio"
    ]


@pytest.mark.requirement("AUDIO-001")
@pytest.mark.requirement("AUDIO-002")
@pytest.mark.requirement("AUDIO-004")
@pytest.mark.parametrize("kind", sorted(AUDIO_MODELS))
async def test_audio_reaches_each_provider_in_its_format(tmp_path: Path, kind: str) -> None:
    model = AUDIO_MODELS[kind]
    trip = await round_trip(tmp_path, kind, model, PROMPT, listed=model)
    assert trip.prompt_capabilities["audio"] is True
    expected = (
        [("wav", WAV), ("mp3", MP3)]
        if kind == "openai"
        else [("audio/wav", WAV), ("audio/mp3", MP3)]
    )
    assert audio_of(kind, trip.first) == expected
    # The next call carries the journaled history: the audio again (AUDIO-004).
    assert audio_of(kind, trip.second) == expected
    assert "Transcribe these." in str(trip.first)
    # AUDIO-004: session/load replays the prompt's audio blocks as they were sent.
    assert trip.replayed[:3] == PROMPT


@pytest.mark.requirement("AUDIO-001")
@pytest.mark.requirement("AUDIO-003")
async def test_anthropic_does_not_advertise_audio_and_refuses_it_by_name(tmp_path: Path) -> None:
    provider_type, answer = PROVIDERS["anthropic"]
    async with LoopbackServer([answer()]) as server:
        options = HttpProviderOptions("claude-sonnet-4-5", base_url=server.base_url, api_key="k")
        config = scripted_config(
            tmp_path / "s", provider_type(options), models=("claude-sonnet-4-5",)
        )
        async with running_bridge(config) as ed:
            init = await ed.initialize()
            assert init["agentCapabilities"]["promptCapabilities"]["audio"] is False
            session = await ed.new_session(tmp_path)
            refused = await ed.request("session/prompt", {"sessionId": session, "prompt": PROMPT})
            assert (await ed.prompt(session, "hi"))["result"]["stopReason"] == "end_turn"
        assert len(server.requests) == 1  # the audio prompt never reached the server
    assert refused["error"]["code"] == -32602
    message = refused["error"]["message"]
    assert "prompt[1] is audio" in message
    assert "'claude-sonnet-4-5' (Anthropic) takes no audio input" in message
    assert "--provider gemini" in message


@pytest.mark.requirement("AUDIO-003")
async def test_an_openai_model_not_known_to_take_audio_is_never_sent_it(tmp_path: Path) -> None:
    capabilities, error = await refused_upstream(tmp_path, "openai", "gpt-4o", PROMPT)
    # Not advertised (PROMPTCAP-001), and refused by name when sent all the same.
    assert capabilities["audio"] is False
    assert "'gpt-4o' is not known to take audio input" in error["message"]
    assert '[model_info."gpt-4o"] input = ["text", "audio"]' in error["message"]


@pytest.mark.requirement("AUDIO-002")
@pytest.mark.requirement("AUDIO-003")
async def test_bad_audio_is_refused_and_the_scripted_model_says_what_it_heard(
    tmp_path: Path,
) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        init = await ed.initialize()
        assert init["agentCapabilities"]["promptCapabilities"]["audio"] is True
        session = await ed.new_session(tmp_path)

        def refused(block: dict[str, Any]) -> Awaitable[str]:
            return refusal(ed, session, block)

        assert "send one of audio/wav" in await refused(
            {"type": "audio", "data": WAV, "mimeType": "audio/x-unknown"}
        )
        assert "audio whose data is not valid base64" in await refused(
            {"type": "audio", "data": "@@@", "mimeType": "audio/wav"}
        )
        big = "A" * (8 * 1024 * 1024 + 4)
        assert "send smaller or fewer audio clips" in await refused(
            {"type": "audio", "data": big, "mimeType": "audio/wav"}
        )
        prompt = [{"type": "text", "text": "/hello listen"}, PROMPT[1], PROMPT[2]]
        reply = await ed.call("session/prompt", {"sessionId": session, "prompt": prompt})
        assert reply["stopReason"] == "end_turn"
        shown = agent_text(ed, session)
    assert "[2 audio clips attached]" in shown
