"""The ACP agent surface: one `Agent` per connection, one handler per wire method.

Ordering rules kept here (acp-protocol.md §2, acp-peers.md §7):
- no `session/update` for a session before its `session/new` response is written
  (commands are sent in the response's follow-up);
- every update of a turn is written before the `session/prompt` response (the sink awaits
  each write, and the response is written after `run_turn` returns);
- `session/cancel` ends a turn with `stopReason: "cancelled"`, never an error; a cancel for
  an idle or unknown session is harmless.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from acp_bridge import protocol as acp
from acp_bridge._json import JsonValue
from acp_bridge.agent._config import AgentConfig
from acp_bridge.agent._editor import PeerEditorClient, editor_capabilities
from acp_bridge.agent._initialize import auth_methods, initialize
from acp_bridge.agent._prompt import prompt_title, user_turn
from acp_bridge.agent._session import Session, new_session_id
from acp_bridge.agent._sink import PeerTurnSink, send_session_update
from acp_bridge.errors import AuthRequired, InvalidParams, InvalidRequest, MethodNotFound
from acp_bridge.jsonrpc import JsonRpcPeer, Reply
from acp_bridge.tools import EditorCapabilities, Tool, ToolContext
from acp_bridge.turn import (
    EffectLedger,
    SessionMode,
    StopReason,
    Turn,
    TurnRequest,
    turn_id_for,
)

__all__ = ["Agent"]

_log = logging.getLogger("acp_bridge.agent")

MODEL_OPTION = "model"

Handler = Callable[[JsonValue], Awaitable["JsonValue | Reply"]]


class Agent:
    """Handles every ACP method of one connection (implements `jsonrpc.Handler`)."""

    def __init__(self, config: AgentConfig, peer: JsonRpcPeer, ledger: EffectLedger) -> None:
        self._config = config
        self._peer = peer
        self._ledger = ledger
        self._sessions: dict[str, Session] = {}
        self._client_caps: acp.ClientCapabilities | None = None
        self._editor_caps = EditorCapabilities()
        self._requests: dict[str, Handler] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "session/new": self.session_new,
            "session/prompt": self.session_prompt,
            "session/set_mode": self.session_set_mode,
            "session/set_config_option": self.session_set_config_option,
        }

    # -- jsonrpc.Handler -----------------------------------------------------------------

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply:
        handler = self._requests.get(method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {method}")
        if params is not None and not isinstance(params, dict):
            raise InvalidParams(f"params of {method} must be an object")
        return await handler(params)

    async def handle_notification(self, method: str, params: JsonValue) -> None:
        if method == "session/cancel":
            await self.session_cancel(params)
        elif not method.startswith("_"):
            _log.debug("ignoring unknown notification %s", method)

    # -- initialization ------------------------------------------------------------------

    async def initialize(self, params: JsonValue) -> JsonValue:
        result, caps = initialize(params, missing_key_vars=self._config.missing_key_vars)
        self.set_client_capabilities(caps)
        return result

    def set_client_capabilities(self, caps: JsonValue) -> None:
        """What the client advertised in `initialize` (also when a light front answered it)."""
        self._client_caps = acp.from_wire(acp.ClientCapabilities, caps) if caps else None
        self._editor_caps = editor_capabilities(self._client_caps)

    def _require_auth(self) -> None:
        missing = self._config.missing_key_vars
        if missing:
            names = " or ".join(missing)
            raise AuthRequired(
                f"Authentication required: set {names} in the environment that launches "
                "acp-bridge, then restart it",
                {"reason": "auth_required", "env": list(missing)},
            )

    async def authenticate(self, params: JsonValue) -> JsonValue:
        request = acp.from_wire(acp.AuthenticateRequest, params)
        known = {m["id"] for m in auth_methods(self._config.missing_key_vars)}
        if request.method_id not in known:
            raise InvalidParams(f"Unknown authentication method: {request.method_id}")
        self._require_auth()
        return acp.to_wire(acp.AuthenticateResponse())

    # -- sessions ------------------------------------------------------------------------

    def _session(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise InvalidParams(f"Unknown session: {session_id}", {"sessionId": session_id})
        return session

    @staticmethod
    def _absolute(path: str, field: str) -> Path:
        if not Path(path).is_absolute():
            raise InvalidParams(f"{field} must be an absolute path, got {path!r}", {"field": field})
        return Path(path)

    async def session_new(self, params: JsonValue) -> Reply:
        request = acp.from_wire(acp.NewSessionRequest, params)
        cwd = self._absolute(request.cwd, "cwd")
        extra = tuple(
            self._absolute(d, f"additionalDirectories.{i}")
            for i, d in enumerate(request.additional_directories)
        )
        self._require_auth()
        session = Session(new_session_id(), cwd, extra, model=self._config.models[0])
        self._sessions[session.session_id] = session
        response = acp.NewSessionResponse(
            session_id=session.session_id,
            modes=self._modes(session),
            config_options=self._config_options(session),
        )

        async def announce() -> None:
            # Sent only after the session/new response is on the wire (clients hang otherwise).
            if self._config.commands:
                commands = [
                    acp.AvailableCommand(name=c.name, description=c.description)
                    for c in self._config.commands
                ]
                await send_session_update(
                    self._peer,
                    session.session_id,
                    acp.AvailableCommandsUpdate(available_commands=commands),
                )

        return Reply(acp.to_wire(response), announce)

    def _modes(self, session: Session) -> acp.SessionModeState:
        return acp.SessionModeState(
            current_mode_id=session.mode.value,
            available_modes=[
                acp.SessionMode(id=m.value, name=m.label, description=m.description)
                for m in SessionMode
            ],
        )

    def _config_options(self, session: Session) -> list[acp.SessionConfigOption]:
        return [
            acp.SessionConfigSelect(
                id=MODEL_OPTION,
                name="Model",
                description="The model that answers in this session.",
                category="model",
                current_value=session.model,
                options=[
                    acp.SessionConfigSelectOption(value=m, name=m) for m in self._config.models
                ],
            )
        ]

    async def session_set_mode(self, params: JsonValue) -> Reply:
        request = acp.from_wire(acp.SetSessionModeRequest, params)
        session = self._session(request.session_id)
        try:
            mode = SessionMode(request.mode_id)
        except ValueError:
            known = ", ".join(m.value for m in SessionMode)
            raise InvalidParams(
                f"Unknown mode: {request.mode_id} (known: {known})", {"field": "modeId"}
            ) from None
        session.mode = mode

        async def announce() -> None:
            await send_session_update(
                self._peer, session.session_id, acp.CurrentModeUpdate(current_mode_id=mode.value)
            )

        return Reply(acp.to_wire(acp.SetSessionModeResponse()), announce)

    async def session_set_config_option(self, params: JsonValue) -> JsonValue:
        request = acp.from_wire(acp.SetSessionConfigOptionRequest, params)
        session = self._session(request.session_id)
        if request.config_id != MODEL_OPTION:
            raise InvalidParams(
                f"Unknown config option: {request.config_id}", {"field": "configId"}
            )
        if request.value not in self._config.models:
            known = ", ".join(self._config.models)
            raise InvalidParams(
                f"Unknown model: {request.value} (offered: {known})", {"field": "value"}
            )
        session.model = str(request.value)
        response = acp.SetSessionConfigOptionResponse(config_options=self._config_options(session))
        return acp.to_wire(response)

    # -- prompt turns --------------------------------------------------------------------

    async def session_prompt(self, params: JsonValue) -> Reply:
        request = acp.from_wire(acp.PromptRequest, params)
        session = self._session(request.session_id)
        prompt = user_turn(request.prompt)
        self._require_auth()
        if session.running is not None:
            raise InvalidRequest(
                f"A prompt turn is already running in session {session.session_id}; "
                "cancel it or wait for its response",
                {"sessionId": session.session_id},
            )
        session.turns += 1
        turn_id = turn_id_for(session.session_id, session.turns)
        offered = self._offered_tools(session)
        turn = TurnRequest(
            turn_id=turn_id,
            session_id=session.session_id,
            history=session.history,
            prompt=prompt,
            provider=self._config.provider,
            model=session.model,
            tools=offered,
            make_context=lambda: self._tool_context(session),
            sink=PeerTurnSink(self._peer, session.session_id),
            ledger=self._ledger,
            permissions=session.permissions,
            mode=session.mode,
            system=self._system_prompt(session),
            policy=self._config.retry_policy,
            max_model_calls=self._config.max_model_calls,
        )
        started = time.monotonic()
        engine = Turn(turn)
        with anyio.CancelScope() as scope:
            session.running = scope
            try:
                result = await engine.run()
            finally:
                session.running = None
        if scope.cancelled_caught:
            # session/cancel: an outcome, never an error (prompt-turn.mdx#cancellation).
            result = engine.result(StopReason.CANCELLED)
        stop = result.stop_reason.value
        meta: dict[str, Any] = {
            "turnId": turn_id,
            "modelCalls": result.model_calls,
            "retries": result.retries,
            "billedAttempts": result.billed_attempts,
            "attempts": [
                {
                    "modelCall": a.model_call,
                    "attempt": a.attempt,
                    "state": a.state.value,
                    "reason": a.reason,
                    "billed": a.billed,
                }
                for a in result.attempts
            ],
            "effects": [
                {
                    "toolCallId": run.tool_call_id,
                    "tool": run.name,
                    "status": run.status.value,
                    "effectKey": run.effect_key,
                    "ran": run.ran,
                    "reused": run.reused,
                    "asked": run.asked,
                }
                for run in result.tool_runs
            ],
        }
        session.updated_at = time.time()
        _log.info("turn %s ended: %s in %.3fs", turn_id, stop, time.monotonic() - started)
        first_turn = session.title is None
        if first_turn:
            session.title = prompt_title(prompt)
        response = acp.PromptResponse(
            stop_reason=acp.StopReason(stop), field_meta={"acpBridge": meta}
        )
        return Reply(acp.to_wire(response))

    def _offered_tools(self, session: Session) -> dict[str, Tool]:
        registry = self._config.tools
        return {tool.name: tool for tool in registry}

    def _tool_context(self, session: Session) -> ToolContext:
        caps = self._editor_caps
        uses_editor = caps.read_text_file or caps.write_text_file or caps.terminal
        editor = PeerEditorClient(self._peer, session.session_id, caps) if uses_editor else None
        return ToolContext(
            session_id=session.session_id, cwd=session.cwd, roots=session.roots, editor=editor
        )

    def _system_prompt(self, session: Session) -> str:
        base = self._config.system_prompt or ""
        where = f"The user's workspace is {session.cwd}; relative paths resolve against it."
        return f"{base}\n\n{where}".strip()

    async def session_cancel(self, params: JsonValue) -> None:
        try:
            request = acp.from_wire(acp.CancelNotification, params)
        except Exception:
            _log.warning("ignoring malformed session/cancel")
            return
        session = self._sessions.get(request.session_id)
        if session is None or not session.cancel():
            _log.debug("session/cancel for idle or unknown session %s", request.session_id)
