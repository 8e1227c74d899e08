"""MCP servers the client asks the agent to connect to (`mcpServers` of session setup).

A union: stdio has no `type` on the wire (every agent must support it); `http` and `sse`
(deprecated) are tagged and only offered when the agent advertised them.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Discriminator, Tag, TypeAdapter

from acp_bridge.protocol._base import UNION_CONFIG, AcpModel, NullAsEmpty
from acp_bridge.protocol._terminal import EnvVariable

__all__ = [
    "MCP_SERVER",
    "HttpHeader",
    "McpServer",
    "McpServerHttp",
    "McpServerSse",
    "McpServerStdio",
]


class HttpHeader(AcpModel):
    name: str
    value: str


class McpServerStdio(AcpModel):
    name: str
    command: str
    args: Annotated[list[str], NullAsEmpty]
    env: Annotated[list[EnvVariable], NullAsEmpty]


class McpServerHttp(AcpModel):
    type: Literal["http"] = "http"
    name: str
    url: str
    headers: Annotated[list[HttpHeader], NullAsEmpty]


class McpServerSse(AcpModel):
    type: Literal["sse"] = "sse"
    name: str
    url: str
    headers: Annotated[list[HttpHeader], NullAsEmpty]


def _mcp_server_tag(value: object) -> str:
    if isinstance(value, dict):
        tag = value.get("type", "stdio")
        return tag if isinstance(tag, str) else ""
    return str(getattr(value, "type", "stdio"))


McpServer: TypeAlias = Annotated[
    Annotated[McpServerStdio, Tag("stdio")]
    | Annotated[McpServerHttp, Tag("http")]
    | Annotated[McpServerSse, Tag("sse")],
    Discriminator(_mcp_server_tag),
]

MCP_SERVER: TypeAdapter[McpServer] = TypeAdapter(McpServer, config=UNION_CONFIG)
