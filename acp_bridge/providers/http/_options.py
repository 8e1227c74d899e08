"""Options every HTTP provider takes, and the trace hook for `--trace`.

`HttpProviderOptions` is plain data: the registry fills it from flags, environment and the
config file. The API key is kept out of `repr` so that logging an options object never
leaks it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from acp_bridge._json import JsonValue

__all__ = ["HttpProviderOptions", "TraceSink"]

TraceSink: TypeAlias = Callable[[dict[str, JsonValue]], None]
"""Receives one JSON record per provider request, response, received SSE item and error."""


@dataclass(frozen=True, slots=True)
class HttpProviderOptions:
    """How to reach one model endpoint.

    Attributes:
        model: the default model id (a `ModelRequest.model` that is not empty wins).
        base_url: the API root; None uses the provider's public default.
        api_key: sent in the provider's auth header; None for local servers. Never logged.
        idle_timeout: seconds without a byte from the server, after the first semantic
            event, before the stream counts as broken; with `first_token_timeout` None it
            bounds every read, the wait for the response headers too (TIMEOUT-001).
        first_token_timeout: seconds from the request until the first semantic event
            (text, thought, tool call, finish), the headers' wait included; until then the
            idle timeout does not apply. None disables it. Pings and comments do not count.
        connect_timeout: seconds to open the TCP/TLS connection.
        write_timeout: seconds to send the request body.
        extra_headers: added to every request (after the provider's own headers).
        max_tokens: output token limit sent to the model (None: the provider's default).
        max_output_bytes: most bytes of one model call's stream; past it the call is stopped
            with a final error naming the setting (ROBUST-OUT-001).
        thinking_budget: reasoning token budget for Anthropic and Gemini (None: off).
        include_usage: ask OpenAI-compatible servers for the final usage chunk.
        trace: called with a JSON record for every request and received event.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    idle_timeout: float = 120.0
    first_token_timeout: float | None = 300.0
    connect_timeout: float = 10.0
    write_timeout: float = 30.0
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    max_tokens: int | None = None
    max_output_bytes: int = 64 * 1024 * 1024
    thinking_budget: int | None = None
    include_usage: bool = True
    trace: TraceSink | None = field(default=None, repr=False, compare=False)
