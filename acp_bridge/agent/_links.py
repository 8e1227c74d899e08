"""The prompt's `resource_link`s to workspace files, read for the model (CONTENT-006, 007).

What editors send for @-mentions is a `resource_link` with a `file://` URI. A link to a file
inside the session's roots is read (through the editor's `fs/read_text_file` when it offered
it, else locally; bounded to 64 KiB with a truncation marker) and given to the model inside
`<file path="..." uri="..." bytes="N">`. Any other link (outside the roots, another scheme, a
file that cannot be read) is described by its name and URI, with why it was not read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from acp_bridge.agent._prompt import PromptInputs, user_turn
from acp_bridge.errors import ToolError
from acp_bridge.providers import UserTurn
from acp_bridge.tools import ToolContext, read_mentioned_file

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["link_path", "prompt_turn"]


def link_path(uri: str) -> str | None:
    """The local path of a `file://` URI (empty or `localhost` host), else None."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost") or not parsed.path:
        return None
    return unquote(parsed.path)


def _described(link: acp.ResourceLink, why: str) -> str:
    label = link.title or link.name
    line = f"[{label}]({link.uri})"
    if link.description:
        line = f"{line} {link.description}"
    return f"{line} ({why})"


async def _link_text(link: acp.ResourceLink, ctx: ToolContext) -> str:
    path = link_path(link.uri)
    if path is None:
        return _described(link, "not a local file; not read")
    try:
        file = await read_mentioned_file(ctx, path)
    except ToolError as error:
        return _described(link, f"not read: {error}")
    cut = ' truncated="true"' if file.truncated else ""
    end = "" if file.text.endswith("\n") else "\n"
    return (
        f'<file path="{file.display}" uri="{link.uri}" bytes="{file.size}"{cut}>\n'
        f"{file.text}{end}</file>"
    )


async def prompt_turn(
    blocks: Sequence[acp.ContentBlock],
    model: str,
    ctx: ToolContext,
    inputs: PromptInputs | None = None,
) -> UserTurn:
    """The user's turn with every `resource_link` read or described; `inputs` says what the
    model takes besides text."""
    links = {
        index: await _link_text(block, ctx)
        for index, block in enumerate(blocks)
        if isinstance(block, acp.ResourceLink)
    }
    return user_turn(blocks, model, links, inputs)
