"""What a model takes besides text: images and audio (CONTENT-003, AUDIO-001..003, MODEL-INFO-001).

Sources, first match wins: what the provider's API allows at all, what the user declared of
the model (the `model_info` setting: `input = ["text", "image", "audio"]`), what the
provider's model listing said (`architecture.input_modalities`), then the tables of known
models. Images: every provider takes them; a model of the text-only table
(`_vision.py`) does not. Audio: Anthropic's Messages API has no audio input at all; Gemini's
models take audio (`inlineData`); an OpenAI-compatible model takes `input_audio` parts only
when it is one of the audio families below (most chat models answer such a part with a 400);
the scripted model takes both and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from acp_bridge.providers._vision import text_only_model

__all__ = [
    "AUDIO_TYPES",
    "INPUT_KINDS",
    "ModelInfo",
    "audio_format",
    "declared_info",
    "normalized_audio_type",
    "prompt_media",
    "provider_takes_audio",
    "takes_audio",
    "takes_images",
]

INPUT_KINDS = ("text", "image", "audio")
"""What `model_info.<id>.input` may list."""

_WAV, _MP3 = "audio/wav", "audio/mp3"
_ALIASES = {
    "audio/x-wav": _WAV,
    "audio/wave": _WAV,
    "audio/vnd.wave": _WAV,
    "audio/mpeg": _MP3,
    "audio/mpeg3": _MP3,
    "audio/x-mp3": _MP3,
}

AUDIO_TYPES: Mapping[str, tuple[str, ...]] = {
    # Chat Completions `input_audio.format` is "wav" or "mp3".
    "openai": (_WAV, _MP3),
    # Gemini's documented audio media types.
    "gemini": (_WAV, _MP3, "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"),
    "scripted": (_WAV, _MP3, "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"),
}
"""The (normalized) audio media types each provider kind takes."""

_AUDIO_FAMILIES: tuple[str, ...] = (
    "gpt-4o-audio",
    "gpt-4o-mini-audio",
    "gpt-audio",
    "gemini-",  # through an OpenAI-compatible endpoint (OpenRouter, Gemini's own)
    "qwen2-audio",
    "qwen2.5-omni",
    "qwen3-omni",
    "ultravox",
    "voxtral",
    "phi-4-multimodal",
    "gemma-3n",
)
"""OpenAI-compatible model families that take `input_audio` (by prefix of the model id)."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the user declared of one model (`model_info` setting): `inputs` (a subset of
    `INPUT_KINDS`, None: not declared) and `context_window` in tokens (None: not declared)."""

    inputs: frozenset[str] | None = None
    context_window: int | None = None


def declared_info(declared: Mapping[str, ModelInfo], model: str) -> ModelInfo | None:
    """The declaration of `model`: by its exact id, else by its id without `vendor/`."""
    found = declared.get(model)
    if found is None and "/" in model:
        found = declared.get(model.rsplit("/", 1)[-1])
    return found


def normalized_audio_type(mime: str) -> str:
    mime = mime.lower()
    return _ALIASES.get(mime, mime)


def audio_format(mime: str) -> str:
    """The OpenAI `input_audio.format` of a normalized media type (`wav`, `mp3`)."""
    return mime.removeprefix("audio/")


def provider_takes_audio(kind: str) -> bool:
    """Whether the provider kind can take audio at all (`promptCapabilities.audio`)."""
    return kind in AUDIO_TYPES


def _inputs(model: str, *sources: Mapping[str, ModelInfo]) -> frozenset[str] | None:
    for source in sources:
        info = declared_info(source, model)
        if info is not None and info.inputs is not None:
            return info.inputs
    return None


def takes_images(
    kind: str,
    model: str,
    declared: Mapping[str, ModelInfo],
    listed: Mapping[str, ModelInfo] | None = None,
) -> bool:
    """Whether `model` takes images: declared, else listed by the provider, else the table."""
    inputs = _inputs(model, declared, listed or {})
    if inputs is not None:
        return "image" in inputs
    return not text_only_model(model)


def takes_audio(
    kind: str,
    model: str,
    declared: Mapping[str, ModelInfo],
    listed: Mapping[str, ModelInfo] | None = None,
) -> bool:
    """Whether `model` takes audio (see the module docstring)."""
    if not provider_takes_audio(kind):
        return False  # no declaration gives Anthropic's API an audio block
    inputs = _inputs(model, declared, listed or {})
    if inputs is not None:
        return "audio" in inputs
    if kind == "openai":
        return model.rsplit("/", 1)[-1].lower().startswith(_AUDIO_FAMILIES)
    return kind == "scripted" or not text_only_model(model)


def prompt_media(
    kind: str, models: Sequence[str], declared: Mapping[str, ModelInfo]
) -> tuple[bool, bool]:
    """`promptCapabilities` (image, audio): what at least one configured model takes.

    A text-only model alone (a local qwen2.5-coder) advertises neither, so the editor does
    not offer to attach what would be refused (PROMPTCAP-001); a model picked later from the
    provider's list keeps its own refusal by name (CONTENT-003, AUDIO-003).
    """
    image = any(takes_images(kind, model, declared) for model in models)
    audio = any(takes_audio(kind, model, declared) for model in models)
    return image, audio
