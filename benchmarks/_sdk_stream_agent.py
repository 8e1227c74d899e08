"""The stream benchmark's SDK agent: the official Python SDK forwarding the same SSE stream.

Written the way the SDK documents an agent (`agent-client-protocol==0.12.1`, the `bench`
extra): an `acp.Agent` whose `on_connect` keeps the client connection, served by
`acp.run_agent` on stdio. Its prompt handler reads the OpenAI Chat Completions stream with
httpx (`aiter_lines`, `data:` lines, `json.loads`) and calls the SDK's `session_update` with an
`agent_message_chunk` for each text delta, the same notification the bridge writes.

    python benchmarks/_sdk_stream_agent.py http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
from acp import (
    PROTOCOL_VERSION,
    Agent,
    Client,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    text_block,
)
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    Implementation,
    ResourceContentBlock,
    TextContentBlock,
)

ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


class ForwardingAgent(Agent):
    """Forwards each text delta of the model stream as one `session/update`."""

    def __init__(self, base_url: str) -> None:
        self._base_url = base_url
        self._conn: Client | None = None
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(60.0))
        self._sessions = 0
        self._turns = 0

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="sdk-stream-agent", version="0"),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        self._sessions += 1
        return NewSessionResponse(session_id=f"sess_sdk_{self._sessions}")

    async def prompt(
        self, session_id: str, prompt: list[ContentBlock], **kwargs: Any
    ) -> PromptResponse:
        assert self._conn is not None
        self._turns += 1
        message_id = f"{session_id}-turn{self._turns}-m1-a1"
        text = " ".join(getattr(block, "text", "") for block in prompt)
        body = {"model": "bench", "messages": [{"role": "user", "content": text}], "stream": True}
        async with self._http.stream(
            "POST", f"{self._base_url}/chat/completions", json=body
        ) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    break
                for choice in json.loads(payload).get("choices") or ():
                    delta = choice.get("delta", {}).get("content")
                    if delta:
                        update = AgentMessageChunk(
                            session_update="agent_message_chunk",
                            content=text_block(delta),
                            message_id=message_id,
                        )
                        await self._conn.session_update(session_id=session_id, update=update)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


def main() -> None:
    # The SDK's `Agent` is a Protocol with every method optional at run time; the documented
    # way is to subclass it and implement what the agent supports.
    agent = ForwardingAgent(sys.argv[1])  # type: ignore[abstract]
    asyncio.run(run_agent(agent))


if __name__ == "__main__":
    main()
