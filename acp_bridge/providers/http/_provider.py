"""What the three HTTP adapters share: options, the transport, and the `stream` skeleton.

An adapter supplies two pieces: `render` (a `ModelRequest` in its own wire format, tools
and tool-loop history included) and `decoder` (a fresh sans-IO `StreamDecoder` per
attempt). Everything else, from the HTTP client to error classification, is shared.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import ClassVar, Self

from acp_bridge.providers._conversation import Message, ModelRequest
from acp_bridge.providers._events import StreamEvent
from acp_bridge.providers.http._fragments import FragmentCache
from acp_bridge.providers.http._options import HttpProviderOptions
from acp_bridge.providers.http._transport import HttpTransport, StreamDecoder, WireRequest
from acp_bridge.providers.http._urls import endpoint

__all__ = ["HttpModelProvider"]


class HttpModelProvider(abc.ABC):
    """A `ModelProvider` over HTTP + SSE. Use as an async context manager, or `aclose()`."""

    PROVIDER: ClassVar[str]
    DEFAULT_BASE_URL: ClassVar[str]

    def __init__(self, options: HttpProviderOptions) -> None:
        self._options = options
        self._transport = HttpTransport(self.PROVIDER, options)
        self._transport.prepare()
        # Each history message encoded once, reused by every later request (issue 15.2).
        self.fragments: FragmentCache[Message] = FragmentCache(self.encode_message)

    @property
    def name(self) -> str:
        return self.PROVIDER

    @property
    def model(self) -> str:
        return self._options.model

    @property
    def options(self) -> HttpProviderOptions:
        return self._options

    @property
    def base_url(self) -> str:
        return (self._options.base_url or self.DEFAULT_BASE_URL).rstrip("/")

    def endpoint(self, path: str, params: Mapping[str, str] | None = None) -> str:
        """The URL of `path` under the base URL, whose query is kept (ROBUST-URL-001)."""
        return endpoint(self.base_url, path, params)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """One attempt: exactly one upstream request (see `HttpTransport`)."""
        model = request.model or self._options.model
        return self._transport.stream(
            self.render(request, model), self.decoder(model), attempt=request.attempt
        )

    @abc.abstractmethod
    def render(self, request: ModelRequest, model: str) -> WireRequest:
        """The provider's HTTP request for `request` (URL, auth headers, encoded body)."""

    @abc.abstractmethod
    def encode_message(self, message: Message) -> bytes:
        """One history message in the provider's wire form, encoded (what `fragments`
        keeps); empty when the message sends nothing."""

    @abc.abstractmethod
    def decoder(self, model: str) -> StreamDecoder:
        """A fresh decoder for one attempt's stream."""

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
