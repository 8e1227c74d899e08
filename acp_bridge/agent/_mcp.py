"""The MCP servers of each session on this connection (spec/mcp.md).

`McpSessions.start` runs a session's servers in the connection's task group, so the
`session/new` (or load, resume) response never waits for them (MCP-LIFE-001); `tools_for`
is what a prompt offers: the agent's own tools plus the MCP tools of servers that connected
within the bound (MCP-LIFE-002). `stop` ends a session's servers on close (and before a
load/resume restarts them from the params sent then: MCP-LIFE-003); `stop_all` when the
connection ends. Problems reach the user as a `notice` when the client advertised
`session.notices`, and the log otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from acp_bridge.agent._sink import send_session_update
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.mcp import McpLimits

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
    from acp_bridge.mcp import ServerSpec, SessionServers
    from acp_bridge.tools import Tool
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["McpSessions", "server_spec"]

_log = logging.getLogger("acp_bridge.agent")


def server_spec(server: acp.McpServer, roots: Sequence[Path]) -> ServerSpec:
    """`roots`: the session's cwd, then its additional directories (MCP-ROOTS-001)."""
    from acp_bridge.mcp import ServerSpec  # loaded with the first server (cold start)

    if isinstance(server, acp.McpServerStdio):
        return ServerSpec(
            name=server.name,
            transport="stdio",
            command=server.command,
            args=tuple(server.args),
            env=tuple((e.name, e.value) for e in server.env),
            cwd=str(roots[0]),
            roots=tuple(str(root) for root in roots),
        )
    return ServerSpec(
        name=server.name,
        transport=server.type,
        url=server.url,
        headers=tuple((h.name, h.value) for h in server.headers),
    )


class McpSessions:
    def __init__(
        self,
        background: TaskGroup | None,
        peer: JsonRpcPeer,
        client_caps: Callable[[], acp.ClientCapabilities | None],
        limits: McpLimits | None = None,
    ) -> None:
        self._background = background
        self._peer = peer
        self._client_caps = client_caps
        self._limits = limits or McpLimits()
        self._sessions: dict[str, SessionServers] = {}
        self._announced: dict[str, anyio.Event] = {}

    def _notices(self) -> bool:
        caps = self._client_caps()
        return caps is not None and caps.session is not None and caps.session.notices is not None

    def announced(self, session_id: str) -> None:
        """The session's setup response is on the wire: its notices may be sent."""
        event = self._announced.get(session_id)
        if event is not None:
            event.set()

    def start(
        self, session_id: str, servers: Sequence[acp.McpServer], roots: Sequence[Path]
    ) -> None:
        self.stop(session_id)
        if not servers:
            return
        if self._background is None:
            _log.warning("MCP servers of %s not started: no task group to run them", session_id)
            return

        announced = self._announced[session_id] = anyio.Event()

        async def report(severity: str, message: str) -> None:
            if not self._notices():
                return
            with anyio.move_on_after(30):  # none before the session/new response
                await announced.wait()
            if self._peer.closed:
                return
            notice = acp.Notice(severity=severity, title=message)
            try:
                await send_session_update(self._peer, session_id, notice)
            except Exception:  # the editor went away: the log has it already
                _log.debug("could not send a notice to %s", session_id)

        from acp_bridge.mcp import SessionServers  # a session with servers only (cold start)

        group = SessionServers([server_spec(s, roots) for s in servers], report, self._limits)
        self._sessions[session_id] = group
        self._background.start_soon(group.run, announced)  # once the response is written

    async def tools_for(self, session_id: str, own: Iterable[Tool]) -> dict[str, Tool]:
        """The tools a prompt offers; waits (bounded) for the session's pending servers."""
        offered = {tool.name: tool for tool in own}
        group = self._sessions.get(session_id)
        if group is None:
            return offered
        await group.wait_ready()
        for tool in group.tools():
            offered.setdefault(tool.name, tool)
        return offered

    def stop(self, session_id: str) -> None:
        group = self._sessions.pop(session_id, None)
        self._announced.pop(session_id, None)
        if group is not None:
            group.stop()

    def stop_all(self) -> None:
        for session_id in list(self._sessions):
            self.stop(session_id)
