"""`initialize`, `authenticate` and `logout`: the connection's handshake.

The client sends the latest protocol version it supports; the agent echoes it when it
supports it and otherwise answers with its own latest (`PROTOCOL_VERSION`). The version is a
bare integer: a string such as `"1.0.0"` is rejected, never coerced (PROTO-VERSION-001).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag, TypeAdapter

from acp_bridge.protocol._base import (
    UNION_CONFIG,
    AcpModel,
    DefaultOnError,
    NullAsEmpty,
    NullAsEmptyObject,
    SkipInvalidItems,
)
from acp_bridge.protocol._capabilities import AgentCapabilities, ClientCapabilities

__all__ = [
    "AUTH_METHOD",
    "PROTOCOL_VERSION",
    "AuthMethod",
    "AuthMethodAgent",
    "AuthMethodTerminal",
    "AuthenticateRequest",
    "AuthenticateResponse",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "LogoutRequest",
    "LogoutResponse",
    "ProtocolVersion",
]

PROTOCOL_VERSION = 1
"""The ACP major version this package speaks."""

ProtocolVersion: TypeAlias = Annotated[int, Field(strict=True, ge=0, le=0xFFFF)]


class Implementation(AcpModel):
    """`clientInfo` / `agentInfo`: who is on the other end."""

    name: str
    title: Annotated[str | None, DefaultOnError] = None
    version: str


class AuthMethodAgent(AcpModel):
    """An auth method the agent runs itself, through `authenticate` (no `type` on the wire)."""

    id: str
    name: str
    description: Annotated[str | None, DefaultOnError] = None


class AuthMethodTerminal(AcpModel):
    """`type: "terminal"`: the client reruns the agent in a terminal with `args`/`env` added.
    Only offered when the client advertised `auth.terminal`."""

    type: Literal["terminal"] = "terminal"
    id: str
    name: str
    description: Annotated[str | None, DefaultOnError] = None
    args: Annotated[list[str], NullAsEmpty] = Field(default_factory=list)
    env: Annotated[dict[str, str], NullAsEmptyObject] = Field(default_factory=dict)


def _auth_method_tag(value: object) -> str:
    if isinstance(value, dict):
        tag = value.get("type", "agent")
        return tag if isinstance(tag, str) else ""
    return str(getattr(value, "type", "agent"))


AuthMethod: TypeAlias = Annotated[
    Annotated[AuthMethodAgent, Tag("agent")] | Annotated[AuthMethodTerminal, Tag("terminal")],
    Discriminator(_auth_method_tag),
]

AUTH_METHOD: TypeAdapter[AuthMethod] = TypeAdapter(AuthMethod, config=UNION_CONFIG)


class InitializeRequest(AcpModel):
    protocol_version: ProtocolVersion
    client_capabilities: Annotated[ClientCapabilities, DefaultOnError] = Field(
        default_factory=ClientCapabilities
    )
    client_info: Annotated[Implementation | None, DefaultOnError] = None


class InitializeResponse(AcpModel):
    protocol_version: ProtocolVersion
    agent_capabilities: Annotated[AgentCapabilities, DefaultOnError] = Field(
        default_factory=AgentCapabilities
    )
    auth_methods: Annotated[list[AuthMethod], SkipInvalidItems, DefaultOnError] = Field(
        default_factory=list
    )
    agent_info: Annotated[Implementation | None, DefaultOnError] = None


class AuthenticateRequest(AcpModel):
    method_id: str


class AuthenticateResponse(AcpModel):
    pass


class LogoutRequest(AcpModel):
    """Only sent when the agent advertised `agentCapabilities.auth.logout`."""


class LogoutResponse(AcpModel):
    pass
