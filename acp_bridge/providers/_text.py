"""Provider text that can always be written: surrogate pairs joined, nothing that is not JSON.

A model's text reaches us as JSON strings, and JSON spells a character above U+FFFF as a
UTF-16 surrogate pair (`"\\ud83d\\ude00"`). A provider that splits its stream between the two
halves sends one event whose string ends in a lone high surrogate and a next one that starts
with the low one: decoded one event at a time, each is a lone surrogate, which UTF-8 cannot
encode (the journal, the editor's pipe and every later request body would fail).

- `SurrogateJoiner` is a stream decoder's per-channel state: it holds a trailing high
  surrogate back until the next fragment, so a pair split across events is joined
  (TURN-TEXT-001);
- `repair_surrogates` joins the pairs in a whole string and turns every lone surrogate into
  U+FFFD: the last line of defence wherever provider text enters history, the journal or the
  wire;
- `clean_json` does that for every string of a JSON value and replaces non-finite numbers
  (`1e999` parses as infinity) with null, so nothing that is not JSON enters history or a
  request body (TURN-JSON-001).
"""

from __future__ import annotations

import math
import re

from acp_bridge._json import JsonValue

__all__ = ["SurrogateJoiner", "clean_json", "has_non_json", "repair_surrogates"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_HIGH = re.compile("[\ud800-\udbff]$")
REPLACEMENT = "\ufffd"


def repair_surrogates(text: str) -> str:
    """`text` with surrogate pairs joined into their character and lone surrogates U+FFFD."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class SurrogateJoiner:
    """Joins a surrogate pair split across two fragments of one text stream."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        """The part of `held + text` that can be emitted now (a trailing high surrogate waits
        for the next fragment)."""
        if not self._held and text.isascii():  # the hot path: nothing to join
            return text
        text, self._held = self._held + text, ""
        if _HIGH.search(text) is not None:
            text, self._held = text[:-1], text[-1]
        return repair_surrogates(text)

    def flush(self) -> str:
        """At the end of the stream: a high surrogate still held is lone (U+FFFD)."""
        held, self._held = self._held, ""
        return REPLACEMENT if held else ""


def has_non_json(value: JsonValue) -> bool:
    """Whether `value` holds a non-finite number or a lone surrogate anywhere."""
    return clean_json(value) is not value


def clean_json(value: JsonValue) -> JsonValue:
    """`value` with lone surrogates repaired and non-finite numbers null; the very same
    object when there was nothing to repair (so `is` tells whether anything changed)."""
    if isinstance(value, str):
        return repair_surrogates(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        items = [clean_json(item) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = [(repair_surrogates(k), clean_json(v)) for k, v in value.items()]
        same = all(
            k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)
        )
        return value if same else dict(pairs)
    return value
