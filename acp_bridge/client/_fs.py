"""The editor's `fs/*` methods on the real disk, confined to the session's directories.

ACP paths are absolute. A path outside the session's `cwd` (and its additional directories)
is refused with -32602: the reference client never lets an agent read or write elsewhere.
A missing file is -32002 (resource not found), as ACP specifies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from acp_bridge._json import JsonObject
from acp_bridge.errors import InvalidParams, ResourceNotFound

__all__ = ["confine", "read_text_file", "write_text_file"]


def confine(raw: object, roots: Sequence[Path], field: str = "path") -> Path:
    """`raw` as a resolved absolute path inside one of `roots`, or -32602."""
    if not isinstance(raw, str) or not Path(raw).is_absolute():
        raise InvalidParams(f"{field} must be an absolute path", {"field": field})
    path = Path(raw).resolve()
    if not any(path == root or path.is_relative_to(root) for root in roots):
        raise InvalidParams(f"{field} is outside the session's workspace: {raw}", {"field": field})
    return path


async def read_text_file(params: Mapping[str, Any], roots: Sequence[Path]) -> JsonObject:
    """`fs/read_text_file {path, line?, limit?}` -> `{content}` (line is 1-based)."""
    path = anyio.Path(confine(params.get("path"), roots))
    if not await path.is_file():
        raise ResourceNotFound(f"Resource not found: {path}", {"path": str(path)})
    text = await path.read_text(encoding="utf-8", errors="replace")
    line, limit = params.get("line"), params.get("limit")
    if line is None and limit is None:
        return {"content": text}
    lines = text.splitlines(keepends=True)
    start = max(int(line or 1), 1) - 1
    end = None if limit is None else start + max(int(limit), 0)
    return {"content": "".join(lines[start:end])}


async def write_text_file(params: Mapping[str, Any], roots: Sequence[Path]) -> JsonObject:
    """`fs/write_text_file {path, content}` -> `{}`; creates the file and its folders."""
    path = anyio.Path(confine(params.get("path"), roots))
    content = params.get("content")
    if not isinstance(content, str):
        raise InvalidParams("content must be a string", {"field": "content"})
    await path.parent.mkdir(parents=True, exist_ok=True)
    await path.write_text(content, encoding="utf-8")
    return {}
