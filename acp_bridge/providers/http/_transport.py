"""One streaming POST per model call, on httpx, with every failure classified at one boundary.

`HttpTransport` owns the provider's `httpx.AsyncClient` (created lazily, transport retries
off: the turn engine owns every retry) and drives a provider's `StreamDecoder` with the
items of our own SSE decoder. Contract of `HttpTransport.stream`:

- exactly one upstream request; the response is closed when the iterator ends, fails or
  is closed or cancelled;
- httpx exceptions become `ModelStreamError` here and nowhere else: connect errors are
  CONNECTION_FAILED (phase connect), a cut body is STREAM_INTERRUPTED, the read timeout is
  the IDLE_TIMEOUT, and no semantic event within `first_token_timeout` is
  FIRST_TOKEN_TIMEOUT;
- a non-2xx status is classified from its status, headers and error body;
- after the terminal marker the rest of the body is drained briefly (bounded), so the
  connection can go back to the pool;
- the trace hook sees every request (auth headers redacted) and every received SSE item.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import anyio
import httpx

import acp_bridge
from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase
from acp_bridge.providers._events import StreamEvent, StreamStart, Usage
from acp_bridge.providers.http._classify import error_from_status, scrub
from acp_bridge.providers.http._hints import connect_failure, status_hint
from acp_bridge.providers.http._options import HttpProviderOptions
from acp_bridge.providers.http._sse import RawJson, SseComment, SseDecoder, SseEvent, SseItem
from acp_bridge.providers.http._urls import install_log_redaction, redact_url

__all__ = ["HttpTransport", "StreamDecoder", "WireRequest", "redact_headers"]

logger = logging.getLogger(__name__)

_ERROR_BODY_LIMIT = 64 * 1024
_DRAIN_TIMEOUT = 0.25
_SECRET_HEADER_PARTS = ("auth", "key", "token", "secret", "cookie", "session")
_REDACTED = "[redacted]"
# Events that do not count as "the model said something" for the first-token timeout.
_NOT_SEMANTIC = (StreamStart, Usage)
# No compression for streams: a compressing proxy would hold deltas back, and the raw body
# can then be read without a decoding layer on the per-chunk hot path.
_BASE_HEADERS = {
    "content-type": "application/json",
    "accept": "text/event-stream",
    "accept-encoding": "identity",
}


@dataclass(frozen=True, slots=True)
class WireRequest:
    """A provider's rendered request: where to POST which encoded JSON body with which
    headers. `content` is the body as sent (the adapters assemble it from each history
    message's cached encoding: `_fragments`); `body` decodes it again, for the trace."""

    url: str
    content: bytes
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def body(self) -> JsonObject:
        body: JsonObject = json.loads(self.content)
        return body


class StreamDecoder(Protocol):
    """Turns one attempt's SSE items into normalized events (sans-IO, one per attempt).

    `feed` and `end` raise `ModelStreamError` for in-band errors, malformed tool calls and a
    stream without its terminal marker. `done` turns True once the terminal marker arrived.
    `feed_data(data)` is exactly `feed(SseEvent(data))` (a plain, terminated `message`
    event), for the per-chunk hot path.
    """

    @property
    def done(self) -> bool: ...

    def feed(self, item: SseItem) -> list[StreamEvent]: ...

    def feed_data(self, data: str) -> list[StreamEvent]: ...

    def end(self) -> list[StreamEvent]: ...


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers safe to trace or log: anything that can carry a credential is replaced."""
    return {
        name: _REDACTED if any(part in name.lower() for part in _SECRET_HEADER_PARTS) else value
        for name, value in headers.items()
    }


class HttpTransport:
    """The HTTP side of one provider instance: its client, timeouts and trace hook."""

    def __init__(self, provider: str, options: HttpProviderOptions) -> None:
        self._provider = provider
        self._options = options
        self._client: httpx.AsyncClient | None = None
        self._trace_failed = False

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    def stream(
        self, wire: WireRequest, decoder: StreamDecoder, *, attempt: int
    ) -> AsyncIterator[StreamEvent]:
        return self._stream(wire, decoder, attempt)

    def prepare(self) -> None:
        """Builds the HTTP client now (TLS context, connection pool) rather than on the
        first request, so the first prompt does not pay for it."""
        self._http()

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            install_log_redaction()  # httpx logs each request's URL at INFO
            options = self._options
            self._client = httpx.AsyncClient(
                # Exactly one retry layer, the turn engine's (model-streams.md §0.2).
                transport=httpx.AsyncHTTPTransport(retries=0),
                timeout=httpx.Timeout(
                    connect=options.connect_timeout,
                    read=options.idle_timeout,
                    write=options.write_timeout,
                    pool=options.connect_timeout,
                ),
                follow_redirects=False,
                headers={"user-agent": f"acp-bridge/{acp_bridge.__version__}"},
            )
        return self._client

    async def _stream(
        self, wire: WireRequest, decoder: StreamDecoder, attempt: int
    ) -> AsyncIterator[StreamEvent]:
        client = self._http()
        timeout = self._options.first_token_timeout
        first_deadline = math.inf if timeout is None else anyio.current_time() + timeout
        request = client.build_request(
            "POST",
            wire.url,
            headers={**_BASE_HEADERS, **wire.headers, **self._options.extra_headers},
            content=wire.content,
        )
        if self._options.trace is not None:
            self._trace_request(request, wire.body, attempt)
        phase = Phase.CONNECT
        response: httpx.Response | None = None
        chunks: AsyncIterator[bytes] | None = None
        try:
            try:
                with anyio.CancelScope(deadline=first_deadline) as scope:
                    response = await client.send(request, stream=True)
                if response is None or scope.cancelled_caught:
                    raise self._first_token_timeout(phase)
                await self._check_status(response, attempt)
                phase = Phase.STREAM
                sse = SseDecoder()
                # Raw bytes unless the server compressed anyway (then httpx decodes).
                encoded = response.headers.get("content-encoding", "identity") != "identity"
                chunks = response.aiter_bytes() if encoded else response.aiter_raw()
                tracing = self._options.trace is not None  # frozen options: checked once
                # A chunk that is one plain event skips the SSE items (the trace needs them).
                plain = None if tracing else sse.plain
                budget = self._options.max_output_bytes  # ROBUST-OUT-001: bytes left
                semantic = False
                quiet_since = math.inf
                while True:
                    if semantic:
                        # The first-token clock has stopped; the read timeout is the idle
                        # timeout. No scope per read and no `anext(chunks, None)` wrapper
                        # object: this is the per-chunk hot path.
                        try:
                            chunk = await chunks.__anext__()
                        except StopAsyncIteration:
                            chunk = None
                    else:
                        with anyio.CancelScope(deadline=first_deadline) as scope:
                            chunk = await anext(chunks, None)
                        if scope.cancelled_caught:
                            raise self._first_token_timeout(phase)
                    data = None
                    if chunk is not None:
                        budget -= len(chunk)
                        if budget < 0:
                            raise self._output_cap()
                        if plain is not None:
                            data = plain(chunk)
                    produced = False
                    if data is not None:
                        items: list[SseItem] | None = None
                        for event in decoder.feed_data(data):
                            if not semantic:
                                semantic = not isinstance(event, _NOT_SEMANTIC)
                            produced = True
                            yield event
                        if decoder.done:
                            return
                    else:
                        items = sse.end() if chunk is None else sse.feed(chunk)
                        for item in items:
                            if tracing:
                                self._trace_item(item, attempt)
                            for event in decoder.feed(item):
                                if not semantic:
                                    semantic = not isinstance(event, _NOT_SEMANTIC)
                                produced = True
                                yield event
                            if decoder.done:
                                return
                    if produced:
                        quiet_since = math.inf
                    elif semantic and (items is None or items) and chunk is not None:
                        # Bytes without events (keep-alive comments, pings) reset the read
                        # timeout but are not progress: the idle timeout counts from the
                        # first of them (PROV-TIMEOUT-002). Off the per-event hot path.
                        now = anyio.current_time()
                        quiet_since = min(quiet_since, now)
                        if now - quiet_since >= self._options.idle_timeout:
                            raise self._idle_timeout(phase, keep_alive=True)
                    if chunk is None:
                        for event in decoder.end():
                            yield event
                        return
            except httpx.HTTPError as exc:
                raise self._transport_error(exc, phase) from exc
        except ModelStreamError as exc:
            self._trace(
                attempt,
                type="provider_error",
                fault=exc.kind.value,
                phase=exc.phase.value,
                retryable=exc.retryable,
                status=exc.status,
                message=exc.message,
            )
            raise
        finally:
            with anyio.CancelScope(shield=True):
                if chunks is not None:
                    if decoder.done:
                        await _drain(chunks)
                    await _close_iterator(chunks)
                if response is not None:
                    await response.aclose()

    async def _check_status(self, response: httpx.Response, attempt: int) -> None:
        """Trace the response head; raise the classified error of a non-2xx status."""
        self._trace(
            attempt,
            type="provider_response",
            status=response.status_code,
            headers=_traced_headers(response.headers),
        )
        if response.is_success:
            return
        body = await _read_limited(response)
        error = error_from_status(
            self._provider,
            response.status_code,
            response.headers,
            body,
            secret=self._options.api_key,
        )
        if response.status_code in (401, 403, 404):  # the URL asked and the fix (CONF-ERR-003)
            hint = status_hint(self._provider, response.status_code, str(response.request.url))
            error.message = f"{error.message.rstrip('.')}. {hint[:1].upper()}{hint[1:]}"
            error.args = (error.message,)
        raise error

    def _idle_timeout(
        self, phase: Phase, *, where: str = "the server", keep_alive: bool = False
    ) -> ModelStreamError:
        what = "only keep-alives" if keep_alive else "no data"
        return ModelStreamError(
            FaultKind.IDLE_TIMEOUT,
            f"{self._provider}: {what} from {where} for {self._options.idle_timeout:g} s",
            phase=phase,
        )

    def _first_token_timeout(self, phase: Phase) -> ModelStreamError:
        return ModelStreamError(
            FaultKind.FIRST_TOKEN_TIMEOUT,
            f"{self._provider}: no output within {self._options.first_token_timeout:g} s",
            phase=phase,
        )

    def _transport_error(self, exc: httpx.HTTPError, phase: Phase) -> ModelStreamError:
        """The one place where httpx exceptions are classified (model-streams.md §5)."""
        where = _origin(exc)
        text = str(exc)
        detail = scrub(
            f"{type(exc).__name__}: {text}" if text else type(exc).__name__, self._options.api_key
        )
        if isinstance(exc, httpx.ReadTimeout):
            return self._idle_timeout(phase, where=where)
        if isinstance(exc, httpx.ConnectError):
            reason, sentence, retryable = connect_failure(exc, str(exc.request.url))
            return ModelStreamError(
                FaultKind.CONNECTION_FAILED,
                f"{self._provider}: {sentence}"
                if reason != "unreachable"
                else f"{self._provider}: could not reach {where} ({detail})",
                phase=Phase.CONNECT,
                retryable=retryable,
            )
        if isinstance(exc, httpx.TimeoutException):
            return ModelStreamError(
                FaultKind.CONNECTION_FAILED,
                f"{self._provider}: could not reach {where} ({detail})",
                phase=Phase.CONNECT,
            )
        if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
            return ModelStreamError(
                FaultKind.PROVIDER_ERROR,
                f"{self._provider}: cannot send to {where} ({detail})",
                phase=Phase.CONNECT,
                retryable=False,
            )
        if phase is Phase.CONNECT:
            return ModelStreamError(
                FaultKind.CONNECTION_FAILED,
                f"{self._provider}: {where} closed the connection before answering ({detail})",
                phase=Phase.CONNECT,
            )
        return ModelStreamError(
            FaultKind.STREAM_INTERRUPTED,
            f"{self._provider}: the stream from {where} broke ({detail})",
            phase=Phase.STREAM,
        )

    def _output_cap(self) -> ModelStreamError:
        limit = self._options.max_output_bytes
        return ModelStreamError(  # final: the same request would stream as much again
            FaultKind.PROVIDER_ERROR,
            f"{self._provider}: the model call streamed more than max_output_bytes ({limit} "
            "bytes) and was stopped; raise max_output_bytes (ACP_BRIDGE_MAX_OUTPUT_BYTES or "
            "the config key max_output_bytes) if the model really writes that much",
            phase=Phase.STREAM,
            retryable=False,
        )

    def _trace_request(self, request: httpx.Request, body: JsonObject, attempt: int) -> None:
        self._trace(
            attempt,
            type="provider_request",
            method=request.method,
            url=redact_url(request.url),  # ROBUST-URL-002
            headers=_traced_headers(request.headers),
            body=body,
        )

    def _trace_item(self, item: SseItem, attempt: int) -> None:
        if self._options.trace is None:
            return
        if isinstance(item, SseEvent):
            self._trace(
                attempt,
                type="provider_event",
                event=item.event,
                data=item.data,
                fields=dict(item.fields),
                terminated=item.terminated,
            )
        elif isinstance(item, SseComment):
            self._trace(attempt, type="provider_comment", text=item.text)
        elif isinstance(item, RawJson):
            self._trace(attempt, type="provider_raw_json", text=item.text, complete=item.complete)

    def _trace(self, attempt: int, **record: JsonValue) -> None:
        sink = self._options.trace
        if sink is None:
            return
        try:
            sink({**record, "provider": self._provider, "attempt": attempt})
        except Exception:
            # A broken trace file must not break the model stream; say so once.
            if not self._trace_failed:
                self._trace_failed = True
                logger.warning("provider trace hook failed; tracing continues", exc_info=True)


def _traced_headers(headers: Mapping[str, str]) -> dict[str, JsonValue]:
    return dict(redact_headers(headers))


def _origin(exc: httpx.HTTPError) -> str:
    try:
        url = exc.request.url
    except RuntimeError:
        return "the server"
    return f"{url.host}:{url.port}" if url.port else url.host


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows the terminal marker, so the connection can be reused.

    Usually only the body's last chunk is left, already buffered. Bounded, and a failure
    here changes nothing: the attempt is complete.
    """
    with anyio.move_on_after(_DRAIN_TIMEOUT):
        try:
            async for _ in chunks:
                pass
        except httpx.HTTPError:
            logger.debug("the stream broke after its terminal marker", exc_info=True)


async def _read_limited(response: httpx.Response) -> bytes:
    """At most 64 KiB of an error body; a cut error body still yields what arrived."""
    parts: list[bytes] = []
    size = 0
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            parts.append(chunk)
            size += len(chunk)
            if size >= _ERROR_BODY_LIMIT:
                break
    except httpx.HTTPError:
        logger.debug("error body of HTTP %s was cut", response.status_code)
    finally:
        await _close_iterator(chunks)
    return b"".join(parts)[:_ERROR_BODY_LIMIT]


async def _close_iterator(iterator: AsyncIterator[bytes]) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except httpx.HTTPError:
            logger.debug("closing a broken response stream failed", exc_info=True)
