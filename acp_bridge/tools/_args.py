"""Reading the model's arguments: every problem becomes a `ToolError` the model can act on.

Unknown arguments are ignored (models sometimes add some); a wrong type or a missing
required argument is refused with the argument's name and what was expected.
"""

from __future__ import annotations

import math

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError

__all__ = ["optional_int", "optional_number", "optional_str", "required_str"]


def required_str(arguments: JsonObject, name: str, *, allow_empty: bool = False) -> str:
    value = arguments.get(name)
    if not isinstance(value, str):
        raise ToolError(f"argument `{name}` is required and must be a string")
    if not allow_empty and value == "":
        raise ToolError(f"argument `{name}` must not be empty")
    return value


def optional_str(arguments: JsonObject, name: str) -> str | None:
    value = arguments.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"argument `{name}` must be a string")
    return value


def optional_int(arguments: JsonObject, name: str, *, minimum: int) -> int | None:
    value = arguments.get(name)
    if value is None:
        return None
    # JSON has one number type; some models send 10.0 for 10. A bool is never a number here.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"argument `{name}` must be an integer")
    if value < minimum:
        raise ToolError(f"argument `{name}` must be at least {minimum}")
    return value


def optional_number(arguments: JsonObject, name: str) -> float | None:
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ToolError(f"argument `{name}` must be a number")
    if value <= 0:
        raise ToolError(f"argument `{name}` must be greater than 0")
    return float(value)
