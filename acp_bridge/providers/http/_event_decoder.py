"""What every provider's stream decoder does before it reads an event (sans-IO).

A decoder takes the SSE items of one attempt (`feed`) and returns normalized events. Once
it is `done` (its provider's terminal marker seen) it takes nothing more; a JSON value
outside SSE framing is an error body or no stream at all (`raw_json_error`); comments are
nothing to a model stream. What is left, an `SseEvent`, is the subclass's `_event`.
"""

from __future__ import annotations

from acp_bridge.providers._events import StreamEvent
from acp_bridge.providers.http._payload import raw_json_error
from acp_bridge.providers.http._sse_items import RawJson, SseEvent, SseItem

__all__ = ["EventDecoder"]


class EventDecoder:
    """The shared opening of `feed`; subclasses implement `_event`."""

    def __init__(self, provider: str, secret: str | None) -> None:
        self._provider = provider
        self._secret = secret
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def feed(self, item: SseItem) -> list[StreamEvent]:
        if self._done:
            return []
        if isinstance(item, RawJson):
            raise raw_json_error(self._provider, item, secret=self._secret)
        if not isinstance(item, SseEvent):
            return []
        return self._event(item)

    def feed_data(self, data: str) -> list[StreamEvent]:
        """`feed(SseEvent(data))`: a plain event's data (see `StreamDecoder.feed_data`)."""
        return self.feed(SseEvent(data))

    def _event(self, event: SseEvent) -> list[StreamEvent]:
        raise NotImplementedError
