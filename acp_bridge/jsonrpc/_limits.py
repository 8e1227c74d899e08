"""Sans-IO checks on decoded params before any handler sees them (spec/robustness.md).

JSON lets a string carry a lone UTF-16 surrogate (``"\\ud800"``, what a JavaScript editor makes
of a broken emoji); Python keeps it, but it is not Unicode: it cannot be written as UTF-8 to a
store, a trace or a log. And valid JSON can nest deeper than the code above (validation,
redaction, storage) can follow. Both are found here with one iterative walk (no recursion):

- `params_problem` names the first offending place in a request's params, as a field path
  the way validation errors do (``prompt.0.text``), for a -32602 (ROBUST-TEXT-001);
- `too_deep` says whether a message nests deeper than `MAX_DEPTH` (ROBUST-DEPTH-001);
- `scrub` replaces lone surrogates with U+FFFD in what the editor answered to one of our
  requests (a file's text read by the editor is data, not a request to refuse).
"""

from __future__ import annotations

import re
from typing import Final

from acp_bridge._json import JsonValue
from acp_bridge.errors import clip

__all__ = ["MAX_DEPTH", "params_problem", "scrub", "too_deep"]

MAX_DEPTH: Final = 128
"""Deepest nesting of arrays and objects accepted in one message (ACP needs fewer than 10)."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None


def too_deep(value: JsonValue, limit: int = MAX_DEPTH) -> bool:
    """True when `value` nests arrays/objects more than `limit` levels deep."""
    stack: list[tuple[JsonValue, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item  # type: ignore[assignment]
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def params_problem(params: JsonValue) -> tuple[str, str] | None:
    """(field path, problem) for the first lone surrogate in `params` (a key or a value)."""
    stack: list[tuple[JsonValue, str]] = [(params, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return clip(path) or "(params)", _SURROGATE_PROBLEM
        elif isinstance(item, dict):
            for key, child in item.items():
                where = f"{path}.{key}" if path else key
                if _has_surrogate(key):
                    return clip(where), _SURROGATE_KEY_PROBLEM
                stack.append((child, where))
        elif isinstance(item, list):
            stack.extend((child, f"{path}.{i}" if path else str(i)) for i, child in enumerate(item))
    return None


_SURROGATE_PROBLEM = (
    "text holds a lone UTF-16 surrogate (half of a character, e.g. a broken emoji), which is "
    "not Unicode; send the whole character or drop it"
)
_SURROGATE_KEY_PROBLEM = _SURROGATE_PROBLEM.replace("text holds", "the key holds")


def scrub(value: JsonValue) -> JsonValue:
    """`value` with every lone surrogate in its strings replaced by U+FFFD (no recursion)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _has_surrogate(value) else value
    if not isinstance(value, dict | list):
        return value
    root: list[JsonValue] = [value]
    stack: list[JsonValue] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in list(item.items()):
                if isinstance(child, str) and _has_surrogate(child):
                    item[key] = _LONE_SURROGATE.sub("\ufffd", child)
                elif isinstance(child, dict | list):
                    stack.append(child)
                if _has_surrogate(key):
                    item[_LONE_SURROGATE.sub("\ufffd", key)] = item.pop(key)
        elif isinstance(item, list):
            for i, child in enumerate(item):
                if isinstance(child, str) and _has_surrogate(child):
                    item[i] = _LONE_SURROGATE.sub("\ufffd", child)
                elif isinstance(child, dict | list):
                    stack.append(child)
    return root[0]
