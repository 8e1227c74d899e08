"""A minimal ACP agent on the official Python SDK (`agent-client-protocol`), for comparison.

The cold-start benchmark (benchmarks/cold_start.py) starts this next to acp-bridge: it is what an
agent built the documented way on the SDK pays before it can answer `initialize` (importing the
SDK, its generated pydantic schema, and starting its stdio connection). It answers initialize,
session/new and session/prompt (an empty turn), and nothing else.

    python benchmarks/sdk_minimal_agent.py     # speaks ACP on stdin/stdout
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, cast

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
)
from acp.schema import AgentCapabilities, Implementation


class MinimalAgent:
    """Implements the three calls of a plain turn through the SDK's `Agent` interface."""

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
            agent_info=Implementation(name="sdk-minimal-agent", version="0"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"sess_{uuid.uuid4().hex}")

    async def prompt(self, prompt: Any, session_id: str, **kwargs: Any) -> PromptResponse:
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


def main() -> None:
    # The SDK routes the methods the object has; the others answer "method not found".
    asyncio.run(run_agent(cast(Agent, MinimalAgent())))


if __name__ == "__main__":
    main()
