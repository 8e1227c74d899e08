"""The response body's pieces, as `HttpTransport` reads them.

The bridge's own transport's body (`H1Body`, under the response's `BODY_EXTENSION`) bounds
each read itself (first token, then idle: TIMEOUT-001) and is iterated directly, with no async
generator per piece (HTTP1-BODY-001). A proxied response (httpx's transport) or a compressed
one (httpx decodes it) goes through httpx, whose reads wait without bound until the first
token (`SwitchedReadTimeout` switches only the later ones), so the first-token deadline is
applied here, around each read until it switched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx

from acp_bridge.providers.http._failures import close_iterator
from acp_bridge.providers.http._h1_connection import H1Body
from acp_bridge.providers.http._h1_transport import BODY_EXTENSION
from acp_bridge.providers.http._read_timeout import FirstTokenTimeout, SwitchedReadTimeout

__all__ = ["response_pieces"]


def response_pieces(
    response: httpx.Response, switch: SwitchedReadTimeout | None
) -> AsyncIterator[bytes]:
    """The pieces of `response`'s body (see the module docstring); `switch`, the request's
    read timeout, None when there is no first-token timeout."""
    # Raw bytes unless the server compressed anyway (then httpx decodes).
    encoded = response.headers.get("content-encoding", "identity") != "identity"
    own = response.extensions.get(BODY_EXTENSION)
    if isinstance(own, H1Body) and not encoded:
        return own
    chunks = response.aiter_bytes() if encoded else aiter(_byte_stream(response))
    return chunks if switch is None else _until_first_token(chunks, switch)


async def _until_first_token(
    chunks: AsyncIterator[bytes], switch: SwitchedReadTimeout
) -> AsyncIterator[bytes]:
    try:
        while True:
            if switch.switched:
                chunk = await chunks.__anext__()
            else:
                with anyio.CancelScope(deadline=switch.first_token_deadline) as scope:
                    chunk = await chunks.__anext__()
                if scope.cancelled_caught:
                    raise FirstTokenTimeout("no response within the first-token timeout")
            yield chunk
    except StopAsyncIteration:
        return
    finally:
        await close_iterator(chunks)


def _byte_stream(response: httpx.Response) -> httpx.AsyncByteStream:
    stream = response.stream
    if not isinstance(stream, httpx.AsyncByteStream):  # an AsyncClient's response always is
        raise TypeError("the response of an async client has no async byte stream")
    return stream
