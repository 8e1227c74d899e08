"""Effect keys: the identity of a side effect by meaning, never by provider call id (sans-IO).

An `EffectKey` is SHA-256 over the canonical JSON of
``[EFFECT_KEY_VERSION, turn_id, tool, arguments, step]`` (spec/effect-keys.md, EFFECT-001..).
The same intended action in two attempts (the seed's ``c1`` and ``c7``) gets the same key;
`EffectSteps` numbers deliberate repeats inside one turn, counting completed attempts only.
"""

from __future__ import annotations

import hashlib
import json
import math
import unicodedata
from collections import Counter
from dataclasses import dataclass

from acp_bridge._json import JsonObject, JsonValue

__all__ = ["EFFECT_KEY_VERSION", "EffectKey", "EffectSteps", "canonical_json"]

EFFECT_KEY_VERSION = 1
_EXACT_INT_LIMIT = 2**53  # integral doubles below this print as integers (EFFECT-003)


def canonical_json(value: JsonValue) -> str:
    """The canonical encoding of spec/effect-keys.md#canonical-json (EFFECT-002, EFFECT-003).

    Object keys sorted by code point after NFC normalisation, strings NFC, no whitespace,
    ASCII only (``\\uXXXX`` escapes), integral numbers without a fraction. Raises `ValueError`
    for NaN/Infinity, non-string keys, or two keys that are equal after normalisation.
    """
    return json.dumps(
        _normalise(value),
        ensure_ascii=True,
        separators=(",", ":"),
        sort_keys=True,
        allow_nan=False,
    )


def _normalise(value: JsonValue) -> JsonValue:
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("NaN and Infinity have no JSON form")
        if value.is_integer() and abs(value) < _EXACT_INT_LIMIT:
            return int(value)  # 10.0 and 10 mean the same amount; -0.0 becomes 0
        return value
    if isinstance(value, list):
        return [_normalise(item) for item in value]
    if isinstance(value, dict):
        out: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"object key {key!r} is not a string")
            nkey = unicodedata.normalize("NFC", key)
            if nkey in out:
                raise ValueError(f"object keys collide after NFC normalisation: {nkey!r}")
            out[nkey] = _normalise(item)
        return out
    raise ValueError(f"{type(value).__name__} is not a JSON value")


@dataclass(frozen=True, slots=True)
class EffectKey:
    """The key of one side-effecting tool call; `str(key)` is the 64-hex-digit digest."""

    turn_id: str
    tool: str
    arguments: str  # canonical JSON of the arguments object
    step: int = 0

    @classmethod
    def derive(cls, turn_id: str, tool: str, arguments: JsonObject, step: int = 0) -> EffectKey:
        return cls(turn_id, tool, canonical_json(arguments), step)

    @property
    def material(self) -> str:
        """The canonical JSON text that is hashed (EFFECT-001)."""
        return (
            f"[{EFFECT_KEY_VERSION},{canonical_json(self.turn_id)},{canonical_json(self.tool)},"
            f"{self.arguments},{self.step}]"
        )

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.material.encode("ascii")).hexdigest()

    def __str__(self) -> str:
        return self.digest


class EffectSteps:
    """Assigns the step of each call of a completed attempt (EFFECT-005).

    The step is how often the same (tool, canonical arguments) already occurred among the
    calls of completed attempts of this turn. Abandoned attempts never reach it, so a retry
    repeating a call gets the same step; a deliberate repeat in a later model call gets the
    next one.
    """

    def __init__(self) -> None:
        self._seen: Counter[tuple[str, str]] = Counter()

    def next_step(self, tool: str, arguments: JsonObject) -> int:
        identity = (tool, canonical_json(arguments))
        step = self._seen[identity]
        self._seen[identity] += 1
        return step
