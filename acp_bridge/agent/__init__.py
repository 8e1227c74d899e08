"""The ACP agent surface: sessions, prompt turns and the editor's methods, over JSON-RPC.

This is the composition layer between the protocol types, the JSON-RPC peer and the turn
engine; `acp_bridge.cli` builds an `AgentConfig` and calls `serve`.
"""

from acp_bridge.agent._agent import MODEL_OPTION, Agent
from acp_bridge.agent._config import AgentConfig, SlashCommand
from acp_bridge.agent._editor import PeerEditorClient, editor_capabilities
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
