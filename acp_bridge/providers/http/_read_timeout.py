"""The HTTP read timeout of one stream, switched at the model's first token (TIMEOUT-001).

httpcore takes a response's read timeout once (when the headers' wait, and again when the
body's first read, starts) and bounds each read with `anyio.fail_after(timeout)`, that is a
deadline of `current_time() + timeout`. So a plain number cannot change at the first token:
set to `idle_timeout`, it cut a local model's long prompt processing after the headers short
(issue 14.6), before `first_token_timeout` could fire.

A `SwitchedReadTimeout` is that number, with a switch: added to a time, it gives no deadline
(infinity) until `first_token()` is called, and `idle_timeout` from then on. Until the first
token the transport bounds the wait itself, with the first-token deadline; after it, each read
is bounded by httpcore's own per-read deadline, so the per-chunk hot path gets no cancel scope
of ours (one per chunk cost about 70% more transport CPU per event). Its value as a plain
float is `idle_timeout`: any use that ignores the switch gets the behaviour from before 14.6.
"""

from __future__ import annotations

import math
from typing import Self

__all__ = ["SwitchedReadTimeout"]


class SwitchedReadTimeout(float):
    """`idle_timeout` s that count only after `first_token()` (see the module docstring)."""

    __slots__ = ("_current",)

    _current: float

    def __new__(cls, idle_timeout: float) -> Self:
        timeout = super().__new__(cls, idle_timeout)
        timeout._current = math.inf
        return timeout

    def first_token(self) -> None:
        """From now on a read may wait `idle_timeout` s."""
        self._current = float(self)

    def __add__(self, other: float, /) -> float:
        return self._current + other

    def __radd__(self, other: float, /) -> float:
        return other + self._current
