"""The ACP agent surface: sessions, prompt turns and the editor's methods, over JSON-RPC.

This is the composition layer between the protocol types, the JSON-RPC peer and the turn
engine; `acp_bridge.cli` builds an `AgentConfig` and calls `serve`. Names load on first
use, so `serve` can answer `initialize` before the turn engine is imported (cold start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_bridge._exports import lazy_exports as _lazy_exports

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

__getattr__, __dir__ = _lazy_exports(__name__)
