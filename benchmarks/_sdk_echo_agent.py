"""The session-start benchmark's SDK agent: answers a prompt with one chunk echoing it.

An agent on the official Python SDK (`agent-client-protocol==0.12.1`, the `bench` extra),
written the documented way: an `acp.Agent` keeping the client connection from `on_connect`,
served by `acp.run_agent` on stdio. Its prompt handler sends one `agent_message_chunk` with
the prompt's text and ends the turn: the least an agent does before the first chunk.

    python benchmarks/_sdk_echo_agent.py     # speaks ACP on stdin/stdout
"""

from __future__ import annotations

import asyncio
from typing import Any

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
from acp.schema import AgentCapabilities, AgentMessageChunk, Implementation


class EchoAgent(Agent):
    def __init__(self) -> None:
        self._conn: Client | None = None
        self._sessions = 0

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
            agent_info=Implementation(name="sdk-echo-agent", version="0"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        self._sessions += 1
        return NewSessionResponse(session_id=f"sess_sdk_{self._sessions}")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        assert self._conn is not None
        text = " ".join(getattr(block, "text", "") for block in prompt) or "echo"
        update = AgentMessageChunk(session_update="agent_message_chunk", content=text_block(text))
        await self._conn.session_update(session_id=session_id, update=update)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


def main() -> None:
    asyncio.run(run_agent(EchoAgent()))  # type: ignore[abstract]


if __name__ == "__main__":
    main()
