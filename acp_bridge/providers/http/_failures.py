"""Every failure of one streaming POST as a classified `ModelStreamError` (model-streams.md
§5): httpx exceptions, a non-2xx status with its error body, the idle and first-token
timeouts and the output cap. `HttpTransport` raises what these build, and nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import anyio
import httpx

from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase
from acp_bridge.providers.http._classify import error_from_status, scrub
from acp_bridge.providers.http._hints import connect_failure, status_hint
from acp_bridge.providers.http._options import HttpProviderOptions

__all__ = ["StreamFailures", "close_iterator", "drain"]

logger = logging.getLogger(__name__)

_ERROR_BODY_LIMIT = 64 * 1024
_DRAIN_TIMEOUT = 0.25


class StreamFailures:
    """Builds the errors of one provider's streams, its name and settings in each message."""

    def __init__(self, provider: str, options: HttpProviderOptions) -> None:
        self._provider = provider
        self._options = options

    async def status_error(self, response: httpx.Response) -> ModelStreamError:
        """The classified error of a non-2xx response, from its status, headers and body."""
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
        return error

    def idle_timeout(
        self, phase: Phase, *, where: str = "the server", keep_alive: bool = False
    ) -> ModelStreamError:
        what = "only keep-alives" if keep_alive else "no data"
        return ModelStreamError(
            FaultKind.IDLE_TIMEOUT,
            f"{self._provider}: {what} from {where} for {self._options.idle_timeout:g} s",
            phase=phase,
        )

    def first_token_timeout(self, phase: Phase) -> ModelStreamError:
        return ModelStreamError(
            FaultKind.FIRST_TOKEN_TIMEOUT,
            f"{self._provider}: no output within {self._options.first_token_timeout:g} s",
            phase=phase,
        )

    def transport_error(self, exc: httpx.HTTPError, phase: Phase) -> ModelStreamError:
        """The one place where httpx exceptions are classified (model-streams.md §5)."""
        where = _origin(exc)
        text = str(exc)
        detail = scrub(
            f"{type(exc).__name__}: {text}" if text else type(exc).__name__, self._options.api_key
        )
        if isinstance(exc, httpx.ReadTimeout):
            return self.idle_timeout(phase, where=where)
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

    def output_cap(self) -> ModelStreamError:
        limit = self._options.max_output_bytes
        return ModelStreamError(  # final: the same request would stream as much again
            FaultKind.PROVIDER_ERROR,
            f"{self._provider}: the model call streamed more than max_output_bytes ({limit} "
            "bytes) and was stopped; raise max_output_bytes (ACP_BRIDGE_MAX_OUTPUT_BYTES or "
            "the config key max_output_bytes) if the model really writes that much",
            phase=Phase.STREAM,
            retryable=False,
        )


def _origin(exc: httpx.HTTPError) -> str:
    try:
        url = exc.request.url
    except RuntimeError:
        return "the server"
    return f"{url.host}:{url.port}" if url.port else url.host


async def drain(chunks: AsyncIterator[bytes]) -> None:
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
        await close_iterator(chunks)
    return b"".join(parts)[:_ERROR_BODY_LIMIT]


async def close_iterator(iterator: AsyncIterator[bytes]) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except httpx.HTTPError:
            logger.debug("closing a broken response stream failed", exc_info=True)
