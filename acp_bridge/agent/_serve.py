"""Serving one connection: the peer, the agent and the effect ledger, wired together."""

from __future__ import annotations

from acp_bridge.agent._agent import Agent
from acp_bridge.agent._config import AgentConfig
from acp_bridge.jsonrpc import JsonRpcPeer, Tracer
from acp_bridge.turn import EffectLedger
from acp_bridge.wire import DEFAULT_MAX_LINE_BYTES, Transport

__all__ = ["serve"]


async def serve(
    transport: Transport,
    config: AgentConfig,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    trace: Tracer | None = None,
) -> None:
    """Serves ACP on `transport` until the editor closes it."""
    ledger = EffectLedger(config.state_dir)
    try:
        peer = JsonRpcPeer(transport, max_line_bytes=max_line_bytes, trace=trace)
        await peer.serve(Agent(config, peer, ledger))
    finally:
        ledger.close()
