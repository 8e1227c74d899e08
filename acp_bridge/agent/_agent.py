"""The ACP agent surface: one `Agent` per connection, one handler per wire method.

Ordering rules kept here (acp-protocol.md §2, acp-peers.md §7):
- no `session/update` for a session before its `session/new` response is written
  (commands are sent in the response's follow-up);
- every update of a turn is written before the `session/prompt` response (the sink awaits
  each write, and the response is written after `run_turn` returns);
- `session/load` replays the stored history before it answers; `session/resume` replays
  nothing; both send the commands after the response (spec/sessions.md);
- `session/cancel` ends a turn with `stopReason: "cancelled"`, never an error; a cancel for
  an idle or unknown session is harmless.

Sessions are durable (`acp_bridge.sessions`): each turn is journaled to the session store as
it runs, and a session is owned by one connection at a time. `close()` releases them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import anyio
from anyio.abc import TaskGroup

from acp_bridge import protocol as acp
from acp_bridge._json import JsonValue
from acp_bridge.agent._auth import AuthGate
from acp_bridge.agent._cancel import TurnTickets
from acp_bridge.agent._config import AgentConfig
from acp_bridge.agent._durable import DurableSessions, restore, session_record, store_errors
from acp_bridge.agent._editor import PeerEditorClient, editor_capabilities
from acp_bridge.agent._ending import failed_note, outside_end, record_end
from acp_bridge.agent._initialize import initialize
from acp_bridge.agent._instructions import load_instructions, system_prompt
from acp_bridge.agent._links import prompt_turn
from acp_bridge.agent._mcp import McpSessions
from acp_bridge.agent._models import ModelList
from acp_bridge.agent._options import REASONING_OPTION, checked_choice, config_options, mode_state
from acp_bridge.agent._paths import absolute_path
from acp_bridge.agent._prompt import prompt_title
from acp_bridge.agent._replay import iso_time, mcp_record, session_info
from acp_bridge.agent._report import turn_report
from acp_bridge.agent._session import Session, new_session_id
from acp_bridge.agent._sink import PeerTurnSink, send_session_update
from acp_bridge.errors import (
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    quote,
)
from acp_bridge.jsonrpc import JsonRpcPeer, Reply, RequestId, current_request_id
from acp_bridge.sessions import SessionStore, TurnRecorder, TurnStart, TurnState
from acp_bridge.tools import EditorCapabilities, ToolContext
from acp_bridge.turn import EffectLedger, SessionMode, StopReason, Turn, TurnFailed, TurnRequest

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
        sessions' MCP servers run."""
        self._config = config
        self._peer = peer
        self._ledger = ledger
        self._tickets = tickets or TurnTickets()
        self._durable = DurableSessions(config.state_dir, store)
        self._auth = AuthGate(config.auth, config.missing_key_vars)
        self._sessions: dict[str, Session] = {}
        self._client_caps: acp.ClientCapabilities | None = None
        self._editor_caps = EditorCapabilities()
        self._mcp = McpSessions(background, peer, lambda: self._client_caps, config.mcp_limits)
        self._models = ModelList(config.models, config.list_models, background)  # PICK-001
        self._requests: dict[str, Handler] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "logout": self.logout,
            "session/new": self.session_new,
            "session/prompt": self.session_prompt,
            "session/set_mode": self.session_set_mode,
            "session/set_config_option": self.session_set_config_option,
            "session/load": self.session_load,
            "session/resume": self.session_resume,
            "session/list": self.session_list,
            "session/close": self.session_close,
            "session/delete": self.session_delete,
        }

    def close(self) -> None:
        """Releases every session this connection owns (call when the connection ends)."""
        for session in self._sessions.values():
            session.closed = True
            session.cancel()
        self._mcp.stop_all()
        self._durable.close(list(self._sessions))
        self._sessions.clear()

    # -- jsonrpc.Handler -----------------------------------------------------------------

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply:
        handler = self._requests.get(method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {quote(method)}")
        if params is not None and not isinstance(params, dict):
            raise InvalidParams.at("(params)", f"params of {quote(method)} must be an object")
        return await handler(params)

    def request_received(self, request_id: RequestId, method: str, params: JsonValue) -> None:
        self._tickets.received(request_id, method, params)  # AGENT-CANCEL-002

    async def handle_notification(self, method: str, params: JsonValue) -> None:
        if method == "session/cancel":
            await self.session_cancel(params)
        elif not method.startswith("_"):
            _log.debug("ignoring unknown notification %s", method)

    # -- initialization ------------------------------------------------------------------

    async def initialize(self, params: JsonValue) -> JsonValue:
        result, caps = initialize(
            params, missing_key_vars=self._auth.missing(), offer=self._auth.offer
        )
        self.set_client_capabilities(caps)
        return result

    def set_client_capabilities(self, caps: JsonValue) -> None:
        """What the client advertised in `initialize` (also when a light front answered it)."""
        self._client_caps = acp.from_wire(acp.ClientCapabilities, caps) if caps else None
        self._editor_caps = editor_capabilities(self._client_caps)

    async def authenticate(self, params: JsonValue) -> JsonValue:
        self._auth.authenticate(acp.from_wire(acp.AuthenticateRequest, params).method_id)
        return acp.to_wire(acp.AuthenticateResponse())

    async def logout(self, params: JsonValue) -> JsonValue:
        acp.from_wire(acp.LogoutRequest, params or {})
        self._auth.logout()
        return acp.to_wire(acp.LogoutResponse())

    # -- sessions ------------------------------------------------------------------------

    def _session(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:  # AGENT-SESSID-001: -32002, whatever the method
            raise self._durable.unknown_session(session_id)
        return session

    def _directories(self, cwd: str, additional: Sequence[str]) -> tuple[Path, tuple[Path, ...]]:
        return absolute_path(cwd, "cwd"), tuple(
            absolute_path(d, f"additionalDirectories.{i}") for i, d in enumerate(additional)
        )

    async def session_new(self, params: JsonValue) -> Reply:
        request = acp.from_wire(acp.NewSessionRequest, params)
        cwd, extra = self._directories(request.cwd, request.additional_directories)
        self._auth.require()
        session = Session(new_session_id(), cwd, extra, model=self._models.models[0])
        session.mcp_servers = tuple(mcp_record(s) for s in request.mcp_servers)
        with store_errors():  # durable before the editor hears of it (SESS-010)
            self._durable.store.create(session_record(session), self._durable.owner)
        self._sessions[session.session_id] = session
        response = acp.NewSessionResponse(
            session_id=session.session_id,
            modes=self._modes(session),
            config_options=self._config_options(session),
        )
        self._mcp.start(session.session_id, request.mcp_servers, cwd)  # MCP-LIFE-001
        return Reply(acp.to_wire(response), self._announcer(session.session_id))

    def _announcer(self, session_id: str) -> Callable[[], Awaitable[None]]:
        async def announce() -> None:
            self._mcp.announced(session_id)  # its notices may follow the response now
            self._models.start(self._peer, self._open_options)
            # Sent only after the response is on the wire (clients hang otherwise).
            if self._config.commands:
                commands = [
                    acp.AvailableCommand(name=c.name, description=c.description)
                    for c in self._config.commands
                ]
                await send_session_update(
                    self._peer, session_id, acp.AvailableCommandsUpdate(available_commands=commands)
                )

        return announce

    async def session_load(self, params: JsonValue) -> Reply:
        request = acp.from_wire(acp.LoadSessionRequest, params)
        return await self._reopen(request, acp.LoadSessionResponse, replay=True)

    async def session_resume(self, params: JsonValue) -> Reply:
        request = acp.from_wire(acp.ResumeSessionRequest, params)
        return await self._reopen(request, acp.ResumeSessionResponse, replay=False)

    async def _reopen(
        self,
        request: acp.LoadSessionRequest | acp.ResumeSessionRequest,
        response_type: type[acp.LoadSessionResponse] | type[acp.ResumeSessionResponse],
        *,
        replay: bool,
    ) -> Reply:
        """session/load (replay first) and session/resume (no replay): same answer after."""
        session = await self._open(
            request.session_id,
            request.cwd,
            request.additional_directories,
            request.mcp_servers,
            replay=replay,
        )
        response = response_type(
            modes=self._modes(session), config_options=self._config_options(session)
        )
        self._mcp.start(session.session_id, request.mcp_servers, session.cwd)
        return Reply(acp.to_wire(response), self._announcer(session.session_id))

    async def _open(
        self,
        session_id: str,
        cwd_text: str,
        additional: Sequence[str],
        mcp_servers: Sequence[acp.McpServer],
        *,
        replay: bool,
    ) -> Session:
        """Opens a stored session on this connection (`DurableSessions.open`) and, for
        `session/load`, replays it before the response is written (SESS-031)."""
        cwd, extra = self._directories(cwd_text, additional)
        self._auth.require()
        live = self._sessions.get(session_id)
        if live is not None and (live.running is not None or not live.idle.is_set()):
            raise InvalidRequest(
                f"A prompt turn is running in session {quote(session_id)}; cancel it first",
                {"sessionId": session_id},
            )
        with store_errors():
            session = self._durable.open(
                session_id,
                cwd,
                extra,
                tuple(mcp_record(s) for s in mcp_servers),
                ledger=self._ledger,
                live=live,
                models=self._models.models,
            )
        try:
            with store_errors():
                await restore(self._peer, self._durable.store, session, replay=replay)
        except BaseException:
            if live is None:  # never left claimed by a connection that does not serve it
                self._durable.close([session_id], close_store=False)
            raise
        self._sessions[session_id] = session
        return session

    async def session_list(self, params: JsonValue) -> JsonValue:
        request = acp.from_wire(acp.ListSessionsRequest, params)
        cwd = None if request.cwd is None else str(absolute_path(request.cwd, "cwd"))
        with store_errors():
            try:
                page = self._durable.store.list_sessions(cwd=cwd, cursor=request.cursor)
            except ValueError:
                raise InvalidParams.at(
                    "cursor", "cursor is not a nextCursor this agent gave out"
                ) from None
        sessions = [session_info(r) for r in page.sessions]
        if page.next_cursor is None:  # absent, not null: no more pages
            return acp.to_wire(acp.ListSessionsResponse(sessions=sessions))
        response = acp.ListSessionsResponse(sessions=sessions, next_cursor=page.next_cursor)
        return acp.to_wire(response)

    async def session_close(self, params: JsonValue) -> JsonValue:
        """Cancels the running turn as session/cancel would, waits until it is recorded,
        then frees the session (idempotent: closing a session that is not open succeeds)."""
        request = acp.from_wire(acp.CloseSessionRequest, params)
        session = self._sessions.pop(request.session_id, None)
        if session is not None:
            await self._wind_down(session)
            self._mcp.stop(session.session_id)
            with store_errors():
                self._durable.store.release(session.session_id, self._durable.owner)
        return acp.to_wire(acp.CloseSessionResponse())

    async def session_delete(self, params: JsonValue) -> JsonValue:
        """Deletes a stored session (an unknown one succeeds silently); refused while
        another connection has it open."""
        request = acp.from_wire(acp.DeleteSessionRequest, params)
        session = self._sessions.pop(request.session_id, None)
        if session is not None:
            await self._wind_down(session)  # still owned here, so nobody claims it meanwhile
            self._mcp.stop(session.session_id)
        with store_errors():
            self._durable.store.delete(request.session_id, self._durable.owner)
        return acp.to_wire(acp.DeleteSessionResponse())

    async def _wind_down(self, session: Session, wait: float = 30.0) -> None:
        session.closed = True
        self._tickets.cancel(session.session_id)
        session.cancel()
        with anyio.move_on_after(wait):  # the engine's own clean-up is bounded too
            await session.idle.wait()

    def _modes(self, session: Session) -> acp.SessionModeState:
        return mode_state(session.mode)

    def _open_options(self) -> dict[str, list[acp.SessionConfigOption]]:
        return {i: self._config_options(s) for i, s in self._sessions.items() if not s.closed}

    def _config_options(self, session: Session) -> list[acp.SessionConfigOption]:
        effort, levels = session.reasoning or self._config.reasoning_effort, self._config.levels
        return config_options(session.model, self._models.models, effort, levels)

    async def session_set_mode(self, params: JsonValue) -> Reply:
        request = acp.from_wire(acp.SetSessionModeRequest, params)
        session = self._session(request.session_id)
        try:
            mode = SessionMode(request.mode_id)
        except ValueError:
            known = ", ".join(m.value for m in SessionMode)
            raise InvalidParams.at(
                "modeId", f"Unknown mode (known: {known})", got=request.mode_id
            ) from None
        with store_errors():
            self._durable.store.update(session.session_id, mode=mode.value)
        session.mode = mode

        async def announce() -> None:
            await send_session_update(
                self._peer, session.session_id, acp.CurrentModeUpdate(current_mode_id=mode.value)
            )

        return Reply(acp.to_wire(acp.SetSessionModeResponse()), announce)

    async def session_set_config_option(self, params: JsonValue) -> JsonValue:
        request = acp.from_wire(acp.SetSessionConfigOptionRequest, params)
        session = self._session(request.session_id)
        config = self._config
        value = checked_choice(request.config_id, request.value, self._models.models, config.levels)
        if request.config_id == REASONING_OPTION:
            session.reasoning = value  # REASON-001: this connection's session, not journaled
        else:
            with store_errors():
                self._durable.store.update(session.session_id, model=value)
            session.model = value
        response = acp.SetSessionConfigOptionResponse(config_options=self._config_options(session))
        return acp.to_wire(response)

    # -- prompt turns --------------------------------------------------------------------

    async def session_prompt(self, params: JsonValue) -> Reply:
        request_id = current_request_id()
        try:
            return await self._prompt(acp.from_wire(acp.PromptRequest, params), request_id)
        finally:
            self._tickets.release(request_id)

    async def _prompt(self, request: acp.PromptRequest, request_id: RequestId | None) -> Reply:
        scope = self._tickets.scope(request_id, request.session_id)  # AGENT-CANCEL-002
        session = self._session(request.session_id)
        prompt = await prompt_turn(request.prompt, session.model, self._tool_context(session))
        self._auth.require()
        if session.running is not None or not session.idle.is_set():
            raise InvalidRequest(
                f"A prompt turn is already running in session {session.session_id}; "
                "cancel it or wait for its response",
                {"sessionId": session.session_id},
            )
        store = self._durable.store
        with store_errors():
            # The turn and its prompt are durable before the model is called (SESS-010).
            start = store.begin_turn(
                session.session_id,
                self._durable.owner,
                [acp.to_wire(block) for block in request.prompt],
                prompt,
            )
            if start.retry_of is not None:
                # Sent again after it was interrupted: the same turn from its start (SESS-021).
                history = store.history(session.session_id)
                session.history = history[:-1]  # without the prompt just stored
        session.turns = start.ordinal
        live = session.live_updates(
            notices=self._client_caps is not None
            and self._client_caps.session is not None
            and self._client_caps.session.notices is not None,
            context_window=self._config.context_window,
        )
        sink = PeerTurnSink(self._peer, session.session_id, live)
        recorder = TurnRecorder(store, session.session_id, start, sink)
        turn = TurnRequest(
            turn_id=start.turn_id,
            id_prefix=start.id_prefix,
            session_id=session.session_id,
            history=session.history,
            prompt=prompt,
            provider=self._config.provider,
            model=session.model,
            tools=await self._mcp.tools_for(session.session_id, self._config.tools),
            make_context=lambda: self._tool_context(session),
            sink=recorder,
            journal=recorder,
            ledger=self._ledger,
            permissions=session.permissions,
            mode=session.mode,
            current_mode=lambda: session.mode,  # TURN-MODE-001: set_mode applies mid-turn
            system=self._system_prompt(session),
            policy=self._config.retry_policy,
            max_model_calls=self._config.max_model_calls,
            reasoning=session.reasoning or self._config.reasoning_effort,
        )
        started = time.monotonic()
        engine = Turn(turn)
        session.idle = anyio.Event()
        try:
            # Chunks are written behind the turn; leaving `running()` writes what is queued,
            # so every update is on the wire before the response (AGENT-ORDER-001).
            async with sink.running():
                with scope, store_errors():
                    session.running = scope
                    try:
                        result = await engine.run()
                    finally:
                        session.running = None
            if scope.cancelled_caught:
                # session/cancel: an outcome, never an error (prompt-turn.mdx#cancellation).
                result = engine.result(StopReason.CANCELLED)
            self._end_turn(session, start, TurnState.COMPLETED, result.stop_reason.value)
        except TurnFailed as error:
            self._end_turn(session, start, TurnState.FAILED, None, failed_note(error.message))
            raise
        except Exception:
            self._end_turn(session, start, TurnState.FAILED, None, failed_note("internal error"))
            raise
        except BaseException:  # AGENT-CANCEL-003: $/cancel_request, or the connection closed
            self._end_turn(session, start, *outside_end(self._peer.closed))
            raise
        finally:
            session.idle.set()
        stop = result.stop_reason.value
        _log.info("turn %s ended: %s in %.3fs", start.turn_id, stop, time.monotonic() - started)
        if session.title is None and not session.closed:
            await self._announce_title(session, prompt_title(prompt))
        response = acp.PromptResponse(
            stop_reason=acp.StopReason(stop),
            field_meta={"acpBridge": turn_report(start, result)},
        )
        return Reply(acp.to_wire(response))

    def _end_turn(
        self, session: Session, start: TurnStart, state: TurnState, *end: str | None
    ) -> None:
        record_end(self._durable.opened, session, start, state, *end)

    async def _announce_title(self, session: Session, title: str) -> None:
        """SESS-033: the title, once the first turn completed, before its response."""
        session.title = title
        with store_errors():
            self._durable.store.update(session.session_id, title=title)
        update = acp.SessionInfoUpdate(title=title, updated_at=iso_time(session.updated_at))
        await send_session_update(self._peer, session.session_id, update)

    def _tool_context(self, session: Session) -> ToolContext:
        caps = self._editor_caps
        uses_editor = caps.read_text_file or caps.write_text_file or caps.terminal
        editor = PeerEditorClient(self._peer, session.session_id, caps) if uses_editor else None
        return ToolContext(
            session_id=session.session_id, cwd=session.cwd, roots=session.roots, editor=editor
        )

    def _system_prompt(self, session: Session) -> str:
        """INSTR-001: the base, the user's addition, the directories, project instructions."""
        instructions = load_instructions(session.roots)
        if session.live is not None and not session.instructions_told:
            session.instructions_told = True  # INSTR-003: told once per session here
            session.live.announce(instructions.notice())
        config = self._config
        return system_prompt(
            config.system_prompt,
            config.append_system_prompt,
            session.cwd,
            session.additional_directories,
            instructions,
        )

    async def session_cancel(self, params: JsonValue) -> None:
        try:
            request = acp.from_wire(acp.CancelNotification, params)
        except Exception:
            _log.warning("ignoring malformed session/cancel")
            return
        pending = self._tickets.cancel(request.session_id)  # also a turn not started yet
        session = self._sessions.get(request.session_id)
        if not (session is not None and session.cancel()) and not pending:
            _log.debug("session/cancel for idle or unknown session %s", request.session_id)
