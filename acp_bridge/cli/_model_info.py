"""The `model_info` setting: what the user declares of their models (MODEL-INFO-001).

A TOML table of model ids, each with `input` (what the model takes: a list of `text`,
`image`, `audio`) and/or `context_window` (tokens), in the config file only:

    [model_info."qwen2.5-coder-7b"]
    input = ["text"]
    context_window = 32768

A declaration wins over the known-models tables and the provider's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_bridge.providers import INPUT_KINDS, ModelInfo

__all__ = ["parse_model_info"]

_KEYS = ("input", "context_window")


def parse_model_info(value: Any) -> Mapping[str, ModelInfo]:
    """The declarations of a `model_info` table; ValueError says what is wrong and the fix."""
    if not isinstance(value, Mapping):
        raise ValueError(
            'must be a table of model ids, e.g. [model_info."my-model"] input = ["text"]'
        )
    declared: dict[str, ModelInfo] = {}
    for model, entry in value.items():
        where = f'[model_info."{model}"]'
        if not isinstance(entry, Mapping) or not entry:
            raise ValueError(f"{where} must be a table with {' and/or '.join(_KEYS)}")
        unknown = sorted(set(entry) - set(_KEYS))
        if unknown:
            raise ValueError(
                f"{where}: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(_KEYS)}"
            )
        declared[str(model)] = ModelInfo(
            inputs=_inputs(where, entry.get("input")),
            context_window=_window(where, entry.get("context_window")),
        )
    return declared


def _inputs(where: str, value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f'{where} input must be a list such as ["text", "image"]')
    unknown = sorted(set(value) - set(INPUT_KINDS))
    if unknown or "text" not in value:
        raise ValueError(
            f"{where} input {value!r}: list `text` and any of `image`, `audio` "
            f"(unknown: {', '.join(unknown) or 'none'})"
        )
    return frozenset(value)


def _window(where: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where} context_window must be a whole number of tokens, at least 1")
    return value
