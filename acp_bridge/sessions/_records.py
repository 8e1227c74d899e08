"""What the session store hands out: sessions, turns, kept model calls, shown tool calls.

Plain frozen dataclasses in the turn engine's vocabulary (`AssistantTurn`, `ToolStatus`,
`ToolContent`); the agent layer turns them into ACP wire models. Also the store's errors.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.errors import AcpBridgeError
from acp_bridge.providers import AssistantTurn, Message
from acp_bridge.tools import Location, ToolContent, ToolKind
from acp_bridge.turn import CompactionRecord, StoreFileProblem, ToolStatus

__all__ = [
    "DisplaySegment",
    "SessionInUse",
    "SessionNotFound",
    "SessionPage",
    "SessionRecord",
    "SessionStoreError",
    "StoredModelCall",
    "StoredToolCall",
    "StoredTurn",
    "TurnStart",
    "TurnState",
]


class SessionStoreError(AcpBridgeError):
    """The session store could not be opened, read or written (locked past the busy
    timeout, disk full, a schema newer than this acp-bridge).

    `problem`, when the file itself is the trouble, says why without the full path (the
    message may name it and goes to the log only: EFFECT-OPEN-001)."""

    def __init__(self, message: str, problem: StoreFileProblem | None = None) -> None:
        super().__init__(message)
        self.problem = problem


class SessionNotFound(SessionStoreError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"no stored session {session_id}")
        self.session_id = session_id


class SessionInUse(SessionStoreError):
    """Another live bridge connection owns the session (SESS-015)."""

    def __init__(
        self, session_id: str, owner_pid: int | None, *, same_process: bool = False
    ) -> None:
        if owner_pid is None:
            where = "it is not open in this connection"
        elif same_process:
            where = f"another connection of this acp-bridge process ({owner_pid}) has it open"
        else:
            where = f"the acp-bridge process {owner_pid} has it open"
        super().__init__(f"Session {session_id} is in use: {where}")
        self.session_id = session_id
        self.owner_pid = owner_pid


class TurnState(enum.StrEnum):
    RUNNING = "running"  # started; the process may still be running it, or may have died
    COMPLETED = "completed"  # answered with a stop reason (cancelled included)
    FAILED = "failed"  # answered with an error (retries exhausted, a client error)
    INTERRUPTED = "interrupted"  # found running by the next owner: the bridge had stopped


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One stored session. Paths are absolute, as given by the editor."""

    session_id: str
    cwd: str
    additional_directories: tuple[str, ...]
    mode: str
    model: str
    title: str | None
    created_at: float
    updated_at: float
    mcp_servers: tuple[JsonObject, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionPage:
    """One page of `SessionStore.list_sessions`, newest first; `next_cursor` None at the end."""

    sessions: tuple[SessionRecord, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class TurnStart:
    """A turn row just written (`running`), with the ids the engine must use.

    `retry_of` is the `seq` of the interrupted or failed turn this one runs again (same
    ordinal and turn id, fresh `id_prefix`: SESS-021), else None. `unanswered` is set when the
    prompt is the one of the session's last turn, which completed but whose response was never
    written: no turn row was written, and the prompt is answered with this stored stop reason
    (SESS-UNANSWERED-001); `seq` and the ids are that turn's.
    """

    seq: int
    ordinal: int
    turn_id: str
    id_prefix: str
    retry_of: int | None = None
    unanswered: str | None = None


@dataclass(frozen=True, slots=True)
class DisplaySegment:
    """A run of consecutive chunks of one kind the editor was shown for a kept attempt."""

    kind: str  # "text" or "thought"
    message_id: str
    text: str


@dataclass(frozen=True, slots=True)
class StoredModelCall:
    """A completed model call: its kept attempt's record and what the editor was shown."""

    model_call: int
    attempt: int
    message: AssistantTurn
    display: tuple[DisplaySegment, ...]


@dataclass(frozen=True, slots=True)
class StoredToolCall:
    """A tool call as the editor last saw it (every field merged, like an editor does).

    `model_call` is the model call whose attempt made it; `position` its order among the
    turn's calls; `effect_key` is set once the call was about to run (None for tools
    without side effects).
    """

    tool_call_id: str
    model_call: int
    position: int
    title: str
    kind: ToolKind
    status: ToolStatus
    content: tuple[ToolContent, ...] = ()
    locations: tuple[Location, ...] = ()
    raw_input: JsonValue = None
    raw_output: JsonValue = None
    effect_key: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in (ToolStatus.COMPLETED, ToolStatus.FAILED)


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """One prompt turn of a session, with what it kept and showed.

    `superseded`: the turn was run again (SESS-021); it stays for display, but its messages
    are no longer model history. `note` is the closing text a replay shows for a turn that
    did not complete (interrupted or failed). `messages` is the turn's history (its prompt
    first), `model_calls` its kept model calls with what they showed, `compactions` the
    compactions made during it (COMPACT-005).
    """

    seq: int
    ordinal: int
    turn_id: str
    id_prefix: str
    state: TurnState
    superseded: bool
    prompt: tuple[JsonObject, ...]
    stop_reason: str | None
    note: str | None
    started_at: float
    ended_at: float | None
    messages: tuple[Message, ...] = ()
    model_calls: tuple[StoredModelCall, ...] = ()
    tool_calls: tuple[StoredToolCall, ...] = ()
    compactions: tuple[CompactionRecord, ...] = ()
