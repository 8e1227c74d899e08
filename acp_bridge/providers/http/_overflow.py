"""Recognising "the prompt does not fit the model's context window" in each provider's words.

Sans-IO. Every provider answers an over-long prompt with a client error of its own shape
(spec/daily-use.md#compact-001):

- OpenAI-compatible servers: HTTP 400, ``error.code = "context_length_exceeded"``, message
  "This model's maximum context length is M tokens. However, your messages resulted in N
  tokens..." (vLLM and DeepSeek keep the message with another code; OpenRouter says
  "This endpoint's maximum context length is ...");
- llama.cpp's server: ``error.type = "exceed_context_size_error"`` with ``n_prompt_tokens`` and
  ``n_ctx``, message "the request exceeds the available context size..." (HTTP 400; older
  builds answered 500 "Context size has been exceeded.");
- Anthropic: HTTP 400 ``invalid_request_error`` "prompt is too long: N tokens > M maximum";
- Gemini: HTTP 400 ``INVALID_ARGUMENT`` "The input token count (N) exceeds the maximum number
  of tokens allowed (M)."

Such an error is final for the request as it is (sending it again fails the same way): the
turn engine compacts the history and sends the request again (COMPACT-002).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["context_overflow"]

_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})

# (pattern, group of the prompt's tokens, group of the window); 0: not named.
_MESSAGES: tuple[tuple[re.Pattern[str], int, int], ...] = (
    (
        re.compile(
            r"maximum context length is (\d+) tokens.*?(?:resulted in|requested(?: about)?) "
            r"(\d+) tokens",
            re.I | re.S,
        ),
        2,
        1,
    ),
    (re.compile(r"maximum context length is (\d+) tokens", re.I), 0, 1),
    (re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum", re.I), 1, 2),
    (re.compile(r"prompt is too long", re.I), 0, 0),
    (
        re.compile(
            r"input token count \(?(\d+)\)? exceeds the maximum number of tokens allowed "
            r"\(?(\d+)\)?",
            re.I,
        ),
        1,
        2,
    ),
    (
        re.compile(r"request \((\d+) tokens\) exceeds the available context size \((\d+)", re.I),
        1,
        2,
    ),
    (re.compile(r"exceeds the available context size", re.I), 0, 0),
    (re.compile(r"context size has been exceeded", re.I), 0, 0),
    (re.compile(r"exceeds the context window", re.I), 0, 0),
    (re.compile(r"prompt contains (\d+) tokens.*?too large for model with (\d+)", re.I), 1, 2),
)


def context_overflow(
    error: Mapping[str, Any], type_code: str | None
) -> tuple[int | None, int | None] | None:
    """(prompt tokens, window) when `error` (a provider's error object) says the prompt
    does not fit the context window, either figure None when not named; else None."""
    message = error.get("message")
    text = message if isinstance(message, str) else ""
    names = {str(error.get(key, "")).lower() for key in ("type", "code", "status")}
    names.add((type_code or "").lower())
    found: tuple[int | None, int | None] | None = None
    for pattern, tokens_group, window_group in _MESSAGES:
        match = pattern.search(text)
        if match is not None:
            found = _number(match, tokens_group), _number(match, window_group)
            break
    if found is None and not names & _CODES:
        return None
    tokens, window = found or (None, None)
    # llama.cpp names both figures beside its message.
    return (
        tokens if tokens is not None else _int(error.get("n_prompt_tokens")),
        window if window is not None else _int(error.get("n_ctx")),
    )


def _number(found: re.Match[str], group: int) -> int | None:
    return int(found.group(group)) if group else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
