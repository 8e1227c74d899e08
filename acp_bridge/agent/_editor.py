"""The editor's `fs/*` and `terminal/*` methods, called over JSON-RPC (tools' `EditorClient`).

A method the client did not advertise is never sent (ACP-CLIENTCAP): the tools check
`capabilities` first, and this class refuses as a last line of defence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from acp_bridge.errors import ToolError
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.tools import EditorCapabilities, ExitStatus, TerminalOutput

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["PeerEditorClient", "editor_capabilities"]


def editor_capabilities(caps: acp.ClientCapabilities | None) -> EditorCapabilities:
    if caps is None:
        return EditorCapabilities()
    fs = caps.fs
    return EditorCapabilities(
        read_text_file=bool(fs and fs.read_text_file),
        write_text_file=bool(fs and fs.write_text_file),
        terminal=bool(caps.terminal),
    )


class PeerEditorClient:
    """`EditorClient` for one session, over the connection's peer."""

    def __init__(self, peer: JsonRpcPeer, session_id: str, caps: EditorCapabilities) -> None:
        self._peer = peer
        self._session_id = session_id
        self._caps = caps

    @property
    def capabilities(self) -> EditorCapabilities:
        return self._caps

    def _require(self, advertised: bool, method: str) -> None:
        if not advertised:
            raise ToolError(f"the editor did not advertise {method}")

    async def _call(self, method: str, request: acp.AcpModel) -> object:
        return await self._peer.request(method, acp.to_wire(request))

    async def read_text_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> str:
        self._require(self._caps.read_text_file, "fs/read_text_file")
        fields: dict[str, object] = {"session_id": self._session_id, "path": path}
        if line is not None:
            fields["line"] = line
        if limit is not None:
            fields["limit"] = limit
        result = await self._call("fs/read_text_file", acp.ReadTextFileRequest(**fields))
        return acp.from_wire(acp.ReadTextFileResponse, result).content

    async def write_text_file(self, path: str, content: str) -> None:
        self._require(self._caps.write_text_file, "fs/write_text_file")
        request = acp.WriteTextFileRequest(session_id=self._session_id, path=path, content=content)
        await self._call("fs/write_text_file", request)

    async def terminal_create(
        self,
        command: str,
        *,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        self._require(self._caps.terminal, "terminal/create")
        fields: dict[str, object] = {
            "session_id": self._session_id,
            "command": command,
            "args": list(args),
            "env": [acp.EnvVariable(name=k, value=v) for k, v in (env or {}).items()],
        }
        if cwd is not None:
            fields["cwd"] = cwd
        if output_byte_limit is not None:
            fields["output_byte_limit"] = output_byte_limit
        result = await self._call("terminal/create", acp.CreateTerminalRequest(**fields))
        return acp.from_wire(acp.CreateTerminalResponse, result).terminal_id

    async def terminal_output(self, terminal_id: str) -> TerminalOutput:
        self._require(self._caps.terminal, "terminal/output")
        request = acp.TerminalOutputRequest(session_id=self._session_id, terminal_id=terminal_id)
        reply = acp.from_wire(
            acp.TerminalOutputResponse, await self._call("terminal/output", request)
        )
        status = reply.exit_status
        return TerminalOutput(
            output=reply.output,
            truncated=reply.truncated,
            exit_status=None
            if status is None
            else ExitStatus(exit_code=status.exit_code, signal=status.signal),
        )

    async def terminal_wait_for_exit(self, terminal_id: str) -> ExitStatus:
        self._require(self._caps.terminal, "terminal/wait_for_exit")
        request = acp.WaitForTerminalExitRequest(
            session_id=self._session_id, terminal_id=terminal_id
        )
        reply = acp.from_wire(
            acp.WaitForTerminalExitResponse, await self._call("terminal/wait_for_exit", request)
        )
        return ExitStatus(exit_code=reply.exit_code, signal=reply.signal)

    async def terminal_kill(self, terminal_id: str) -> None:
        self._require(self._caps.terminal, "terminal/kill")
        request = acp.KillTerminalRequest(session_id=self._session_id, terminal_id=terminal_id)
        await self._call("terminal/kill", request)

    async def terminal_release(self, terminal_id: str) -> None:
        self._require(self._caps.terminal, "terminal/release")
        request = acp.ReleaseTerminalRequest(session_id=self._session_id, terminal_id=terminal_id)
        await self._call("terminal/release", request)
