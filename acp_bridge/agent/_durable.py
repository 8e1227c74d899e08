"""The agent's side of durable sessions: the store per connection, its errors on the wire.

`DurableSessions` opens the session store on first need (so `initialize` never waits for
SQLite), owns it when the composition root did not pass one, and holds this connection's
`Owner` identity. `store_errors` is the one place where store failures become JSON-RPC
errors (spec/sessions.md, SESS-050):

- an unknown session id: `-32002` (resource not found), `data: {"sessionId"}`, for every
  method that needs the session (AGENT-SESSID-001);
- a session open in another live connection: `-32603`, `data: {"reason": "session_in_use",
  "sessionId", "ownerPid"}`;
- the store unusable: `-32603`, `data: {"reason": "session_store_unavailable"}`.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from acp_bridge._json import JsonObject
from acp_bridge.agent._light import notify_update
from acp_bridge.agent._live import LiveUpdates
from acp_bridge.agent._replaying import replay_session
from acp_bridge.agent._session import Session
from acp_bridge.errors import (
    InternalError,
    ResourceNotFound,
    StateDirUnusable,
    quote,
    session_data,
)
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.sessions import (
    Owner,
    SessionInUse,
    SessionNotFound,
    SessionRecord,
    SessionStore,
    SessionStoreError,
    recover_session,
)
from acp_bridge.turn import EffectLedger, SessionMode

__all__ = ["DurableSessions", "restore", "session_record", "store_errors", "unknown_session"]

_log = logging.getLogger("acp_bridge.agent")


@contextlib.contextmanager
def store_errors() -> Iterator[None]:
    """Turns session-store failures into precise JSON-RPC errors (SESS-050)."""
    try:
        yield
    except SessionNotFound as error:
        raise unknown_session(error.session_id, stored=False) from error
    except SessionInUse as error:
        raise InternalError(
            f"{error}. Close it there first, or start a new session.",
            {
                "reason": "session_in_use",
                "sessionId": error.session_id,
                "ownerPid": error.owner_pid,
            },
        ) from error
    except SessionStoreError as error:
        _log.error("session store: %s", error)  # the full path and SQLite's words: stderr only
        if error.problem is not None:  # the file itself: named, with the fix (EFFECT-OPEN-001)
            found = error.problem
            raise StateDirUnusable(found.problem, found.detail, found.fix) from error
        raise InternalError(
            f"The session store is unavailable: {error}",
            {"reason": "session_store_unavailable"},
        ) from error


def unknown_session(session_id: str, *, stored: bool) -> ResourceNotFound:
    """AGENT-SESSID-001: the one error for a session id that names no session here (-32002,
    `data: {"sessionId"}`), its message naming the fix."""
    if stored:
        fix = (
            "it is stored but not open on this connection; open it with session/load or "
            "session/resume first"
        )
    else:
        fix = "no such session is stored; create one with session/new"
    return ResourceNotFound(
        f"Unknown session: {quote(session_id)} ({fix})", session_data(session_id)
    )


def session_record(session: Session, *, created_at: float | None = None) -> SessionRecord:
    now = time.time()
    return SessionRecord(
        session_id=session.session_id,
        cwd=str(session.cwd),
        additional_directories=tuple(str(d) for d in session.additional_directories),
        mode=session.mode.value,
        model=session.model,
        title=session.title,
        created_at=created_at or now,
        updated_at=session.updated_at,
        mcp_servers=session.mcp_servers,
    )


class DurableSessions:
    """The session store as one connection uses it."""

    def __init__(self, state_dir: Path, store: SessionStore | None) -> None:
        self._state_dir = state_dir
        self._store = store
        self._owns_store = store is None
        self.owner = Owner()

    @property
    def store(self) -> SessionStore:
        """The store, opened on first use (raises `SessionStoreError`)."""
        if self._store is None:
            self._store = SessionStore(self._state_dir)
        return self._store

    @property
    def opened(self) -> SessionStore | None:
        """The store if it is open now (None before first use and after `close`)."""
        return self._store

    def unknown_session(self, session_id: str) -> ResourceNotFound:
        """The error for a session that is not open on this connection (stored or not)."""
        try:
            stored = self.store.get(session_id) is not None
        except SessionStoreError:
            stored = False
        return unknown_session(session_id, stored=stored)

    def close(self, session_ids: Sequence[str], *, close_store: bool = True) -> None:
        """Releases these sessions; closes the store too if it opened it."""
        if self._store is None:
            return
        for session_id in session_ids:
            try:
                self._store.release(session_id, self.owner)
            except SessionStoreError:
                _log.exception("could not release session %s", session_id)
        if close_store and self._owns_store:
            self._store.close()
            self._store = None

    def open(
        self,
        session_id: str,
        cwd: Path,
        additional_directories: tuple[Path, ...],
        mcp_servers: tuple[JsonObject, ...],
        *,
        ledger: EffectLedger,
        live: Session | None,
        models: Sequence[str],
    ) -> Session:
        """Claims a stored session for this connection, settles the turns a stopped bridge
        left running (SESS-020), takes the request's directories and MCP servers, and
        returns the live session (`live` when it is already open here). Neither the turns
        nor the history are read here: `restore` does that after the replay streamed.

        The "always" permission answers are not restored: they last as long as the session
        is open on one connection (SESS-032). Raises the store's errors.
        """
        store = self.store
        record = store.claim(session_id, self.owner)
        try:
            recover_session(store, session_id, ledger)
            store.update(
                session_id,
                cwd=str(cwd),
                additional_directories=[str(d) for d in additional_directories],
                mcp_servers=mcp_servers,
            )
            last = store.last_ordinal(session_id)
            session = live or _restored(record, models)
        except BaseException:
            if live is None:
                self.close([session_id], close_store=False)
            raise
        session.cwd, session.additional_directories = cwd, additional_directories
        session.mcp_servers = mcp_servers
        session.turns = last
        return session


async def restore(
    peer: JsonRpcPeer,
    store: SessionStore,
    session: Session,
    *,
    replay: bool,
    compaction: bool = False,
) -> None:
    """For `session/load` streams the replay (a page of turns at a time, issue 15.3), then
    the session's last usage_update (USAGE-006). The model history is read when the session
    first needs it, as it stands now (the turns stored so far: a prompt's own turn, stored
    before, is not part of it), so neither the first update nor the response waits for the
    whole session, and the load holds one page. Resume takes the usage back silently.
    `compaction`: the client takes `compaction_update`s (COMPACT-005)."""
    last_seq = store.last_seq(session.session_id)
    session.history_source = functools.partial(
        store.history, session.session_id, through_seq=last_seq
    )
    if replay:
        await replay_session(peer, store, session.session_id, compaction=compaction)
    usage = store.usage(session.session_id)
    if usage is not None:
        session.live = session.live or LiveUpdates(session.model)
        update = session.live.restore(usage)
        if replay and update is not None:
            await notify_update(peer, session.session_id, update)


def _restored(record: SessionRecord, models: Sequence[str]) -> Session:
    try:
        mode = SessionMode(record.mode)
    except ValueError:
        mode = SessionMode.ASK
    return Session(
        record.session_id,
        Path(record.cwd),
        (),
        model=record.model if record.model in models else models[0],
        mode=mode,
        title=record.title,
        updated_at=record.updated_at,
    )
