"""`terminal/*`: commands the agent runs in an editor terminal (Agent -> Client requests).

Only allowed when the client advertised `clientCapabilities.terminal`. `terminal/create`
returns at once with an id; the agent MUST `terminal/release` every terminal it created.
Output beyond `outputByteLimit` is truncated by the client from the start.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from acp_bridge.protocol._base import AcpModel, Bool, DefaultOnError, NullAsEmpty, UInt32, UInt64

__all__ = [
    "CreateTerminalRequest",
    "CreateTerminalResponse",
    "EnvVariable",
    "KillTerminalRequest",
    "KillTerminalResponse",
    "ReleaseTerminalRequest",
    "ReleaseTerminalResponse",
    "TerminalExitStatus",
    "TerminalOutputRequest",
    "TerminalOutputResponse",
    "WaitForTerminalExitRequest",
    "WaitForTerminalExitResponse",
]


class EnvVariable(AcpModel):
    name: str
    value: str


class CreateTerminalRequest(AcpModel):
    session_id: str
    command: str
    args: Annotated[list[str], NullAsEmpty] = Field(default_factory=list)
    env: Annotated[list[EnvVariable], NullAsEmpty] = Field(default_factory=list)
    cwd: str | None = None
    output_byte_limit: UInt64 | None = None


class CreateTerminalResponse(AcpModel):
    terminal_id: str


class TerminalOutputRequest(AcpModel):
    session_id: str
    terminal_id: str


class TerminalExitStatus(AcpModel):
    exit_code: Annotated[UInt32 | None, DefaultOnError] = None
    signal: Annotated[str | None, DefaultOnError] = None


class TerminalOutputResponse(AcpModel):
    """The output so far; `exit_status` is set once the command has exited."""

    output: str
    truncated: Bool
    exit_status: Annotated[TerminalExitStatus | None, DefaultOnError] = None


class WaitForTerminalExitRequest(AcpModel):
    session_id: str
    terminal_id: str


class WaitForTerminalExitResponse(AcpModel):
    exit_code: Annotated[UInt32 | None, DefaultOnError] = None
    signal: Annotated[str | None, DefaultOnError] = None


class KillTerminalRequest(AcpModel):
    """Kills the command; the terminal stays valid until released."""

    session_id: str
    terminal_id: str


class KillTerminalResponse(AcpModel):
    pass


class ReleaseTerminalRequest(AcpModel):
    """Kills the command if still running and invalidates the terminal id."""

    session_id: str
    terminal_id: str


class ReleaseTerminalResponse(AcpModel):
    pass
