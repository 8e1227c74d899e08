"""ACP prompt content -> the model's `UserTurn` (text parts, then images, then audio).

Baseline content (text, resource_link) is always accepted; embedded text resources are
inlined as text (we advertise `embeddedContext`). Images (`image` blocks and embedded blobs
with an image media type) become `ImagePart`s (CONTENT-001), refused with -32602 when the
model is known to take text only (CONTENT-003) or when they are too big to journal
(CONTENT-004). Audio blocks (and embedded `audio/*` blobs) become `AudioPart`s (AUDIO-001),
refused with -32602 naming the model and the fix when it takes no audio (AUDIO-003).
What a model takes: `acp_bridge.providers.takes_images` / `takes_audio`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from acp_bridge.errors import InvalidParams
from acp_bridge.providers import (
    AUDIO_TYPES,
    AudioPart,
    ImagePart,
    ModelInfo,
    UserTurn,
    normalized_audio_type,
    takes_audio,
    takes_images,
)

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = [
    "IMAGE_MEDIA_TYPES",
    "MAX_PROMPT_IMAGE_BYTES",
    "PromptInputs",
    "prompt_title",
    "user_turn",
]

IMAGE_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types every supported provider takes."""

MAX_PROMPT_IMAGE_BYTES = 8 * 1024 * 1024
"""The most base64 image and audio data one prompt may carry (it is journaled)."""


@dataclass(frozen=True, slots=True)
class PromptInputs:
    """Who takes the prompt: the provider kind, what the user declared of its models (the
    `model_info` setting) and what the provider's listing said of them."""

    kind: str = "scripted"
    declared: Mapping[str, ModelInfo] = field(default_factory=dict)
    listed: Mapping[str, ModelInfo] = field(default_factory=dict)
    """What the provider's model listing said (below the declarations)."""


def _image(index: int, mime: str | None, data: str) -> ImagePart:
    mime = (mime or "").lower()
    if mime not in IMAGE_MEDIA_TYPES:
        raise InvalidParams.at(
            f"prompt.{index}",
            f"prompt[{index}] is an image of type {mime or '(none)'!r}; send one of "
            + ", ".join(sorted(IMAGE_MEDIA_TYPES)),
        )
    _base64(index, data, "an image")
    return ImagePart(mime, data)


def _base64(index: int, data: str, what: str) -> None:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParams.at(
            f"prompt.{index}", f"prompt[{index}] is {what} whose data is not valid base64"
        ) from None


def _audio(index: int, mime: str | None, data: str, kind: str) -> AudioPart:
    """An audio clip, its media type normalized (`audio/x-wav` -> `audio/wav`)."""
    normal = normalized_audio_type(mime or "")
    accepted = AUDIO_TYPES.get(kind)
    if accepted and normal not in accepted:
        raise InvalidParams.at(
            f"prompt.{index}",
            f"prompt[{index}] is audio of type {mime or '(none)'!r}; send one of "
            + ", ".join(accepted),
        )
    _base64(index, data, "audio")
    return AudioPart(normal, data)


def _part(
    block: acp.ContentBlock, index: int, links: Mapping[int, str], kind: str
) -> str | ImagePart | AudioPart:
    if isinstance(block, acp.TextContent):
        return block.text
    if isinstance(block, acp.ResourceLink):
        if index in links:
            return links[index]  # read or described by `prompt_turn` (CONTENT-006)
        label = block.title or block.name
        line = f"[{label}]({block.uri})"
        return f"{line} {block.description}" if block.description else line
    if isinstance(block, acp.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, acp.TextResourceContents):
            return f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>'
        mime = resource.mime_type or "application/octet-stream"
        if mime.lower().startswith("image/"):
            return _image(index, mime, resource.blob)
        if mime.lower().startswith("audio/"):
            return _audio(index, mime, resource.blob, kind)
        return (
            f'<resource uri="{resource.uri}" mimeType="{mime}">(binary content omitted)</resource>'
        )
    if isinstance(block, acp.ImageContent):
        if not block.data and block.uri:
            return f"[image]({block.uri})"  # a link without data: described, not fetched
        return _image(index, block.mime_type, block.data)
    assert isinstance(block, acp.AudioContent)
    return _audio(index, block.mime_type, block.data, kind)


def _no_audio(index: int, model: str, kind: str) -> InvalidParams:
    """AUDIO-003: what to do when the model takes no audio."""
    if kind == "anthropic":
        why = f"the model {model!r} (Anthropic) takes no audio input"
        fix = (
            "use --provider gemini, or --provider openai with an audio model such as "
            "gpt-4o-audio-preview,"
        )
    else:
        why = f"the model {model!r} is not known to take audio input"
        fix = (
            "switch to a model that does (such as gpt-4o-audio-preview; the session's model "
            "selector or the `model` setting), declare it in the config file "
            f'([model_info."{model}"] input = ["text", "audio"]),'
        )
    return InvalidParams.at(
        f"prompt.{index}",
        f"prompt[{index}] is audio, but {why}; {fix} or send the prompt without audio",
    )


def user_turn(
    blocks: Sequence[acp.ContentBlock],
    model: str = "",
    links: Mapping[int, str] | None = None,
    inputs: PromptInputs | None = None,
) -> UserTurn:
    """The user's prompt as text parts, images and audio clips, each in order.

    `links` holds the model's text for `resource_link` blocks by index (the files read);
    a link without one is shown as a Markdown link. `inputs` says what the model takes.
    """
    if not blocks:
        raise InvalidParams.at("prompt", "prompt must hold at least one content block")
    inputs = inputs or PromptInputs()
    texts: list[str] = []
    images: list[ImagePart] = []
    audio: list[AudioPart] = []
    first_image = first_audio = -1
    for index, block in enumerate(blocks):
        part = _part(block, index, links or {}, inputs.kind)
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, ImagePart):
            first_image = index if first_image < 0 else first_image
            images.append(part)
        else:
            first_audio = index if first_audio < 0 else first_audio
            audio.append(part)
    if images and model and not takes_images(inputs.kind, model, inputs.declared, inputs.listed):
        raise InvalidParams.at(
            f"prompt.{first_image}",
            f"prompt[{first_image}] is an image, but the model {model!r} takes text only; "
            "switch to a model that accepts images (the session's model selector or the "
            "`model` setting) or send the prompt without images",
        )
    if audio and not takes_audio(inputs.kind, model, inputs.declared, inputs.listed):
        raise _no_audio(first_audio, model, inputs.kind)
    total = sum(len(i.data) for i in images) + sum(len(a.data) for a in audio)
    if total > MAX_PROMPT_IMAGE_BYTES:
        what = " and ".join(w for w, n in (("images", images), ("audio clips", audio)) if n)
        raise InvalidParams.at(
            "prompt",
            f"the prompt's {what} hold {total} bytes of base64 data, more than the "
            f"{MAX_PROMPT_IMAGE_BYTES} one prompt may carry; send smaller or fewer {what}",
        )
    return UserTurn(tuple(texts), tuple(images), tuple(audio))


_FILE_SECTION = re.compile(r'<file path="([^"]*)"[^>]*>.*?</file>', re.DOTALL)
"""A mentioned file as `prompt_turn` inlines it; the title shows `@path` instead."""


def prompt_title(turn: UserTurn, limit: int = 60) -> str:
    """A short session title from the first prompt (for session_info_update)."""
    shown = _FILE_SECTION.sub(lambda m: f"@{m.group(1)}", " ".join(turn.parts))
    text = " ".join(shown.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
