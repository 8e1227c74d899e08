"""Offered tool names: ``mcp__<server>__<tool>`` in the providers' charset and length (sans-IO).

OpenAI, Anthropic and Gemini all accept ``[A-Za-z0-9_-]`` up to 64 characters, starting with a
letter (MCP-NAME-001). A name is kept as is when it already fits; otherwise every other
character becomes ``_``, the name is cut to leave room, and 8 hex digits of SHA-256 over the
exact (server, tool) pair are appended. The name depends on the pair only, never on the other
tools, so it is stable across reconnects and crashes (the effect key uses it: MCP-EFFECT-001),
and two different pairs get different names (MCP-NAME-002).
"""

from __future__ import annotations

import hashlib
import json
import re

__all__ = ["MAX_TOOL_NAME", "offered_name"]

MAX_TOOL_NAME = 64
_OTHER = re.compile(r"[^A-Za-z0-9_-]")
_PLAIN = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")  # no "__" inside, no edge "_"


def offered_name(server: str, tool: str) -> str:
    """The name the model sees for `tool` of the MCP server called `server`."""
    name = f"mcp__{server}__{tool}"
    # A server name with "_" at an edge or "__" inside could make two pairs read alike.
    if _PLAIN.fullmatch(server) and tool and not _OTHER.search(tool) and len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha256(json.dumps([server, tool]).encode()).hexdigest()[:8]
    clean = _OTHER.sub("_", name)
    return f"{clean[: MAX_TOOL_NAME - 9]}_{digest}"
