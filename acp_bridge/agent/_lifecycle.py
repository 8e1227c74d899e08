"""Sessions opening and closing on one connection: `session/new`, `load`, `resume`,
`list`, `close`, `delete`, and the per-session settings (`set_mode`, `set_config_option`).

Ordering (acp-protocol.md §2, spec/sessions.md): no `session/update` for a session before
its `session/new` response is written (commands follow the response); `session/load`
replays the stored history before it answers, `session/resume` replays nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.agent._connection import Connection
from acp_bridge.agent._durable import restore, session_record, store_errors
from acp_bridge.agent._light import available_commands_wire, notify_update, plain_new_session
from acp_bridge.agent._options import REASONING_OPTION, checked_choice
from acp_bridge.agent._paths import absolute_path
from acp_bridge.agent._replay import mcp_record, session_info
from acp_bridge.agent._session import Session, new_session_id
from acp_bridge.agent._sink import send_session_update
from acp_bridge.errors import InvalidParams, InvalidRequest, quote
from acp_bridge.jsonrpc import Reply
from acp_bridge.turn import SessionMode

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["SessionLifecycle", "wind_down"]


async def wind_down(conn: Connection, session: Session, wait: float = 30.0) -> None:
    """Cancels the session's turn (also one not started yet) and waits, bounded, until the
    engine recorded its end."""
    session.closed = True
    conn.tickets.cancel(session.session_id)
    session.cancel()
    with anyio.move_on_after(wait):  # the engine's own clean-up is bounded too
        await session.idle.wait()


def _directories(cwd: str, additional: Sequence[str]) -> tuple[Path, tuple[Path, ...]]:
    return absolute_path(cwd, "cwd"), tuple(
        absolute_path(d, f"additionalDirectories.{i}") for i, d in enumerate(additional)
    )


class SessionLifecycle:
    """The session methods of one connection."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def session_new(self, params: JsonValue) -> Reply:
        plain = plain_new_session(params)  # STARTUP-002: the usual request, no models
        if plain is not None:
            return self._new(*plain, ())
        request = acp.from_wire(acp.NewSessionRequest, params)
        return self._new(request.cwd, request.additional_directories, request.mcp_servers)

    def _new(
        self, cwd_text: str, additional: Sequence[str], mcp_servers: Sequence[acp.McpServer]
    ) -> Reply:
        conn = self._conn
        cwd, extra = _directories(cwd_text, additional)
        conn.auth.require()
        session = Session(new_session_id(), cwd, extra, model=conn.models.models[0])
        session.mcp_servers = tuple(mcp_record(s) for s in mcp_servers)
        with store_errors():  # durable before the editor hears of it (SESS-010)
            conn.durable.store.create(session_record(session), conn.durable.owner)
        conn.sessions[session.session_id] = session
        # `to_wire(NewSessionResponse(...))`, built directly (STARTUP-002).
        response: JsonObject = {
            "sessionId": session.session_id,
            "modes": conn.modes_wire(session),
            "configOptions": conn.config_options_wire(session),
        }
        conn.mcp.start(session.session_id, mcp_servers, session.roots)  # MCP-LIFE-001
        return Reply(response, self._announcer(session.session_id))

    def _announcer(self, session_id: str) -> Callable[[], Awaitable[None]]:
        conn = self._conn

        async def announce() -> None:
            conn.mcp.announced(session_id)  # its notices may follow the response now
            conn.models.start(conn.peer, conn.open_options)
            # Sent only after the response is on the wire (clients hang otherwise).
            if conn.config.commands:
                commands = [(c.name, c.description) for c in conn.config.commands]
                await notify_update(conn.peer, session_id, available_commands_wire(commands))

        return announce

    async def session_load(self, params: JsonValue) -> Reply:
        return await self._reopen(params, replay=True)

    async def session_resume(self, params: JsonValue) -> Reply:
        return await self._reopen(params, replay=False)

    async def _reopen(self, params: JsonValue, *, replay: bool) -> Reply:
        """session/load (replay first) and session/resume (no replay): same answer after.
        The usual request (no MCP servers) is read without the models and the answer built
        directly, as for session/new: the first replayed update waits for no model to be
        built, nor for the ACP models to be imported (PERF-LOAD-004)."""
        conn = self._conn
        plain = plain_new_session(params)
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        servers: Sequence[acp.McpServer] = ()
        if plain is not None and isinstance(session_id, str):
            cwd, additional = plain
        else:
            request: acp.LoadSessionRequest | acp.ResumeSessionRequest = (
                acp.from_wire(acp.LoadSessionRequest, params)
                if replay
                else acp.from_wire(acp.ResumeSessionRequest, params)
            )
            session_id, cwd = request.session_id, request.cwd
            additional, servers = request.additional_directories, request.mcp_servers
        session = await self._open(session_id, cwd, additional, servers, replay=replay)
        # `to_wire(LoadSessionResponse(...))` (or Resume...), built directly.
        response: JsonObject = {
            "modes": conn.modes_wire(session),
            "configOptions": conn.config_options_wire(session),
        }
        conn.mcp.start(session.session_id, servers, session.roots)
        return Reply(response, self._announcer(session.session_id))

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
        conn = self._conn
        cwd, extra = _directories(cwd_text, additional)
        conn.auth.require()
        live = conn.sessions.get(session_id)
        if live is not None and (live.running is not None or not live.idle.is_set()):
            raise InvalidRequest(
                f"A prompt turn is running in session {quote(session_id)}; cancel it first",
                {"sessionId": session_id},
            )
        with store_errors():
            session = conn.durable.open(
                session_id,
                cwd,
                extra,
                tuple(mcp_record(s) for s in mcp_servers),
                ledger=conn.ledger,
                live=live,
                models=conn.models.models,
            )
        try:
            with store_errors():
                await restore(
                    conn.peer,
                    conn.durable.store,
                    session,
                    replay=replay,
                    compaction=conn.compaction,
                )
        except BaseException:
            if live is None:  # never left claimed by a connection that does not serve it
                conn.durable.close([session_id], close_store=False)
            raise
        conn.sessions[session_id] = session
        return session

    async def session_list(self, params: JsonValue) -> JsonValue:
        request = acp.from_wire(acp.ListSessionsRequest, params)
        cwd = None if request.cwd is None else str(absolute_path(request.cwd, "cwd"))
        with store_errors():
            try:
                page = self._conn.durable.store.list_sessions(cwd=cwd, cursor=request.cursor)
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
        conn = self._conn
        request = acp.from_wire(acp.CloseSessionRequest, params)
        session = conn.sessions.pop(request.session_id, None)
        if session is not None:
            await wind_down(conn, session)
            conn.mcp.stop(session.session_id)
            with store_errors():
                conn.durable.store.release(session.session_id, conn.durable.owner)
        return acp.to_wire(acp.CloseSessionResponse())

    async def session_delete(self, params: JsonValue) -> JsonValue:
        """Deletes a stored session (an unknown one succeeds silently); refused while
        another connection has it open."""
        conn = self._conn
        request = acp.from_wire(acp.DeleteSessionRequest, params)
        session = conn.sessions.pop(request.session_id, None)
        if session is not None:
            await wind_down(conn, session)  # still owned here, so nobody claims it meanwhile
            conn.mcp.stop(session.session_id)
        with store_errors():
            conn.durable.store.delete(request.session_id, conn.durable.owner)
        return acp.to_wire(acp.DeleteSessionResponse())

    async def session_set_mode(self, params: JsonValue) -> Reply:
        conn = self._conn
        request = acp.from_wire(acp.SetSessionModeRequest, params)
        session = conn.session(request.session_id)
        try:
            mode = SessionMode(request.mode_id)
        except ValueError:
            known = ", ".join(m.value for m in SessionMode)
            raise InvalidParams.at(
                "modeId", f"Unknown mode (known: {known})", got=request.mode_id
            ) from None
        with store_errors():
            conn.durable.store.update(session.session_id, mode=mode.value)
        session.mode = mode

        async def announce() -> None:
            await send_session_update(
                conn.peer, session.session_id, acp.CurrentModeUpdate(current_mode_id=mode.value)
            )

        return Reply(acp.to_wire(acp.SetSessionModeResponse()), announce)

    async def session_set_config_option(self, params: JsonValue) -> JsonValue:
        conn = self._conn
        request = acp.from_wire(acp.SetSessionConfigOptionRequest, params)
        session = conn.session(request.session_id)
        config = conn.config
        value = checked_choice(request.config_id, request.value, conn.models.models, config.levels)
        if request.config_id == REASONING_OPTION:
            session.reasoning = value  # REASON-001: this connection's session, not journaled
        else:
            with store_errors():
                conn.durable.store.update(session.session_id, model=value)
            session.model = value
        response = acp.SetSessionConfigOptionResponse(config_options=conn.config_options(session))
        return acp.to_wire(response)
