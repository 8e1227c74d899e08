"""How a tool's content is stored (effect ledger, session journal): a large diff by its hashes.

A diff carries the whole old and new text of the file. Kept as is, a 10 MB edit put tens of
megabytes into SQLite for every save of its tool call (issue 15 item 5). So a diff whose texts
hold more than `STORED_DIFF_CHARS` characters together is stored as its path, the SHA-256 and
UTF-8 size of each text (PERF-BIG-002); read back, it is a text content that says what
changed, which is what `session/load` replays and a reused outcome shows. Smaller diffs are
stored whole, as before.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from acp_bridge._json import JsonObject
from acp_bridge.tools._base import DiffContent, TextContent

__all__ = ["STORED_DIFF_CHARS", "diff_from_stored", "diff_to_stored"]

STORED_DIFF_CHARS = 64 * 1024
"""Characters of old plus new text above which a diff is stored by its hashes."""

_SLICE = 1 << 20


# The journal saves a tool call several times while it runs: one diff's two texts are hashed
# once. Two entries only, since the cache keeps the texts it was asked about alive.
@functools.lru_cache(maxsize=2)
def _digest(text: str) -> tuple[str, int]:
    """SHA-256 and UTF-8 size of `text`, encoded a slice at a time (no second full copy)."""
    sha = hashlib.sha256()
    size = 0
    for start in range(0, len(text), _SLICE):
        data = text[start : start + _SLICE].encode("utf-8", "surrogatepass")
        sha.update(data)
        size += len(data)
    return sha.hexdigest(), size


def diff_to_stored(item: DiffContent) -> JsonObject:
    """The stored form of a diff: whole when small, else path, hashes and sizes."""
    old = item.old_text
    if len(item.new_text) + len(old or "") <= STORED_DIFF_CHARS:
        return {"type": "diff", "path": item.path, "newText": item.new_text, "oldText": old}
    new_sha, new_bytes = _digest(item.new_text)
    stored: JsonObject = {
        "type": "diff",
        "path": item.path,
        "newSha256": new_sha,
        "newBytes": new_bytes,
        "oldSha256": None,
        "oldBytes": None,
    }
    if old is not None:
        stored["oldSha256"], stored["oldBytes"] = _digest(old)
    return stored


def diff_from_stored(data: Any) -> DiffContent | TextContent:
    """A stored diff read back: the diff itself, or what a hashed one says of the change."""
    path = str(data["path"])
    if "newText" in data:
        old = data.get("oldText")
        return DiffContent(path, str(data["newText"]), None if old is None else str(old))
    new = f"{data['newBytes']} bytes (sha256 {str(data['newSha256'])[:16]})"
    if data.get("oldSha256") is None:
        return TextContent(f"Created {path}: {new}. The diff of a large file is not stored.")
    old = f"{data['oldBytes']} bytes (sha256 {str(data['oldSha256'])[:16]})"
    return TextContent(f"Changed {path}: {old} -> {new}. The diff of a large file is not stored.")
