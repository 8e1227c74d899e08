"""An MCP server as the editor passed it, and the SDK parts that reach it (`mcp`).

`ServerSpec` holds no secret in its repr (env and headers: MCP-SECRET-001). `open_transport`
makes the SDK transport of a spec; `roots_answer` and `client_info` are what the client tells
the server. The SDK is imported inside these functions only, when a connection runs
(MCP-LIFE-005).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from acp_bridge.tools._lifeline import lifeline_argv

__all__ = ["ServerSpec", "client_info", "open_transport", "roots_answer"]


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """An MCP server as the editor passed it. `env` and `headers` are secrets: no repr."""

    name: str
    transport: str  # "stdio" | "http" | "sse"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    url: str = ""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    cwd: str | None = None
    roots: tuple[str, ...] = ()  # absolute directories answered to roots/list (stdio only)


def open_transport(spec: ServerSpec) -> Any:
    """The SDK transport that reaches the server: stdio through the lifeline supervisor
    (MCP-LIFE-004), streamable HTTP, or SSE."""
    if spec.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        argv = lifeline_argv([spec.command, *spec.args])
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=dict(spec.env) or None, cwd=spec.cwd
        )
        return stdio_client(params, errlog=sys.stderr)
    headers = dict(spec.headers)
    if spec.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(spec.url, headers=headers or None)
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers=headers or None)
    return _owning(streamable_http_client(spec.url, http_client=http), http)


def roots_answer(roots: tuple[str, ...]) -> Any:
    """The `roots/list` callback: the session's directories as `file://` roots, cwd first."""
    from pathlib import Path

    from mcp_types import ListRootsResult, Root

    answer = ListRootsResult(
        roots=[Root(uri=Path(root).as_uri(), name=Path(root).name or root) for root in roots]
    )

    async def list_roots(context: Any) -> Any:
        return answer

    return list_roots


def client_info() -> Any:
    from mcp_types import Implementation

    from acp_bridge import __version__

    return Implementation(name="acp-bridge", version=__version__)


class _owning:
    def __init__(self, inner: Any, http: Any) -> None:
        self._inner = inner
        self._http = http

    async def __aenter__(self) -> Any:
        await self._http.__aenter__()
        try:
            return await self._inner.__aenter__()
        except BaseException:
            await self._http.__aexit__(None, None, None)
            raise

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self._inner.__aexit__(*exc)
        finally:
            await self._http.__aexit__(None, None, None)
