"""The seam between the turn engine and a model: `ModelProvider`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from acp_bridge.providers._conversation import ModelRequest
from acp_bridge.providers._events import StreamEvent

__all__ = ["ModelProvider"]


class ModelProvider(Protocol):
    """A model reachable by streaming.

    Contract:
        - `stream` yields normalized `StreamEvent`s for exactly one attempt and ends after
          its `Finish`; it raises `ModelStreamError` for every failure (connect, HTTP status,
          in-band error, transport cut, clean EOF without terminal marker, timeouts).
        - It never retries and never resumes on its own: the turn engine owns every retry.
        - It is cancellable at any await (anyio cancellation) and closes its connection then.
        - `name` is the provider kind ("openai", "scripted", ...); `model` the default model id.
    """

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...
