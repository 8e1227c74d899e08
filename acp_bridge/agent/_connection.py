"""What every handler of one connection shares: its sessions, the editor's capabilities,
and the services the handlers call (store, ledger, auth, MCP servers, model list).

The handlers themselves live by concern: `_lifecycle` (sessions open and close),
`_prompting` (prompt turns), `_agent` (the method table, initialization, auth).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anyio.abc import TaskGroup

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.agent._auth import AuthGate
from acp_bridge.agent._cancel import TurnTickets
from acp_bridge.agent._config import AgentConfig
from acp_bridge.agent._durable import DurableSessions
from acp_bridge.agent._editor import PeerEditorClient
from acp_bridge.agent._light import client_features
from acp_bridge.agent._mcp import McpSessions
from acp_bridge.agent._models import ModelList
from acp_bridge.agent._options import (
    config_options,
    config_options_wire,
    mode_state,
    mode_state_wire,
)
from acp_bridge.agent._session import Session
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.tools import EditorCapabilities, ToolContext
from acp_bridge.turn import EffectLedger

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["Connection"]


@dataclass(slots=True)
class Connection:
    """One connection's state. `mcp` is set right after construction (it reads the client
    capabilities through this object)."""

    config: AgentConfig
    peer: JsonRpcPeer
    ledger: EffectLedger
    tickets: TurnTickets
    durable: DurableSessions
    auth: AuthGate
    models: ModelList
    mcp: McpSessions = field(init=False)
    sessions: dict[str, Session] = field(default_factory=dict)
    caps_wire: JsonValue = None
    """The client's capabilities as `initialize` returned them (see `set_client_caps`)."""
    editor_caps: EditorCapabilities = field(default_factory=EditorCapabilities)
    notices: bool = False
    """The client takes `notice` updates (it said so in `initialize`)."""
    background: TaskGroup | None = None
    """The connection's background task group (the turns' chunk writers run there)."""
    _caps_model: acp.ClientCapabilities | None = None

    def session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:  # AGENT-SESSID-001: -32002, whatever the method
            raise self.durable.unknown_session(session_id)
        return session

    def set_client_caps(self, caps: JsonValue) -> None:
        """What the client advertised in `initialize`, read without the models (STARTUP-002):
        the models' reading is built on first need (`client_caps`)."""
        self.caps_wire, self._caps_model = caps, None
        self.editor_caps, self.notices = client_features(caps)

    def client_caps(self) -> acp.ClientCapabilities | None:
        """The client's capabilities as the ACP models read them (None when it sent none)."""
        if self._caps_model is None and self.caps_wire:
            self._caps_model = acp.from_wire(acp.ClientCapabilities, self.caps_wire)
        return self._caps_model

    @property
    def compaction(self) -> bool:
        """The client takes `compaction_update`s (`session.compaction` in `initialize`)."""
        caps = self.caps_wire  # read without the models (STARTUP-002)
        session = caps.get("session") if isinstance(caps, dict) else None
        return isinstance(session, dict) and isinstance(session.get("compaction"), dict)

    def modes(self, session: Session) -> acp.SessionModeState:
        return mode_state(session.mode)

    def modes_wire(self, session: Session) -> JsonObject:
        """`to_wire(self.modes(session))`, without the models (STARTUP-002)."""
        return mode_state_wire(session.mode)

    def config_options_wire(self, session: Session) -> list[JsonValue]:
        """`[to_wire(o) for o in self.config_options(session)]`, without the models."""
        effort, levels = session.reasoning or self.config.reasoning_effort, self.config.levels
        return config_options_wire(session.model, self.models.models, effort, levels)

    def config_options(self, session: Session) -> list[acp.SessionConfigOption]:
        effort, levels = session.reasoning or self.config.reasoning_effort, self.config.levels
        return config_options(session.model, self.models.models, effort, levels)

    def open_options(self) -> dict[str, list[acp.SessionConfigOption]]:
        return {i: self.config_options(s) for i, s in self.sessions.items() if not s.closed}

    def tool_context(self, session: Session) -> ToolContext:
        caps = self.editor_caps
        uses_editor = caps.read_text_file or caps.write_text_file or caps.terminal
        editor = PeerEditorClient(self.peer, session.session_id, caps) if uses_editor else None
        return ToolContext(
            session_id=session.session_id, cwd=session.cwd, roots=session.roots, editor=editor
        )
