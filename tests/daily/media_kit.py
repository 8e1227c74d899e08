"""Prompt media (images, audio) through a real bridge: one kit for the content and audio tests.

`round_trip` sends a prompt with media to a provider at a loopback server, then a second
prompt (whose request carries the journaled history), then loads the session in a fresh
bridge; `refused_upstream` sends one the bridge must refuse before any request is made;
`refusal` and `agent_text` are what a test reads from a running bridge.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge import running_bridge, scripted_config
from daily.test_daily_instructions import PROVIDERS
from editor import ScriptedEditor
from loopback_http import LoopbackServer

from acp_bridge.providers.http import HttpProviderOptions

__all__ = ["RoundTrip", "agent_text", "inline_parts", "refusal", "refused_upstream", "round_trip"]


@dataclass(frozen=True, slots=True)
class RoundTrip:
    """What a prompt with media did: the capabilities, both request bodies, the replay."""

    prompt_capabilities: dict[str, Any]
    first: dict[str, Any]  # the request body of the prompt with media
    second: dict[str, Any]  # of the next prompt (history from the journal)
    replayed: list[dict[str, Any]]  # the user content blocks session/load replayed


@contextlib.asynccontextmanager
async def _provider_session(
    tmp_path: Path, kind: str, model: str, listed: str, replies: int
) -> AsyncIterator[tuple[ScriptedEditor, str, dict[str, Any], LoopbackServer]]:
    """A bridge on `kind`'s provider at a loopback server: (editor, session, capabilities,
    server). `model` is asked for at the server, `listed` is the model the catalogue names."""
    provider_type, answer = PROVIDERS[kind]
    async with LoopbackServer([answer() for _ in range(replies)]) as server:
        options = HttpProviderOptions(model, base_url=server.base_url, api_key="k")
        config = scripted_config(tmp_path / "s", provider_type(options), models=(listed,))
        async with running_bridge(config) as ed:
            init = await ed.initialize()
            session = await ed.new_session(tmp_path)
            yield ed, session, init["agentCapabilities"]["promptCapabilities"], server


async def round_trip(
    tmp_path: Path, kind: str, model: str, prompt: list[dict[str, Any]], *, listed: str
) -> RoundTrip:
    """`model` is asked for at the server, `listed` is the model the bridge's catalogue names."""
    async with _provider_session(tmp_path, kind, model, listed, 2) as (ed, session, caps, server):
        reply = await ed.call("session/prompt", {"sessionId": session, "prompt": prompt})
        assert reply["stopReason"] == "end_turn"
        await ed.prompt(session, "and now?")
    first, second = (request.json() for request in server.requests)
    async with running_bridge(scripted_config(tmp_path / "s", models=(listed,))) as ed:
        await ed.initialize()
        await ed.call(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        users = [u for u in ed.updates(session) if u["sessionUpdate"] == "user_message_chunk"]
    return RoundTrip(caps, first, second, [u["content"] for u in users])


async def refused_upstream(
    tmp_path: Path, kind: str, model: str, prompt: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(prompt capabilities, the error) of a prompt the bridge refuses: no request is made."""
    async with _provider_session(tmp_path, kind, model, model, 1) as (ed, session, caps, server):
        refused = await ed.request("session/prompt", {"sessionId": session, "prompt": prompt})
    assert server.requests == []  # refused by the bridge, not an error from the server
    assert refused["error"]["code"] == -32602
    return caps, refused["error"]


async def refusal(ed: ScriptedEditor, session: str, block: dict[str, Any]) -> str:
    """The message of the invalid-params error a prompt of one block is refused with."""
    reply = await ed.request("session/prompt", {"sessionId": session, "prompt": [block]})
    assert reply["error"]["code"] == -32602
    return str(reply["error"]["message"])


def agent_text(ed: ScriptedEditor, session: str) -> str:
    """Every agent message chunk's text the session showed, joined."""
    return "".join(
        u["content"]["text"]
        for u in ed.updates(session)
        if u["sessionUpdate"] == "agent_message_chunk"
    )


def inline_parts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(media type, base64 data) of every inline part of a Gemini request's contents."""
    return [
        (part["inlineData"]["mimeType"], part["inlineData"]["data"])
        for content in body["contents"]
        for part in content["parts"]
        if "inlineData" in part
    ]
