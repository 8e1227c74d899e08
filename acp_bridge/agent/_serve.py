"""Serving one connection: the peer, the agent and the effect ledger, wired together.

Cold start matters to editors (some time out `initialize`), so the connection answers the
handshake with light modules only and loads the agent in two steps: what a session's start
needs right after the `initialize` response is on the wire (or on the first other request),
and the prompt turns (turn engine, tools, the provider's playback) right after the first
session is answered (STARTUP-004), or on the first prompt.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from acp_bridge._json import JsonValue
from acp_bridge.agent._auth import AuthGate, AuthOffer
from acp_bridge.agent._cancel import TurnTickets
from acp_bridge.agent._initialize import initialize
from acp_bridge.agent._state_dir import check_state_dir, state_error_from
from acp_bridge.errors import JsonRpcError, StateDirUnusable
from acp_bridge.jsonrpc import JsonRpcPeer, Reply, RequestId, Tracer
from acp_bridge.wire import DEFAULT_MAX_LINE_BYTES, Transport

if TYPE_CHECKING:
    from acp_bridge.agent._agent import Agent
    from acp_bridge.agent._config import AgentConfig
    from acp_bridge.turn import EffectLedger

__all__ = ["ConfigLoader", "serve"]

ConfigLoader = Callable[[], "AgentConfig"]

_log = logging.getLogger("acp_bridge.agent")
# Everything that reads or writes the ledger or the session store; initialize, authenticate
# and logout work without them.
_NEEDS_STATE = frozenset(
    {
        "session/new",
        "session/prompt",
        "session/load",
        "session/resume",
        "session/list",
        "session/close",
        "session/delete",
        "session/set_mode",
        "session/set_config_option",
    }
)

_OPENS_SESSION = frozenset({"session/new", "session/load", "session/resume"})


def _then_load(
    then: Callable[[], Awaitable[None]] | None, load: Callable[[], object]
) -> Callable[[], Awaitable[None]]:
    """The response's own follow-up, then `load` (a prompt usually comes next)."""

    async def follow_up() -> None:
        if then is not None:
            await then()
        load()

    return follow_up


class _Connection:
    """The connection's handler: a light handshake in front of the lazily loaded `Agent`."""

    def __init__(
        self,
        peer: JsonRpcPeer,
        load: ConfigLoader,
        missing_key_vars: tuple[str, ...],
        auth: AuthOffer | None = None,
        background: TaskGroup | None = None,
        audio: bool = False,
        image: bool = True,
    ) -> None:
        self._peer = peer
        self._audio = audio  # promptCapabilities.audio (AUDIO-001)
        self._image = image  # promptCapabilities.image (PROMPTCAP-001)
        self._background = background
        self._load = load
        self._gate = AuthGate(auth, missing_key_vars)
        self._caps: JsonValue = None
        self._agent: Agent | None = None
        self.ledger: EffectLedger | None = None
        self._tickets = TurnTickets()  # from the first request on, before the agent loads
        self._state_error: JsonRpcError | None = None
        self._state_dir = Path()

    def agent(self) -> Agent:
        if self._agent is None:
            self._agent = self._build(self._load())
        return self._agent

    def _build(self, config: AgentConfig) -> Agent:
        """The agent, with the real ledger when the state directory is usable; otherwise an
        in-memory one it never uses (the methods needing state are refused, CONF-STATE-001)."""
        from acp_bridge.agent._agent import Agent
        from acp_bridge.turn import EffectLedger, LedgerUnavailable

        self._state_dir = config.state_dir
        self._state_error = check_state_dir(config.state_dir)
        ledger: EffectLedger | None = None
        if self._state_error is None:
            try:
                ledger = EffectLedger(config.state_dir)
            except OSError as error:
                self._state_error = state_error_from(error)
            except LedgerUnavailable as error:
                _log.error("%s", error)  # the full path and SQLite's words: stderr only
                found = error.problem  # EFFECT-OPEN-001: the file and the fix, no full path
                self._state_error = StateDirUnusable(found.problem, found.detail, found.fix)
        if self._state_error is not None:  # said once on stderr by the startup check
            _log.debug("%s", self._state_error.message)
            ledger = EffectLedger(None)
        assert ledger is not None
        self.ledger = ledger
        agent = Agent(
            config, self._peer, ledger, tickets=self._tickets, background=self._background
        )
        agent.set_client_capabilities(self._caps)
        return agent

    def _state_ready(self) -> Agent:
        """The agent for a method that needs the state: the directory is checked again (the
        user may have fixed it meanwhile), else its precise error is raised."""
        agent = self.agent()
        if self._state_error is None:
            return agent
        if check_state_dir(self._state_dir) is not None:
            raise self._state_error
        with contextlib.suppress(Exception):
            agent.close()
        if self.ledger is not None:
            self.ledger.close()
        self._agent = self._build(self._load())
        if self._state_error is not None:
            raise self._state_error
        return self._agent

    @property
    def agent_loaded(self) -> Agent | None:
        return self._agent

    async def _warm_up(self) -> None:
        self.agent()

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply:
        if method == "initialize" and self._agent is None:
            result, self._caps = initialize(
                params,
                missing_key_vars=self._gate.missing(),
                offer=self._gate.offer,
                audio=self._audio,
                image=self._image,
            )
            return Reply(result, self._warm_up)
        agent = self._state_ready() if method in _NEEDS_STATE else self.agent()
        answer = await agent.handle_request(method, params)
        if method in _OPENS_SESSION and isinstance(answer, Reply):
            return Reply(answer.result, _then_load(answer.then, agent.load_prompts))
        return answer

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
    auth: AuthOffer | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    trace: Tracer | None = None,
    audio: bool = False,
    image: bool = True,
) -> None:
    """Serves ACP on `transport` until the editor closes it.

    `config` is the agent's configuration or a function that builds it on first need;
    with a function, `missing_key_vars` must say which API-key variables are missing and
    `auth` how the key is looked up and `audio` / `image` whether a configured model takes
    audio / images (these answer `initialize` before the config is built).
    """
    if callable(config):
        load: ConfigLoader = config
        missing = missing_key_vars or ()
    else:
        ready = config
        load = lambda: ready  # noqa: E731
        missing = config.missing_key_vars
        auth = config.auth
        from acp_bridge.providers import prompt_media

        image, audio = prompt_media(config.provider.name, config.models, config.model_info)
    peer = JsonRpcPeer(transport, max_line_bytes=max_line_bytes, trace=trace)
    # The connection's background work (the sessions' MCP servers) ends with the connection.
    async with anyio.create_task_group() as background:
        connection = _Connection(peer, load, missing, auth, background, audio, image)
        try:
            await peer.serve(connection)
        finally:
            if connection.agent_loaded is not None:
                with contextlib.suppress(Exception):
                    connection.agent_loaded.close()  # releases this connection's sessions
            if connection.ledger is not None:
                with contextlib.suppress(Exception):
                    connection.ledger.close()
