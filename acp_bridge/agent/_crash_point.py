"""Test fault points: the bridge kills itself (SIGKILL) at a named step, when told to.

`ACP_BRIDGE_TEST_CRASH_AT=<point>` in the environment makes `crash_point(point)` end the
process as `kill -9` would, exactly there, so a test can prove what a crash in a window that
no message marks leaves behind (SESS-UNANSWERED-001). Nothing else reads the variable; without
it, a crash point is one dictionary look-up.

Points: `turn-committed` (a turn's completion is durable, its response not yet written);
`turn-ending` (the turn's last answer held in memory, its end not yet written: STORE4-002).
"""

from __future__ import annotations

import os
import signal

__all__ = ["CRASH_VARIABLE", "crash_point"]

CRASH_VARIABLE = "ACP_BRIDGE_TEST_CRASH_AT"


def crash_point(point: str) -> None:
    if os.environ.get(CRASH_VARIABLE) == point:
        os.kill(os.getpid(), signal.SIGKILL)
