"""Content blocks: what a prompt, a message chunk or a tool call's content carries.

`ContentBlock` is a union tagged by `type`. A prompt may always carry `text` and
`resource_link`; `image`, `audio` and embedded `resource` only when the agent advertised
the matching prompt capability (checking that is the agent layer's job).
"""

from __future__ import annotations

import enum
from typing import Annotated, Literal, TypeAlias

from pydantic import Field, TypeAdapter

from acp_bridge.protocol._base import UNION_CONFIG, AcpModel, DefaultOnError, SkipInvalidItems

__all__ = [
    "CONTENT_BLOCK",
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceLink",
    "Role",
    "TextContent",
    "TextResourceContents",
]


class Role(enum.StrEnum):
    ASSISTANT = "assistant"
    USER = "user"


class Annotations(AcpModel):
    """Hints for how a client uses or displays a content block."""

    audience: Annotated[list[Role] | None, SkipInvalidItems, DefaultOnError] = None
    last_modified: Annotated[str | None, DefaultOnError] = None
    priority: Annotated[float | None, DefaultOnError] = None


class TextContent(AcpModel):
    type: Literal["text"] = "text"
    text: str
    annotations: Annotated[Annotations | None, DefaultOnError] = None


class ImageContent(AcpModel):
    """An image; `data` is base64."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str
    uri: Annotated[str | None, DefaultOnError] = None
    annotations: Annotated[Annotations | None, DefaultOnError] = None


class AudioContent(AcpModel):
    """Audio; `data` is base64."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotated[Annotations | None, DefaultOnError] = None


class ResourceLink(AcpModel):
    """A reference to a resource the agent can fetch itself."""

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: Annotated[str | None, DefaultOnError] = None
    description: Annotated[str | None, DefaultOnError] = None
    mime_type: Annotated[str | None, DefaultOnError] = None
    size: Annotated[int | None, DefaultOnError] = None
    annotations: Annotated[Annotations | None, DefaultOnError] = None


class TextResourceContents(AcpModel):
    uri: str
    text: str
    mime_type: Annotated[str | None, DefaultOnError] = None


class BlobResourceContents(AcpModel):
    """Binary resource contents; `blob` is base64."""

    uri: str
    blob: str
    mime_type: Annotated[str | None, DefaultOnError] = None


class EmbeddedResource(AcpModel):
    """A resource's contents, embedded in the message (text or blob)."""

    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents
    annotations: Annotated[Annotations | None, DefaultOnError] = None


ContentBlock: TypeAlias = Annotated[
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
    Field(discriminator="type"),
]

CONTENT_BLOCK: TypeAdapter[ContentBlock] = TypeAdapter(ContentBlock, config=UNION_CONFIG)
