"""The provider trace (`--trace`): one JSON record per request, response head, received SSE
item and classified error, with anything that can carry a credential redacted.

A broken trace hook never breaks the model stream: it is reported once and tracing goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import httpx

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers._errors import ModelStreamError
from acp_bridge.providers.http._options import TraceSink
from acp_bridge.providers.http._sse_items import RawJson, SseComment, SseEvent, SseItem
from acp_bridge.providers.http._urls import redact_url

__all__ = ["ProviderTrace", "redact_headers"]

logger = logging.getLogger(__name__)

_SECRET_HEADER_PARTS = ("auth", "key", "token", "secret", "cookie", "session")
_REDACTED = "[redacted]"


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers safe to trace or log: anything that can carry a credential is replaced."""
    return {
        name: _REDACTED if any(part in name.lower() for part in _SECRET_HEADER_PARTS) else value
        for name, value in headers.items()
    }


def _traced_headers(headers: Mapping[str, str]) -> dict[str, JsonValue]:
    return dict(redact_headers(headers))


class ProviderTrace:
    """The trace records of one provider instance (each call does nothing without a hook)."""

    def __init__(self, provider: str, sink: TraceSink | None) -> None:
        self._provider = provider
        self._sink = sink
        self._failed = False

    @property
    def enabled(self) -> bool:
        return self._sink is not None

    def request(self, request: httpx.Request, body: JsonObject, attempt: int) -> None:
        if self._sink is None:
            return
        self.record(
            attempt,
            type="provider_request",
            method=request.method,
            url=redact_url(request.url),  # ROBUST-URL-002
            headers=_traced_headers(request.headers),
            body=body,
        )

    def response(self, response: httpx.Response, attempt: int) -> None:
        self.record(
            attempt,
            type="provider_response",
            status=response.status_code,
            headers=_traced_headers(response.headers),
        )

    def item(self, item: SseItem, attempt: int) -> None:
        if self._sink is None:
            return
        if isinstance(item, SseEvent):
            self.record(
                attempt,
                type="provider_event",
                event=item.event,
                data=item.data,
                fields=dict(item.fields),
                terminated=item.terminated,
            )
        elif isinstance(item, SseComment):
            self.record(attempt, type="provider_comment", text=item.text)
        elif isinstance(item, RawJson):
            self.record(attempt, type="provider_raw_json", text=item.text, complete=item.complete)

    def error(self, exc: ModelStreamError, attempt: int) -> None:
        self.record(
            attempt,
            type="provider_error",
            fault=exc.kind.value,
            phase=exc.phase.value,
            retryable=exc.retryable,
            status=exc.status,
            message=exc.message,
        )

    def record(self, attempt: int, **record: JsonValue) -> None:
        sink = self._sink
        if sink is None:
            return
        try:
            sink({**record, "provider": self._provider, "attempt": attempt})
        except Exception:
            # A broken trace file must not break the model stream; say so once.
            if not self._failed:
                self._failed = True
                logger.warning("provider trace hook failed; tracing continues", exc_info=True)
