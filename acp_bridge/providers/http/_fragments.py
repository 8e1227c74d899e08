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

__all__ = ["Element", "FragmentCache", "Fragments", "dumps", "encode_body", "grouped"]

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


def encode_body(body: Mapping[str, JsonValue | Fragments]) -> bytes:
    """`dumps(body)` where top-level `Fragments` values are spliced in as they are (joined
    in C: no Python step per history message)."""
    parts: list[bytes] = []
    for key, value in body.items():
        parts.append(b"," if parts else b"{")
        parts.append(dumps(key) + b":")
        if isinstance(value, Fragments):
            parts += (b"[", b",".join(value.items), b"]")
        else:
            parts.append(dumps(value))
    parts.append(b"}" if parts else b"{}")
    return b"".join(parts)


Element = tuple[bytes, int]
"""One element of a request's message array and the index of the first history message in
it (a merged run of one role starts there)."""


def grouped(entries: Iterable[tuple[int, str, bytes]], head: bytes, tail: bytes) -> list[Element]:
    """Consecutive fragments of one role merged into one wire message, empty ones skipped
    (Anthropic and Gemini require alternating roles): each message is
    `{"role":<role>` + `head` + its fragments joined + `tail`, e.g. `,"content":[` ... `]}`.
    `entries` are (index, role, fragment)."""
    out: list[Element] = []
    role: str | None = None
    first = 0
    run: list[bytes] = []
    prefixes: dict[str, bytes] = {}
    for index, entry_role, fragment in entries:
        if not fragment:
            continue
        if entry_role != role:
            if role is not None:
                out.append((prefixes[role] + b",".join(run) + tail, first))
            role, first, run = entry_role, index, []
            if role not in prefixes:
                prefixes[role] = b'{"role":' + dumps(role) + head
        run.append(fragment)
    if role is not None:
        out.append((prefixes[role] + b",".join(run) + tail, first))
    return out


class FragmentCache(Generic[M]):
    """Each message's encoded fragment, made by `encode` once and kept while the message
    lives. `encoded` counts the fragments made (what the tests count)."""

    def __init__(self, encode: Callable[[M], bytes]) -> None:
        self._encode = encode
        self._entries: _Entries = {}
        self._last: tuple[tuple[M, ...], list[bytes], list[int], Hashable] | None = None
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

    def assemble(
        self,
        messages: Sequence[M],
        build: Callable[[Sequence[M], int], list[Element]],
        context: Hashable = None,
    ) -> list[bytes]:
        """The message array's elements for `messages`: `build(messages, start)` makes those
        from `messages[start:]`. When the previous call's messages (with the same `context`)
        are a prefix of these, as a growing session's are, its elements are reused but the
        last (the next message may join its run), so a request costs its new messages, not
        the history (compared at C speed: equal messages encode alike)."""
        current = tuple(messages)
        items: list[bytes] = []
        starts: list[int] = []
        start = 0
        last = self._last
        if last is not None and last[3] == context and last[1]:
            previous, previous_items, previous_starts, _ = last
            if len(previous) <= len(current) and current[: len(previous)] == previous:
                items, starts = previous_items[:-1], previous_starts[:-1]
                start = previous_starts[-1]
        for item, first in build(current, start):
            items.append(item)
            starts.append(first)
        self._last = (current, items, starts, context)
        return items


def _forget(entries: _Entries, key: int, ref: weakref.ref[Any]) -> None:
    entry = entries.get(key)
    if entry is not None and entry[0] is ref:  # not a newer entry under a reused id
        del entries[key]
