"""The JSON-RPC error object as ACP defines it (`code`, `message`, optional `data`).

The codes themselves live in `acp_bridge.errors`; this model reads and writes the object.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import JsonValue

from acp_bridge.protocol._base import AcpModel, DefaultOnError

__all__ = ["Error"]


class Error(AcpModel):
    code: int
    message: str
    data: Annotated[JsonValue, DefaultOnError] = None
