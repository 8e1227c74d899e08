"""The HTTP read timeout of one stream, switched at the model's first token (TIMEOUT-001).

Until the model's first token only `first_token_timeout` bounds the wait (a local model's
long prompt processing after the headers must not be cut short by the idle timeout, issue
14.6); from the first token on, each read may wait `idle_timeout` s.

A `SwitchedReadTimeout` carries both, as the `read` value of the request's standard httpx
`timeout` extension, so each transport can honour it:

- the bridge's own HTTP/1.1 transport (`_h1_connection`) asks `read_deadline(now)`: the
  first-token deadline until `first_token()` is called, `now + idle_timeout` after, and
  raises `FirstTokenTimeout` (an `httpx.ReadTimeout`) when the first of them passes;
- httpcore (the proxied route, `_h1_transport`) takes the read timeout as a number and
  bounds each read with a deadline of `current_time() + timeout`: added to a time, this
  number gives infinity until `first_token()`, then `idle_timeout` (the transport bounds
  the wait for the first token itself there). Its value as a plain float is `idle_timeout`:
  any use that ignores the switch gets the behaviour from before 14.6.
"""

from __future__ import annotations

import math
from typing import Self

import httpx

__all__ = ["FirstTokenTimeout", "SwitchedReadTimeout"]


class FirstTokenTimeout(httpx.ReadTimeout):
    """A read reached the first-token deadline (FIRST_TOKEN_TIMEOUT, not IDLE_TIMEOUT)."""


class SwitchedReadTimeout(float):
    """`idle_timeout` s that count only after `first_token()` (see the module docstring)."""

    __slots__ = ("_current", "first_token_deadline")

    _current: float
    first_token_deadline: float

    def __new__(cls, idle_timeout: float, first_token_deadline: float = math.inf) -> Self:
        timeout = super().__new__(cls, idle_timeout)
        timeout._current = math.inf
        timeout.first_token_deadline = first_token_deadline
        return timeout

    @property
    def switched(self) -> bool:
        return self._current != math.inf

    def first_token(self) -> None:
        """From now on a read may wait `idle_timeout` s."""
        self._current = float(self)

    def read_deadline(self, now: float) -> float:
        """When a read that starts at `now` times out."""
        current = self._current
        return self.first_token_deadline if current == math.inf else now + current

    def __add__(self, other: float, /) -> float:
        return self._current + other

    def __radd__(self, other: float, /) -> float:
        return other + self._current
