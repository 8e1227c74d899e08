"""The MCP servers of one session: started together, waited for with a bound, stopped together.

`SessionServers.run` connects every server concurrently in its own task group and returns once
all have stopped (MCP-LIFE-001); `session/new` does not wait for it, and the agent starts it
once the response is on the wire (the SDK is imported off the event loop). The first prompt
waits for pending connections at most `ready_timeout` seconds (MCP-LIFE-002); a server still
pending then is left out of that turn and joins the next. `stop()` ends them all (MCP-LIFE-003).
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import anyio.to_thread

from acp_bridge.mcp._connection import Report, ServerConnection
from acp_bridge.mcp._limits import McpLimits
from acp_bridge.mcp._tool import McpTool
from acp_bridge.mcp._transport import ServerSpec

__all__ = ["SessionServers"]


class SessionServers:
    def __init__(self, specs: Sequence[ServerSpec], report: Report, limits: McpLimits) -> None:
        self.limits = limits
        self.connections = [
            ServerConnection(
                spec,
                report,
                connect_timeout=limits.connect_timeout,
                call_timeout=limits.call_timeout,
                model_limit=limits.model_output_bytes,
            )
            for spec in _unique(specs)
        ]
        self.stopped = anyio.Event()
        self._stopping = False

    async def run(self, after: anyio.Event | None = None) -> None:
        """Connects every server; `after`: what to wait for first (the setup response)."""
        try:
            if after is not None:
                with anyio.move_on_after(30):
                    await after.wait()
            # The SDK's import takes a while (pydantic models): off the event loop, so the
            # editor's other traffic keeps flowing meanwhile.
            await anyio.to_thread.run_sync(_import_sdk)
            async with anyio.create_task_group() as tg:
                for connection in self.connections:
                    if self._stopping:
                        break
                    tg.start_soon(connection.run)
        finally:
            self.stopped.set()

    def stop(self) -> None:
        self._stopping = True
        for connection in self.connections:
            connection.stop()

    async def wait_ready(self) -> None:
        with anyio.move_on_after(self.limits.ready_timeout):
            for connection in self.connections:
                await connection.ready.wait()

    def tools(self) -> list[McpTool]:
        return [t for c in self.connections if c.state == "ready" for t in c.tools]


def _import_sdk() -> None:
    import importlib

    for name in ("mcp", "mcp.client.stdio", "mcp.client.sse", "mcp.client.streamable_http"):
        importlib.import_module(name)


def _unique(specs: Sequence[ServerSpec]) -> list[ServerSpec]:
    """Two servers with one name would offer the same tool names: the later ones get a
    suffix (``name~2``), which the naming then hashes (MCP-NAME-002)."""
    seen: dict[str, int] = {}
    out: list[ServerSpec] = []
    for spec in specs:
        count = seen.get(spec.name, 0) + 1
        seen[spec.name] = count
        if count > 1:
            from dataclasses import replace

            spec = replace(spec, name=f"{spec.name}~{count}")
        out.append(spec)
    return out
