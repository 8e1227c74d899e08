"""Context windows of known models (tokens), for `usage_update.size`.

Used when the provider's own model metadata gives none and no `context_window` setting was
configured. Matched by the longest known prefix of the model id (dated and suffixed
variants share their family's window). Figures are the providers' published input windows.
"""

from __future__ import annotations

__all__ = ["DEFAULT_CONTEXT_WINDOW", "known_context_window"]

DEFAULT_CONTEXT_WINDOW = 128_000
"""Assumed when nothing better is known (a conservative size of current models)."""

_KNOWN: dict[str, int] = {
    # OpenAI
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    # Anthropic
    "claude-": 200_000,
    # Gemini
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-": 1_048_576,
}
_PREFIXES = sorted(_KNOWN, key=len, reverse=True)


def known_context_window(model: str) -> int | None:
    """The published window of `model` (an id such as ``gpt-4o-2024-08-06``), if known."""
    name = model.rsplit("/", 1)[-1].lower()  # OpenRouter ids: ``openai/gpt-4o``
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return _KNOWN[prefix]
    return None
