"""A live ACP session: where it works, how it asks, what it remembers, what runs now.

Its durable twin is the session store's record (`acp_bridge.sessions`); this object holds
what only the live connection has: the running turn's cancel scope and the permission
memory ("always" answers last as long as the session is open on this connection: SESS-032).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from acp_bridge._json import JsonObject
from acp_bridge.providers import Message
from acp_bridge.turn import PermissionMemory, SessionMode

if TYPE_CHECKING:
    from acp_bridge.agent._live import LiveUpdates
    from acp_bridge.turn import ContextBudget

__all__ = ["Session", "new_session_id"]


def new_session_id() -> str:
    return "sess_" + secrets.token_hex(12)


@dataclass(slots=True)
class Session:
    """State of one session on this connection.

    `history` holds only completed material (the turn engine guarantees it); `turns` is the
    ordinal of the last turn, from which turn ids (and so effect keys) are derived.
    `mcp_servers` is what the editor passed, recorded without secrets (never run yet).
    `idle` is set while no turn runs; a turn clears it until its end is recorded.
    `reasoning`: the effort chosen in this session (None: the configured default).
    """

    session_id: str
    cwd: Path
    additional_directories: tuple[Path, ...]
    model: str
    mode: SessionMode = SessionMode.ASK
    history_source: Callable[[], list[Message]] | None = None
    """Reads the stored history on first use of `history`: a loaded session's history is
    read when something needs it (its next prompt), not by `session/load`, whose memory then
    holds one page of turns (issue 15.3)."""
    _history: list[Message] = field(default_factory=list)
    permissions: PermissionMemory = field(default_factory=PermissionMemory)
    turns: int = 0
    title: str | None = None
    updated_at: float = field(default_factory=time.time)
    mcp_servers: tuple[JsonObject, ...] = ()
    running: anyio.CancelScope | None = None
    idle: anyio.Event = field(default_factory=anyio.Event)
    closed: bool = False
    live: LiveUpdates | None = None
    instructions_told: bool = False
    reasoning: str | None = None
    budget: ContextBudget | None = None  # COMPACT-002: kept across turns (agent/_compacting)

    def __post_init__(self) -> None:
        self.idle.set()

    @property
    def history(self) -> list[Message]:
        """The model history (read from `history_source` the first time; raises its errors)."""
        source = self.history_source
        if source is not None:
            self._history = source()
            self.history_source = None
        return self._history

    @history.setter
    def history(self, messages: list[Message]) -> None:
        self._history = messages
        self.history_source = None

    def read_history(self) -> None:
        """Reads the stored history now if it was not read yet (raises the store's errors)."""
        _ = self.history

    def live_updates(
        self,
        *,
        notices: bool,
        context_window: int | None,
        windows: Callable[[str], tuple[int, str]] | None = None,
        compaction: bool = False,
    ) -> LiveUpdates:
        """The session's usage/notice/plan translator, kept across turns (its cumulative
        cost and context in use), following the session's current model."""
        if self.live is None:
            from acp_bridge.agent._live import LiveUpdates  # with the first prompt

            self.live = LiveUpdates(self.model)
        self.live.model = self.model
        self.live.notices = notices
        self.live.compaction = compaction
        self.live.context_window = context_window
        self.live.windows = windows
        return self.live

    @property
    def roots(self) -> tuple[Path, ...]:
        return (self.cwd, *self.additional_directories)

    def cancel(self) -> bool:
        """Cancels the running turn, if any; True when there was one."""
        if self.running is None:
            return False
        self.running.cancel()
        return True
