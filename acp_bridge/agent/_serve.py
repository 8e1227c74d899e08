"""Serving one connection: the peer, the agent and the effect ledger, wired together.

Cold start matters to editors (some time out `initialize`), so the connection answers the
handshake with light modules only and loads the agent (turn engine, tools, provider) right
after the `initialize` response is on the wire, or on the first other request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from acp_bridge._json import JsonValue
from acp_bridge.agent._cancel import TurnTickets
from acp_bridge.agent._initialize import initialize
from acp_bridge.jsonrpc import JsonRpcPeer, Reply, RequestId, Tracer
from acp_bridge.wire import DEFAULT_MAX_LINE_BYTES, Transport

if TYPE_CHECKING:
    from acp_bridge.agent._agent import Agent
    from acp_bridge.agent._config import AgentConfig
    from acp_bridge.turn import EffectLedger

__all__ = ["ConfigLoader", "serve"]

ConfigLoader = Callable[[], "AgentConfig"]


class _Connection:
    """The connection's handler: a light handshake in front of the lazily loaded `Agent`."""

    def __init__(
        self, peer: JsonRpcPeer, load: ConfigLoader, missing_key_vars: tuple[str, ...]
    ) -> None:
        self._peer = peer
        self._load = load
        self._missing_key_vars = missing_key_vars
        self._caps: JsonValue = None
        self._agent: Agent | None = None
        self.ledger: EffectLedger | None = None
        self._tickets = TurnTickets()  # from the first request on, before the agent loads

    def agent(self) -> Agent:
        if self._agent is None:
            from acp_bridge.agent._agent import Agent
            from acp_bridge.turn import EffectLedger

            config = self._load()
            self.ledger = EffectLedger(config.state_dir)
            agent = Agent(config, self._peer, self.ledger, tickets=self._tickets)
            agent.set_client_capabilities(self._caps)
            self._agent = agent
        return self._agent

    @property
    def agent_loaded(self) -> Agent | None:
        return self._agent

    async def _warm_up(self) -> None:
        self.agent()

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply:
        if method == "initialize" and self._agent is None:
            result, self._caps = initialize(params, missing_key_vars=self._missing_key_vars)
            return Reply(result, self._warm_up)
        return await self.agent().handle_request(method, params)

    def request_received(self, request_id: RequestId, method: str, params: JsonValue) -> None:
        self._tickets.received(request_id, method, params)  # AGENT-CANCEL-002

    async def handle_notification(self, method: str, params: JsonValue) -> None:
        if self._agent is not None:
            await self._agent.handle_notification(method, params)
        elif method == "session/cancel" and isinstance(params, dict):
            # No turn started yet, but a prompt read before the agent loaded may be waiting.
            session_id = params.get("sessionId")
            if isinstance(session_id, str):
                self._tickets.cancel(session_id)


async def serve(
    transport: Transport,
    config: AgentConfig | ConfigLoader,
    *,
    missing_key_vars: tuple[str, ...] | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    trace: Tracer | None = None,
) -> None:
    """Serves ACP on `transport` until the editor closes it.

    `config` is the agent's configuration or a function that builds it on first need;
    with a function, `missing_key_vars` must say which API-key variables are missing.
    """
    if callable(config):
        load: ConfigLoader = config
        missing = missing_key_vars or ()
    else:
        ready = config
        load = lambda: ready  # noqa: E731
        missing = config.missing_key_vars
    peer = JsonRpcPeer(transport, max_line_bytes=max_line_bytes, trace=trace)
    connection = _Connection(peer, load, missing)
    try:
        await peer.serve(connection)
    finally:
        if connection.agent_loaded is not None:
            with contextlib.suppress(Exception):
                connection.agent_loaded.close()  # releases this connection's sessions
        if connection.ledger is not None:
            with contextlib.suppress(Exception):
                connection.ledger.close()
