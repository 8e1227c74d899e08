"""The ACP agent surface: sessions, prompt turns and the editor's methods, over JSON-RPC.

This is the composition layer between the protocol types, the JSON-RPC peer and the turn
engine; `acp_bridge.cli` builds an `AgentConfig` and calls `serve`. Names load on first
use, so `serve` can answer `initialize` before the turn engine is imported (cold start).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_bridge.agent._agent import Agent
    from acp_bridge.agent._config import AgentConfig, SlashCommand
    from acp_bridge.agent._editor import PeerEditorClient, editor_capabilities
    from acp_bridge.agent._options import MODEL_OPTION
    from acp_bridge.agent._serve import serve
    from acp_bridge.agent._session import Session

__all__ = [
    "MODEL_OPTION",
    "Agent",
    "AgentConfig",
    "PeerEditorClient",
    "Session",
    "SlashCommand",
    "editor_capabilities",
    "serve",
]

_HOME = {
    "MODEL_OPTION": "_options",
    "Agent": "_agent",
    "AgentConfig": "_config",
    "PeerEditorClient": "_editor",
    "Session": "_session",
    "SlashCommand": "_config",
    "editor_capabilities": "_editor",
    "serve": "_serve",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'acp_bridge.agent' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"acp_bridge.agent.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
