"""HTTP model providers: OpenAI-compatible Chat Completions, Anthropic Messages, Gemini.

Each adapter renders a `ModelRequest` into its provider's JSON, streams the answer over
one httpx request (transport retries off: the turn engine owns every retry), decodes it
with our own SSE decoder and turns it into normalized `StreamEvent`s, or raises a
classified `ModelStreamError`. What every adapter guarantees:

- content-filter, safety and refusal stops are a `Finish` (CONTENT_FILTER / REFUSAL), never
  an error, and unknown finish reasons are UNKNOWN, never STOP;
- a tool loop's history round-trips: OpenAI tool results pair with `tool_call_id`,
  Anthropic thinking blocks go back with their signatures, Gemini `functionCall` parts with
  their `thoughtSignature` (kept in `ToolCall.provider_meta` / `Thought.signature`);
- a `ThoughtDelta` that carries a `signature` or `redacted_data` ends a thought block.

Layout: `_sse` (sans-IO SSE), `_classify` (statuses and error bodies), `_transport`
(httpx, timeouts), `_h1_*` (the HTTP/1.1 transport under httpx: sans-IO `_h1_parse`,
`_h1_connection`, `_h1_pool`, `_h1_transport`; spec/http1.md), `_failures` (the exception
boundary), `_trace` (tracing), `_provider` (the shared skeleton), `_<provider>` (request
rendering) and `_<provider>_stream` (sans-IO stream decoders).
"""

from acp_bridge.providers.http._anthropic import AnthropicProvider
from acp_bridge.providers.http._anthropic_stream import AnthropicStreamDecoder
from acp_bridge.providers.http._classify import (
    error_from_payload,
    error_from_status,
    parse_duration,
    parse_retry_after,
)
from acp_bridge.providers.http._gemini import GeminiProvider
from acp_bridge.providers.http._gemini_stream import GeminiStreamDecoder
from acp_bridge.providers.http._openai import OpenAIProvider
from acp_bridge.providers.http._openai_stream import OpenAIStreamDecoder
from acp_bridge.providers.http._options import HttpProviderOptions, TraceSink
from acp_bridge.providers.http._provider import HttpModelProvider
from acp_bridge.providers.http._sse import SseDecoder
from acp_bridge.providers.http._sse_items import RawJson, SseComment, SseEvent, SseItem
from acp_bridge.providers.http._trace import redact_headers
from acp_bridge.providers.http._transport import StreamDecoder, WireRequest

__all__ = [
    "AnthropicProvider",
    "AnthropicStreamDecoder",
    "GeminiProvider",
    "GeminiStreamDecoder",
    "HttpModelProvider",
    "HttpProviderOptions",
    "OpenAIProvider",
    "OpenAIStreamDecoder",
    "RawJson",
    "SseComment",
    "SseDecoder",
    "SseEvent",
    "SseItem",
    "StreamDecoder",
    "TraceSink",
    "WireRequest",
    "error_from_payload",
    "error_from_status",
    "parse_duration",
    "parse_retry_after",
    "redact_headers",
]
