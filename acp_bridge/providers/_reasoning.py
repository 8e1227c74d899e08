"""Reasoning effort: the levels a session offers and what each provider is sent for them.

A session's level travels in `ModelRequest.reasoning`; `None` (the `default` level) sends
nothing and leaves the configured `thinking_budget` (or the model's own default) in force
(spec/daily-use.md#reason-001).
"""

from __future__ import annotations

__all__ = ["DEFAULT_LEVEL", "REASONING_LEVELS", "thinking_budget"]

DEFAULT_LEVEL = "default"
REASONING_LEVELS: tuple[str, ...] = (DEFAULT_LEVEL, "low", "medium", "high")
"""What the `reasoning_effort` option offers; OpenAI takes `low|medium|high` as they are."""

_BUDGETS = {"low": 2048, "medium": 8192, "high": 24576}
"""Thinking-token budgets for Anthropic and Gemini (Anthropic's minimum is 1024)."""


def thinking_budget(level: str | None, configured: int | None) -> int | None:
    """The Anthropic/Gemini thinking budget for `level`; `configured` for the default."""
    if level is None or level == DEFAULT_LEVEL:
        return configured
    return _BUDGETS[level]
