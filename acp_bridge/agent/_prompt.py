"""ACP prompt content -> the model's `UserTurn` (text parts, then images).

Baseline content (text, resource_link) is always accepted; embedded text resources are
inlined as text (we advertise `embeddedContext`). Images (`image` blocks and embedded blobs
with an image media type) become `ImagePart`s (CONTENT-001), refused with -32602 when the
model is known to take text only (CONTENT-003) or when they are too big to journal
(CONTENT-004). Audio is refused with -32602: we do not advertise it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from acp_bridge.errors import InvalidParams
from acp_bridge.providers import ImagePart, UserTurn, text_only_model

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["IMAGE_MEDIA_TYPES", "MAX_PROMPT_IMAGE_BYTES", "prompt_title", "user_turn"]

IMAGE_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types every supported provider takes."""

MAX_PROMPT_IMAGE_BYTES = 8 * 1024 * 1024
"""The most base64 image data one prompt may carry (it is journaled with the session)."""


def _image(index: int, mime: str | None, data: str) -> ImagePart:
    mime = (mime or "").lower()
    if mime not in IMAGE_MEDIA_TYPES:
        raise InvalidParams.at(
            f"prompt.{index}",
            f"prompt[{index}] is an image of type {mime or '(none)'!r}; send one of "
            + ", ".join(sorted(IMAGE_MEDIA_TYPES)),
        )
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParams.at(
            f"prompt.{index}", f"prompt[{index}] is an image whose data is not valid base64"
        ) from None
    return ImagePart(mime, data)


def _part(block: acp.ContentBlock, index: int, links: Mapping[int, str]) -> str | ImagePart:
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
        return (
            f'<resource uri="{resource.uri}" mimeType="{mime}">(binary content omitted)</resource>'
        )
    if isinstance(block, acp.ImageContent):
        if not block.data and block.uri:
            return f"[image]({block.uri})"  # a link without data: described, not fetched
        return _image(index, block.mime_type, block.data)
    raise InvalidParams.at(
        f"prompt.{index}.type",
        f"prompt[{index}] is audio content, which this agent does not accept "
        "(promptCapabilities.audio is false)",
    )


def user_turn(
    blocks: Sequence[acp.ContentBlock], model: str = "", links: Mapping[int, str] | None = None
) -> UserTurn:
    """The user's prompt as text parts and images, each in order.

    `links` holds the model's text for `resource_link` blocks by index (the files read);
    a link without one is shown as a Markdown link.
    """
    if not blocks:
        raise InvalidParams.at("prompt", "prompt must hold at least one content block")
    texts: list[str] = []
    images: list[ImagePart] = []
    first_image = -1
    for index, block in enumerate(blocks):
        part = _part(block, index, links or {})
        if isinstance(part, str):
            texts.append(part)
            continue
        first_image = index if first_image < 0 else first_image
        images.append(part)
    if images and model and text_only_model(model):
        raise InvalidParams.at(
            f"prompt.{first_image}",
            f"prompt[{first_image}] is an image, but the model {model!r} takes text only; "
            "switch to a model that accepts images (the session's model selector or the "
            "`model` setting) or send the prompt without images",
        )
    total = sum(len(image.data) for image in images)
    if total > MAX_PROMPT_IMAGE_BYTES:
        raise InvalidParams.at(
            "prompt",
            f"the prompt's images hold {total} bytes of base64 data, more than the "
            f"{MAX_PROMPT_IMAGE_BYTES} one prompt may carry; send smaller or fewer images",
        )
    return UserTurn(tuple(texts), tuple(images))


_FILE_SECTION = re.compile(r'<file path="([^"]*)"[^>]*>.*?</file>', re.DOTALL)
"""A mentioned file as `prompt_turn` inlines it; the title shows `@path` instead."""


def prompt_title(turn: UserTurn, limit: int = 60) -> str:
    """A short session title from the first prompt (for session_info_update)."""
    shown = _FILE_SECTION.sub(lambda m: f"@{m.group(1)}", " ".join(turn.parts))
    text = " ".join(shown.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
