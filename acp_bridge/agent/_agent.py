"""The ACP agent surface: one `Agent` per connection, one handler per wire method.

The handlers are grouped by concern: sessions opening and closing (`_lifecycle`), prompt
turns (`_prompting`), and here initialization, authentication and the method table. They
share one `Connection` (`_connection`).

Sessions are durable (`acp_bridge.sessions`): each turn is journaled to the session store as
it runs, and a session is owned by one connection at a time. `close()` releases them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from anyio.abc import TaskGroup

from acp_bridge._json import JsonValue
from acp_bridge.agent._auth import AuthGate
from acp_bridge.agent._cancel import TurnTickets
from acp_bridge.agent._config import AgentConfig
from acp_bridge.agent._connection import Connection
from acp_bridge.agent._deferred import DeferredPrompts
from acp_bridge.agent._durable import DurableSessions
from acp_bridge.agent._initialize import initialize
from acp_bridge.agent._lifecycle import SessionLifecycle
from acp_bridge.agent._mcp import McpSessions
from acp_bridge.agent._models import ModelList
from acp_bridge.errors import InvalidParams, MethodNotFound, quote
from acp_bridge.jsonrpc import JsonRpcPeer, Reply, RequestId
from acp_bridge.providers import prompt_media
from acp_bridge.sessions import SessionStore
from acp_bridge.turn import EffectLedger

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["Agent"]

_log = logging.getLogger("acp_bridge.agent")


Handler = Callable[[JsonValue], Awaitable["JsonValue | Reply"]]


class Agent:
    """Handles every ACP method of one connection (implements `jsonrpc.Handler`)."""

    def __init__(
        self,
        config: AgentConfig,
        peer: JsonRpcPeer,
        ledger: EffectLedger,
        store: SessionStore | None = None,
        tickets: TurnTickets | None = None,
        background: TaskGroup | None = None,
    ) -> None:
        """`store`: the process's session store; None opens one in `config.state_dir` on
        first need (then `close()` closes it). `tickets`: the connection's prompt cancel
        scopes, when a front made them before this agent existed. `background`: where the
        sessions' MCP servers and the turns' chunk writers run."""
        conn = Connection(
            config=config,
            peer=peer,
            ledger=ledger,
            tickets=tickets or TurnTickets(),
            durable=DurableSessions(config.state_dir, store),
            auth=AuthGate(config.auth, config.missing_key_vars),
            models=ModelList(  # PICK-001, USAGE-004/005, MODEL-INFO-001
                config.models,
                config.list_models,
                background,
                kind=config.provider.name,
                declared=config.model_info,
                context_window=config.context_window,
            ),
            background=background,
        )
        conn.mcp = McpSessions(background, peer, conn.client_caps, config.mcp_limits)
        self._conn = conn
        lifecycle, prompts = SessionLifecycle(conn), DeferredPrompts(conn)
        self._requests: dict[str, Handler] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "logout": self.logout,
            "session/new": lifecycle.session_new,
            "session/prompt": prompts.session_prompt,
            "session/set_mode": lifecycle.session_set_mode,
            "session/set_config_option": lifecycle.session_set_config_option,
            "session/load": lifecycle.session_load,
            "session/resume": lifecycle.session_resume,
            "session/list": lifecycle.session_list,
            "session/close": lifecycle.session_close,
            "session/delete": lifecycle.session_delete,
        }
        self._cancel = prompts.session_cancel
        self.load_prompts = prompts.load  # the turn engine: after the first session exists

    def close(self) -> None:
        """Releases every session this connection owns (call when the connection ends)."""
        conn = self._conn
        for session in conn.sessions.values():
            session.closed = True
            session.cancel()
        conn.mcp.stop_all()
        conn.durable.close(list(conn.sessions))
        conn.sessions.clear()

    # -- jsonrpc.Handler -----------------------------------------------------------------

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply:
        handler = self._requests.get(method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {quote(method)}")
        if params is not None and not isinstance(params, dict):
            raise InvalidParams.at("(params)", f"params of {quote(method)} must be an object")
        return await handler(params)

    def request_received(self, request_id: RequestId, method: str, params: JsonValue) -> None:
        self._conn.tickets.received(request_id, method, params)  # AGENT-CANCEL-002

    async def handle_notification(self, method: str, params: JsonValue) -> None:
        if method == "session/cancel":
            await self._cancel(params)
        elif not method.startswith("_"):
            _log.debug("ignoring unknown notification %s", method)

    # -- initialization and authentication -----------------------------------------------

    async def initialize(self, params: JsonValue) -> JsonValue:
        auth, config = self._conn.auth, self._conn.config
        image, audio = prompt_media(config.provider.name, config.models, config.model_info)
        result, caps = initialize(
            params, missing_key_vars=auth.missing(), offer=auth.offer, audio=audio, image=image
        )
        self.set_client_capabilities(caps)
        return result

    def set_client_capabilities(self, caps: JsonValue) -> None:
        """What the client advertised in `initialize` (also when a light front answered it)."""
        self._conn.set_client_caps(caps)

    async def authenticate(self, params: JsonValue) -> JsonValue:
        self._conn.auth.authenticate(acp.from_wire(acp.AuthenticateRequest, params).method_id)
        return acp.to_wire(acp.AuthenticateResponse())

    async def logout(self, params: JsonValue) -> JsonValue:
        acp.from_wire(acp.LogoutRequest, params or {})
        self._conn.auth.logout()
        return acp.to_wire(acp.LogoutResponse())
