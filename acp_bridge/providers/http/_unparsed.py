"""Recognising "the server could not parse the model's output" (llama.cpp's chat parser).

Sans-IO. llama.cpp's server parses what the model generated into content and tool calls
with a parser derived from the chat template (common/chat.cpp, `common_chat_peg_parse`).
When the output does not fit it (a small model that wraps its call in a ```json fence,
writes Python's triple quotes inside the JSON, or adds text after the call), the parse
throws and the server answers HTTP 500 (or, once streaming, an error event)
``{"error": {"code": 500, "message": "The model produced output that does not match the
expected peg-native format", "type": "server_error"}}``; the format named varies with the
template ("peg-native", "Content-only", ...); older builds said "Failed to parse input at
pos N", and a call whose arguments are not JSON "Failed to parse tool call arguments as
JSON". The server's log has ``common_chat_peg_parse: unparsed peg-native output: ...``.

The model's output is a function of the request (these servers sample greedily unless told
otherwise), so sending the same request again gets the same output and the same error: it
is final, never retried as is (spec/real-model.md#unparsed-001).
"""

from __future__ import annotations

import re

__all__ = ["unparsed_output"]

_MESSAGES = (
    re.compile(r"model produced output that does not match the expected .{0,40}format", re.I),
    re.compile(r"failed to parse input at pos(ition)? \d+", re.I),
    re.compile(r"failed to parse tool call arguments as json", re.I),
)


def unparsed_output(message: str) -> bool:
    """Whether a server's error message says it could not parse the model's output."""
    return any(pattern.search(message) for pattern in _MESSAGES)
