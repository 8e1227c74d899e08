"""OpenAI Chat Completions fields beside the text: reasoning, usage, finish reasons.

Reasoning comes as `reasoning_content` (vLLM <= 0.8, llama.cpp), `reasoning` (Ollama, vLLM,
OpenRouter) or OpenRouter's `reasoning_details` (model-streams.md §1); OpenRouter adds the
cost to `usage`.
"""

from __future__ import annotations

import math
from typing import Any

from acp_bridge.providers._events import FinishReason, ThoughtDelta, Usage
from acp_bridge.providers.http._payload import as_int, as_list, as_object, as_str

__all__ = ["ERROR_FINISH_REASONS", "FINISH_REASONS", "reasoning", "usage"]

FINISH_REASONS = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "content_filter": FinishReason.CONTENT_FILTER,
}
ERROR_FINISH_REASONS = frozenset({"error", "network_error"})
"""OpenRouter's in-band server errors (TURN-009): retried."""


def reasoning(delta: dict[str, Any]) -> ThoughtDelta | None:
    """`reasoning_content`, `reasoning`, else the text of OpenRouter's `reasoning_details`,
    whose signature/encrypted data is kept; None when the delta has none."""
    text = as_str(delta.get("reasoning_content")) or as_str(delta.get("reasoning"))
    detail_texts: list[str] = []
    signature: str | None = None
    redacted: str | None = None
    for detail in as_list(delta.get("reasoning_details")):
        detail = as_object(detail)
        if detail.get("type") == "reasoning.encrypted":
            redacted = as_str(detail.get("data")) or redacted
        else:
            detail_texts.append(as_str(detail.get("text")) or as_str(detail.get("summary")))
        signature = as_str(detail.get("signature")) or signature
    text = text or "".join(detail_texts)
    if text or signature or redacted:
        return ThoughtDelta(text, signature=signature, redacted_data=redacted)
    return None


def usage(fields: dict[str, Any]) -> Usage:
    """The `usage` object of a chunk (the one `stream_options.include_usage` adds)."""
    prompt_details = as_object(fields.get("prompt_tokens_details"))
    completion_details = as_object(fields.get("completion_tokens_details"))
    return Usage(
        input_tokens=as_int(fields.get("prompt_tokens")),
        output_tokens=as_int(fields.get("completion_tokens")),
        cached_input_tokens=as_int(prompt_details.get("cached_tokens")),
        reasoning_tokens=as_int(completion_details.get("reasoning_tokens")),
        cost=_cost(fields.get("cost")),
    )


def _cost(value: Any) -> float | None:
    """OpenRouter's `usage.cost` (credits, in USD), when the server reports one."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value) if math.isfinite(value) else None
    return None
