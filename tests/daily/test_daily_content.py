"""Prompt content: images per provider, text-only models, journal and replay (14.1)."""

from __future__ import annotations

import base64
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from daily.media_kit import agent_text, inline_parts, refusal, refused_upstream, round_trip
from daily.test_daily_instructions import PROVIDERS

pytestmark = pytest.mark.anyio

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-pixels").decode()
GIF = base64.b64encode(b"GIF89a-fake").decode()
PROMPT: list[dict[str, Any]] = [
    {"type": "text", "text": "What is in these?"},
    {"type": "image", "data": PNG, "mimeType": "image/png"},
    {
        "type": "resource",
        "resource": {"uri": "file:///tmp/shot.gif", "blob": GIF, "mimeType": "image/gif"},
    },
]


def images_of(kind: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(media type, base64 data) of every image in the request body's user turns."""
    found: list[tuple[str, str]] = []
    if kind == "openai":
        for message in body["messages"]:
            if message["role"] == "user" and isinstance(message["content"], list):
                for part in message["content"]:
                    if part["type"] == "image_url":
                        url = part["image_url"]["url"]
                        head, data = url.split(",", 1)
                        assert head.startswith("data:")
                        assert head.endswith(";base64")
                        found.append((head[5:-7], data))
    elif kind == "anthropic":
        for message in body["messages"]:
            for block in message["content"]:
                if block["type"] == "image":
                    source = block["source"]
                    assert source["type"] == "base64"
                    found.append((source["media_type"], source["data"]))
    else:
        found.extend(inline_parts(body))
    return found


@pytest.mark.requirement("CONTENT-001")
@pytest.mark.requirement("CONTENT-002")
@pytest.mark.requirement("CONTENT-005")
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
async def test_images_reach_each_provider_in_its_format(tmp_path: Path, kind: str) -> None:
    trip = await round_trip(tmp_path, kind, "m", PROMPT, listed="gpt-4o")
    assert trip.prompt_capabilities["image"] is True
    expected = [("image/png", PNG), ("image/gif", GIF)]
    assert images_of(kind, trip.first) == expected
    assert images_of(kind, trip.second) == expected  # the journaled history: the images again
    assert "What is in these?" in str(trip.first)
    # CONTENT-005: session/load replays the prompt's image blocks as they were sent.
    assert trip.replayed[:3] == PROMPT


@pytest.mark.requirement("CONTENT-003")
async def test_a_text_only_model_refuses_images_by_name(tmp_path: Path) -> None:
    config = scripted_config(tmp_path / "s", models=("deepseek/deepseek-chat",))
    async with running_bridge(config) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        refused = await ed.request("session/prompt", {"sessionId": session, "prompt": PROMPT})
        assert refused["error"]["code"] == -32602
        message = refused["error"]["message"]
        assert "'deepseek/deepseek-chat' takes text only" in message
        assert "switch to a model that accepts images" in message
        # The bridge keeps serving; text still works.
        assert (await ed.prompt(session, "/hello"))["result"]["stopReason"] == "end_turn"


@pytest.mark.requirement("CONTENT-004")
async def test_bad_or_oversized_images_are_refused_with_the_fix(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)

        def refused(block: dict[str, Any]) -> Awaitable[str]:
            return refusal(ed, session, block)

        assert "image/png" in await refused({"type": "image", "data": PNG, "mimeType": "image/x"})
        assert "not valid base64" in await refused(
            {"type": "image", "data": "@@@", "mimeType": "image/png"}
        )
        big = "A" * (8 * 1024 * 1024 + 4)
        assert "send smaller or fewer images" in await refused(
            {"type": "image", "data": big, "mimeType": "image/png"}
        )


@pytest.mark.requirement("CONTENT-002")
async def test_the_scripted_model_says_how_many_images_it_received(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        prompt = [{"type": "text", "text": "/hello look"}, PROMPT[1], PROMPT[2]]
        reply = await ed.call("session/prompt", {"sessionId": session, "prompt": prompt})
        assert reply["stopReason"] == "end_turn"
        shown = agent_text(ed, session)
    assert "[2 images attached]" in shown


@pytest.mark.requirement("CONTENT-003")
async def test_a_text_only_model_is_never_sent_the_image(tmp_path: Path) -> None:
    _, error = await refused_upstream(tmp_path, "openai", "gpt-3.5-turbo", PROMPT)
    assert "'gpt-3.5-turbo' takes text only" in error["message"]
