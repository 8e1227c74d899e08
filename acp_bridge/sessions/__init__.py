"""Durable sessions: the SQLite session store, turn journaling, crash recovery and replay.

Layer contract (spec/sessions.md): a session's settings, its turns and everything they kept
(the provider conversation) and showed (message segments, tool calls in their final state)
are written to `sessions.sqlite3` in the state directory as each turn progresses, before any
side effect of the turn runs. A session is owned by one connection at a time. A turn found
`running` by its next owner is settled as interrupted from the effect ledger. `transcript`
says what `session/load` replays. No JSON-RPC, no ACP wire models here.
"""

from acp_bridge.sessions._codec import message_from_json, message_to_json
from acp_bridge.sessions._journal import TurnRecorder
from acp_bridge.sessions._owner import Owner, owner_alive, process_start
from acp_bridge.sessions._records import (
    DisplaySegment,
    SessionInUse,
    SessionNotFound,
    SessionPage,
    SessionRecord,
    SessionStoreError,
    StoredModelCall,
    StoredToolCall,
    StoredTurn,
    TurnStart,
    TurnState,
)
from acp_bridge.sessions._recovery import (
    INTERRUPTED_NOTE,
    NOT_FINISHED,
    NOT_RUN,
    OUTCOME_UNKNOWN,
    recover_session,
    settle_tool_call,
)
from acp_bridge.sessions._schema import MIGRATIONS, SCHEMA_VERSION, migrate
from acp_bridge.sessions._shown import ShownCall, ShownTurn
from acp_bridge.sessions._store import PAGE_SIZE, SessionStore
from acp_bridge.sessions._transcript import PromptShown, ReplayItem, transcript

__all__ = [
    "INTERRUPTED_NOTE",
    "MIGRATIONS",
    "NOT_FINISHED",
    "NOT_RUN",
    "OUTCOME_UNKNOWN",
    "PAGE_SIZE",
    "SCHEMA_VERSION",
    "DisplaySegment",
    "Owner",
    "PromptShown",
    "ReplayItem",
    "SessionInUse",
    "SessionNotFound",
    "SessionPage",
    "SessionRecord",
    "SessionStore",
    "SessionStoreError",
    "ShownCall",
    "ShownTurn",
    "StoredModelCall",
    "StoredToolCall",
    "StoredTurn",
    "TurnRecorder",
    "TurnStart",
    "TurnState",
    "message_from_json",
    "message_to_json",
    "migrate",
    "owner_alive",
    "process_start",
    "recover_session",
    "settle_tool_call",
    "transcript",
]
