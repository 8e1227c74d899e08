"""Models known to take text only, so an image prompt is refused before the call (CONTENT-003).

Matched by prefix of the model id (lower case, OpenRouter's `vendor/` prefix ignored). The
table lists families whose published models accept no image input; a model not listed is
assumed to take images (the server's own error is then passed on as usual).
"""

from __future__ import annotations

__all__ = ["text_only_model"]

_TEXT_ONLY: tuple[str, ...] = (
    "gpt-3.5",
    "gpt-4-0",  # gpt-4-0613 and its dated siblings (gpt-4-turbo takes images)
    "o1-mini",
    "o3-mini",
    "deepseek-",
    "codestral",
    "qwen2.5-coder",
    "qwen3-coder",
    "qwq",
    "llama-3.1",
    "llama-3.3",
    "llama3.1",
    "llama3.3",
    "mistral-7b",
    "mixtral",
    "phi-3-mini",
)


def text_only_model(model: str) -> bool:
    """Whether `model` is known to accept no image input."""
    name = model.rsplit("/", 1)[-1].lower()
    return name == "gpt-4" or name.startswith(_TEXT_ONLY)
