"""The light wire path: the messages of a session's start, read and written without pydantic.

Cold start is what a user feels first (STARTUP-001): an editor spawns the agent, sends
`initialize`, `session/new` and the first prompt, and waits. Importing pydantic and building
the ACP models costs more than everything else on that path, so the ordinary shapes of those
messages are read here by small exact checks and answered from plain dicts:

- a request a `plain_*` reader does not fully accept returns None, and the caller validates it
  with the pydantic models instead, which give the precise -32602; a reader never accepts
  what the models refuse, nor reads a field differently (tests hold the two paths equal);
- every `*_wire` builder returns exactly `to_wire` of the model it stands for, key order
  included, so the bytes on the wire do not depend on the path (tests compare the JSON).

Only what the agent needs to answer is read: the models ignore unknown keys, and so do these
readers (they read camelCase keys only, as `from_wire` does).
"""

from __future__ import annotations

from collections.abc import Sequence

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.tools import EditorCapabilities

__all__ = [
    "PlainPrompt",
    "available_commands_wire",
    "client_features",
    "notify_update",
    "plain_new_session",
    "plain_prompt",
    "prompt_response_wire",
    "session_info_update_wire",
]

PlainPrompt = tuple[str, list[str], list[JsonObject]]
"""A text-only prompt: its session id, the texts, and the blocks as `to_wire` writes them."""


def _meta_ok(params: JsonObject) -> bool:
    # `_meta` is an object or null; anything else is for the models' lenient decoding.
    return isinstance(params.get("_meta"), dict | None)


def _strings(value: JsonValue) -> list[str] | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return value  # type: ignore[return-value]


def plain_new_session(params: JsonValue) -> tuple[str, list[str]] | None:
    """`cwd` and `additionalDirectories` of a `session/new` without MCP servers; None for
    anything else (MCP servers, a malformed field), which the models read."""
    if not isinstance(params, dict) or not _meta_ok(params):
        return None
    cwd = params.get("cwd")
    if not isinstance(cwd, str) or "mcpServers" not in params:
        return None
    if params["mcpServers"] not in ([], None):  # null reads as [] (NullAsEmpty)
        return None
    extra = params.get("additionalDirectories")
    directories = [] if extra is None else _strings(extra)
    if directories is None:
        return None
    return cwd, directories


def plain_prompt(params: JsonValue) -> PlainPrompt | None:
    """A `session/prompt` of text blocks only (no annotations, no `_meta` on a block);
    None for anything else, which the models read (and refuse precisely)."""
    if not isinstance(params, dict) or not _meta_ok(params):
        return None
    session_id, blocks = params.get("sessionId"), params.get("prompt")
    if not isinstance(session_id, str) or not isinstance(blocks, list) or not blocks:
        return None
    texts: list[str] = []
    for block in blocks:
        if not (
            isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
            and block.keys() <= {"type", "text"}
        ):
            return None
        texts.append(block["text"])  # type: ignore[arg-type]
    return session_id, texts, [{"type": "text", "text": text} for text in texts]


def _strict_bool(value: JsonValue) -> bool:
    # `Bool` with DefaultOnError: a JSON boolean, anything else reads as the default False.
    return value is True


def client_features(caps: JsonValue) -> tuple[EditorCapabilities, bool]:
    """What the agent reads of the client's capabilities (as `initialize` returned them):
    the editor methods it may call, and whether it takes `notice` updates."""
    if not isinstance(caps, dict):
        return EditorCapabilities(), False
    fs = caps.get("fs")
    if not isinstance(fs, dict):
        fs = {}
    session = caps.get("session")
    notices = isinstance(session, dict) and isinstance(session.get("notices"), dict)
    return (
        EditorCapabilities(
            read_text_file=_strict_bool(fs.get("readTextFile")),
            write_text_file=_strict_bool(fs.get("writeTextFile")),
            terminal=_strict_bool(caps.get("terminal")),
        ),
        notices,
    )


async def notify_update(peer: JsonRpcPeer, session_id: str, update: JsonObject) -> None:
    """Writes one `session/update` of a wire-built update (`to_wire(SessionNotification)`)."""
    await peer.notify("session/update", {"sessionId": session_id, "update": update})


def available_commands_wire(commands: Sequence[tuple[str, str]]) -> JsonObject:
    """An `available_commands_update` of (name, description) commands."""
    return {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": name, "description": description} for name, description in commands
        ],
    }


def session_info_update_wire(title: str, updated_at: str) -> JsonObject:
    """A `session_info_update` with the title and the time it changed."""
    return {"sessionUpdate": "session_info_update", "title": title, "updatedAt": updated_at}


def prompt_response_wire(stop_reason: str, meta: JsonObject) -> JsonObject:
    """A `PromptResponse` with `_meta` (the turn report) and the stop reason."""
    return {"_meta": meta, "stopReason": stop_reason}
