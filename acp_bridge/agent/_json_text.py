"""JSON text the turn's tail writes directly (the usage_update's line, the prompt response).

Each function writes exactly what the generic encoder (`wire.encode`) writes for the same
value, with its separators, or raises `Unfit` for a value only the generic encoder writes as
it does (or refuses): the caller then builds the dict and takes the generic path.
"""

from __future__ import annotations

import math

from acp_bridge.providers import Usage

__all__ = ["Unfit", "number_text", "usage_text"]


class Unfit(Exception):
    """A value only the generic encoder writes as it does."""


def number_text(value: object) -> str:
    """A finite float or a plain int."""
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    if type(value) is int:
        return int.__repr__(value)
    raise Unfit


def usage_text(usage: Usage | None) -> str:
    """`usage_fields(usage)` (`agent._live`, `agent._report`): the token counts, then the cost
    when there is one."""
    if usage is None:
        return "null"
    tokens, output = usage.input_tokens, usage.output_tokens
    cached, reasoning = usage.cached_input_tokens, usage.reasoning_tokens
    # An exact int formats as the generic encoder writes it (a bool would not).
    if not (type(tokens) is type(output) is type(cached) is type(reasoning) is int):
        raise Unfit
    text = f'{{"input":{tokens},"output":{output},"cachedInput":{cached},"reasoning":{reasoning}'
    return f"{text}}}" if usage.cost is None else f'{text},"cost":{number_text(usage.cost)}}}'
