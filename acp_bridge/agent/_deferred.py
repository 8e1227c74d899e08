"""The prompt handlers, loaded once a session exists (cold start, STARTUP-004).

Importing `_prompting` imports the turn engine, the tools and the provider's playback: what a
prompt needs and `session/new` does not. The connection's front loads them right after the
first `session/new` (or load/resume) response is written (`acp_bridge.agent._serve`); a
prompt or a cancel that comes first loads them itself.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING

from acp_bridge._json import JsonValue
from acp_bridge.agent._connection import Connection
from acp_bridge.jsonrpc import Reply

if TYPE_CHECKING:
    from acp_bridge.agent._prompting import PromptTurns

__all__ = ["DeferredPrompts"]


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while modules load, then what they made is frozen out of the
    collector's generations, as for the rest of the start (STARTUP-003, cli/_run.py)."""
    if not gc.isenabled():  # the caller manages the collector (the start path does)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


class DeferredPrompts:
    """`PromptTurns` of one connection, built on first need."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._turns: PromptTurns | None = None

    def load(self) -> PromptTurns:
        if self._turns is None:
            with _collector_paused():
                from acp_bridge.agent._prompting import PromptTurns

            self._turns = PromptTurns(self._conn)
        return self._turns

    async def session_prompt(self, params: JsonValue) -> Reply:
        return await self.load().session_prompt(params)

    async def session_cancel(self, params: JsonValue) -> None:
        await self.load().session_cancel(params)
