"""Prompt content: images per provider, text-only models, journal and replay (14.1)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from daily.test_daily_instructions import PROVIDERS
from loopback_http import LoopbackServer

from acp_bridge.providers.http import HttpProviderOptions

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
        for content in body["contents"]:
            for part in content["parts"]:
                if "inlineData" in part:
                    found.append((part["inlineData"]["mimeType"], part["inlineData"]["data"]))
    return found


@pytest.mark.requirement("CONTENT-001")
@pytest.mark.requirement("CONTENT-002")
@pytest.mark.requirement("CONTENT-005")
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
async def test_images_reach_each_provider_in_its_format(tmp_path: Path, kind: str) -> None:
    provider_type, answer = PROVIDERS[kind]
    async with LoopbackServer([answer(), answer()]) as server:
        options = HttpProviderOptions("m", base_url=server.base_url, api_key="k")
        config = scripted_config(tmp_path / "s", provider_type(options), models=("gpt-4o",))
        async with running_bridge(config) as ed:
            init = await ed.initialize()
            assert init["agentCapabilities"]["promptCapabilities"]["image"] is True
            session = await ed.new_session(tmp_path)
            reply = await ed.call("session/prompt", {"sessionId": session, "prompt": PROMPT})
            assert reply["stopReason"] == "end_turn"
            # The next call carries the journaled history: the images again.
            await ed.prompt(session, "and now?")
        first, second = (request.json() for request in server.requests)
    expected = [("image/png", PNG), ("image/gif", GIF)]
    assert images_of(kind, first) == expected
    assert images_of(kind, second) == expected
    assert "What is in these?" in str(first)
    # CONTENT-005: session/load replays the prompt's image blocks as they were sent.
    async with running_bridge(scripted_config(tmp_path / "s", models=("gpt-4o",))) as ed:
        await ed.initialize()
        await ed.call(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        users = [u for u in ed.updates(session) if u["sessionUpdate"] == "user_message_chunk"]
    contents = [u["content"] for u in users]
    assert contents[:3] == PROMPT


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

        async def refused(block: dict[str, Any]) -> str:
            reply = await ed.request("session/prompt", {"sessionId": session, "prompt": [block]})
            assert reply["error"]["code"] == -32602
            return str(reply["error"]["message"])

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
        shown = "".join(
            u["content"]["text"]
            for u in ed.updates(session)
            if u["sessionUpdate"] == "agent_message_chunk"
        )
    assert "[2 images attached]" in shown


@pytest.mark.requirement("CONTENT-003")
async def test_a_text_only_model_is_never_sent_the_image(tmp_path: Path) -> None:
    provider_type, answer = PROVIDERS["openai"]
    async with LoopbackServer([answer()]) as server:
        options = HttpProviderOptions("m", base_url=server.base_url, api_key="k")
        config = scripted_config(tmp_path / "s", provider_type(options), models=("gpt-3.5-turbo",))
        async with running_bridge(config) as ed:
            await ed.initialize()
            session = await ed.new_session(tmp_path)
            refused = await ed.request("session/prompt", {"sessionId": session, "prompt": PROMPT})
        assert server.requests == []  # refused by the bridge, not a 400 from the server
    assert refused["error"]["code"] == -32602
    assert "'gpt-3.5-turbo' takes text only" in refused["error"]["message"]
