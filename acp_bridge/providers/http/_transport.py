"""One streaming POST per model call, on httpx, with every failure classified at one boundary.

`HttpTransport` owns the provider's `httpx.AsyncClient` (created lazily, transport retries
off: the turn engine owns every retry) and drives a provider's `StreamDecoder` with the
items of our own SSE decoder. Contract of `HttpTransport.stream`:

- exactly one upstream request; the response is closed when the iterator ends, fails or
  is closed or cancelled;
- httpx exceptions become `ModelStreamError` here and nowhere else: connect errors are
  CONNECTION_FAILED (phase connect), a cut body is STREAM_INTERRUPTED, no semantic event
  within `first_token_timeout` is FIRST_TOKEN_TIMEOUT, and after the first semantic event
  the read timeout is the IDLE_TIMEOUT (TIMEOUT-001: until the first token the idle timeout
  does not apply, so a model's long prompt processing after the headers is not cut short;
  with `first_token_timeout` off, it does: `_read_timeout`);
- a non-2xx status is classified from its status, headers and error body;
- after the terminal marker the rest of the body is drained briefly (bounded), so the
  connection can go back to the pool;
- the trace hook sees every request (auth headers redacted) and every received SSE item
  (`_trace`); the errors are built in `_failures`, the body's pieces come from `_body`.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import anyio
import httpx

import acp_bridge
from acp_bridge._json import JsonObject
from acp_bridge.providers._errors import ModelStreamError, Phase
from acp_bridge.providers._events import StreamEvent, StreamStart, Usage
from acp_bridge.providers.http._body import response_pieces
from acp_bridge.providers.http._failures import StreamFailures, close_iterator, drain
from acp_bridge.providers.http._h1_transport import H1Transport
from acp_bridge.providers.http._options import HttpProviderOptions
from acp_bridge.providers.http._read_timeout import FirstTokenTimeout, SwitchedReadTimeout
from acp_bridge.providers.http._sse import SseDecoder
from acp_bridge.providers.http._sse_items import SseItem
from acp_bridge.providers.http._trace import ProviderTrace
from acp_bridge.providers.http._urls import install_log_redaction

__all__ = ["HttpTransport", "StreamDecoder", "WireRequest"]
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


class HttpTransport:
    """The HTTP side of one provider instance: its client, timeouts and trace hook."""

    def __init__(self, provider: str, options: HttpProviderOptions) -> None:
        self._provider = provider
        self._options = options
        self._client: httpx.AsyncClient | None = None
        self._trace = ProviderTrace(provider, options.trace)
        self._fail = StreamFailures(provider, options)

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
                # The bridge's own HTTP/1.1 (httpx's behind a proxy): spec/http1.md. The TLS
                # context (httpx's default) is built here, not by the first request.
                transport=H1Transport(ssl_context=httpx.create_ssl_context()),
                timeout=self._timeout(options.idle_timeout),
                follow_redirects=False,
                headers={"user-agent": f"acp-bridge/{acp_bridge.__version__}"},
            )
        return self._client

    def _timeout(self, read: float) -> httpx.Timeout:
        options = self._options
        return httpx.Timeout(
            connect=options.connect_timeout,
            read=read,
            write=options.write_timeout,
            pool=options.connect_timeout,
        )

    async def _stream(
        self, wire: WireRequest, decoder: StreamDecoder, attempt: int
    ) -> AsyncIterator[StreamEvent]:
        client = self._http()
        timeout = self._options.first_token_timeout
        first_deadline = math.inf if timeout is None else anyio.current_time() + timeout
        # TIMEOUT-001: until the first token no idle timeout, after it the idle timeout.
        switch = (
            None
            if timeout is None
            else SwitchedReadTimeout(self._options.idle_timeout, first_deadline)
        )
        request = client.build_request(
            "POST",
            wire.url,
            headers={**_BASE_HEADERS, **wire.headers, **self._options.extra_headers},
            content=wire.content,
            timeout=httpx.USE_CLIENT_DEFAULT if switch is None else self._timeout(switch),
        )
        if self._trace.enabled:
            self._trace.request(request, wire.body, attempt)
        phase = Phase.CONNECT
        response: httpx.Response | None = None
        chunks: AsyncIterator[bytes] | None = None
        try:
            try:
                with anyio.CancelScope(deadline=first_deadline) as scope:
                    response = await client.send(request, stream=True)
                if response is None or scope.cancelled_caught:
                    raise self._fail.first_token_timeout(phase)
                self._trace.response(response, attempt)
                if not response.is_success:
                    raise await self._fail.status_error(response)
                phase = Phase.STREAM
                chunks = response_pieces(response, switch)
                sse = SseDecoder()
                tracing = self._trace.enabled  # frozen options: checked once
                # Pieces of plain events skip the SSE items (the trace needs them); a piece
                # cut inside an event leaves its start held in the decoder.
                plain = None if tracing else sse.plain_events
                budget = self._options.max_output_bytes  # ROBUST-OUT-001: bytes left
                idle = self._options.idle_timeout
                semantic = False
                quiet_since = math.inf
                while True:
                    # The per-piece hot path: no scope and no `anext(chunks, None)` wrapper
                    # here; the transport bounds each read (first token, then idle).
                    try:
                        chunk: bytes | None = await chunks.__anext__()
                    except StopAsyncIteration:
                        chunk = None
                    datas: list[str] | None = None
                    items: list[SseItem] | None = None
                    if chunk is not None:
                        budget -= len(chunk)
                        if budget < 0:
                            raise self._fail.output_cap()
                        if plain is not None:
                            datas = plain(chunk)
                        if datas is None:
                            items = sse.feed(chunk)
                    else:
                        items = sse.end()
                    produced = False
                    if datas is not None:
                        for data in datas:
                            for event in decoder.feed_data(data):
                                if not semantic:
                                    semantic = not isinstance(event, _NOT_SEMANTIC)
                                produced = True
                                yield event
                            if decoder.done:
                                return
                    else:
                        assert items is not None
                        for item in items:
                            if tracing:
                                self._trace.item(item, attempt)
                            for event in decoder.feed(item):
                                if not semantic:
                                    semantic = not isinstance(event, _NOT_SEMANTIC)
                                produced = True
                                yield event
                            if decoder.done:
                                return
                    if produced:
                        quiet_since = math.inf
                        if switch is not None and semantic:
                            switch.first_token()  # the next reads wait `idle_timeout` at most
                            switch = None
                    elif semantic and (items is None or items) and chunk is not None:
                        # Bytes without events (keep-alive comments, pings) reset the read
                        # timeout but are not progress: the idle timeout counts from the
                        # first of them (PROV-TIMEOUT-002). Off the per-event hot path.
                        now = anyio.current_time()
                        quiet_since = min(quiet_since, now)
                        if now - quiet_since >= idle:
                            raise self._fail.idle_timeout(phase, keep_alive=True)
                    if chunk is None:
                        for event in decoder.end():
                            yield event
                        return
            except httpx.HTTPError as exc:
                if isinstance(exc, httpx.RequestError) and not _has_request(exc):
                    exc.request = request  # what `aiter_raw` would have attached
                if isinstance(exc, FirstTokenTimeout):
                    raise self._fail.first_token_timeout(phase) from exc
                raise self._fail.transport_error(exc, phase) from exc
        except ModelStreamError as exc:
            self._trace.error(exc, attempt)
            raise
        finally:
            with anyio.CancelScope(shield=True):
                if chunks is not None:
                    if decoder.done:
                        await drain(chunks)
                    await close_iterator(chunks)
                if response is not None:
                    await response.aclose()


def _has_request(exc: httpx.RequestError) -> bool:
    try:
        exc.request  # noqa: B018 (the property raises when no request is attached)
    except RuntimeError:
        return False
    return True
