"""Request bodies assembled from JSON fragments, each history message encoded once (issue 15.2).

A long session sends its whole history with every model call. Rendering every message into
dicts and `json.dumps`-ing them again each time made a session cost O(N²); instead each
history message is encoded once per provider into its JSON fragment (bytes), kept in a
`FragmentCache`, and a request body is the fragments joined with the few top-level fields
encoded fresh. The bytes are exactly those of `json.dumps(body, ensure_ascii=False,
separators=(",", ":")).encode()` of the dict the provider's `render_*` function builds: the
adapters define each message's wire form once and use it for both.

The cache is keyed by message identity, which is safe because history messages are frozen
and the cache holds a weak reference to each: an entry lives exactly as long as its message,
so a history rewritten by compaction or repair (new message objects) is encoded afresh and
the old entries disappear with the old messages. `variant` covers what a fragment depends on
outside its message (Gemini's function responses name their call's id only when the call had
one); a different variant re-encodes.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from acp_bridge._json import JsonValue

__all__ = ["FragmentCache", "Fragments", "dumps", "encode_body", "grouped"]

M = TypeVar("M")
_Entries = dict[int, tuple["weakref.ref[Any]", Hashable, bytes]]


def dumps(value: JsonValue) -> bytes:
    """The transport's encoding: compact JSON, non-ASCII kept, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class Fragments:
    """A JSON array given as its encoded elements (spliced in by `encode_body`)."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[bytes]) -> None:
        self.items = items

    def encode(self) -> bytes:
        return b"[" + b",".join(self.items) + b"]"


def encode_body(body: Mapping[str, JsonValue | Fragments]) -> bytes:
    """`dumps(body)` where top-level `Fragments` values are spliced in as they are."""
    fields = [
        dumps(key) + b":" + (value.encode() if isinstance(value, Fragments) else dumps(value))
        for key, value in body.items()
    ]
    return b"{" + b",".join(fields) + b"}"


def grouped(entries: Iterable[tuple[str, bytes]], head: bytes, tail: bytes) -> list[bytes]:
    """Consecutive fragments of one role merged into one wire message, empty ones skipped
    (Anthropic and Gemini require alternating roles): each message is
    `{"role":<role>` + `head` + its fragments joined + `tail`, e.g. `,"content":[` ... `]}`."""
    out: list[bytes] = []
    role: str | None = None
    run: list[bytes] = []
    for entry_role, fragment in entries:
        if not fragment:
            continue
        if entry_role != role:
            if role is not None:
                out.append(b'{"role":' + dumps(role) + head + b",".join(run) + tail)
            role, run = entry_role, []
        run.append(fragment)
    if role is not None:
        out.append(b'{"role":' + dumps(role) + head + b",".join(run) + tail)
    return out


class FragmentCache(Generic[M]):
    """Each message's encoded fragment, made by `encode` once and kept while the message
    lives. `encoded` counts the fragments made (what the tests count)."""

    def __init__(self, encode: Callable[[M], bytes]) -> None:
        self._encode = encode
        self._entries: _Entries = {}
        self.encoded = 0

    def __len__(self) -> int:
        return len(self._entries)

    def fragment(
        self, message: M, variant: Hashable = None, encode: Callable[[M], bytes] | None = None
    ) -> bytes:
        """The fragment of `message` (`encode` instead of the cache's encoder, for variants)."""
        key = id(message)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is message and entry[1] == variant:
            return entry[2]
        fragment = (encode or self._encode)(message)
        self.encoded += 1
        entries = self._entries
        ref = weakref.ref(message, lambda _ref: _forget(entries, key, _ref))
        entries[key] = (ref, variant, fragment)
        return fragment


def _forget(entries: _Entries, key: int, ref: weakref.ref[Any]) -> None:
    entry = entries.get(key)
    if entry is not None and entry[0] is ref:  # not a newer entry under a reused id
        del entries[key]
