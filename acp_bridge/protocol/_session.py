"""Session lifecycle: `session/new`, `load`, `resume`, `list`, `close` and `delete`.

`cwd` MUST be absolute (checking it is the agent layer's job). `session/load` replays the
history as session updates before it answers; `session/resume` replays nothing. `load`,
`resume`, `list`, `close` and `delete` are only called when the agent advertised them.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from acp_bridge.protocol._base import (
    AcpModel,
    DefaultOnError,
    EmptyOnError,
    NullAsEmpty,
    SkipInvalidItems,
)
from acp_bridge.protocol._config import SessionConfigOption, SessionModeState
from acp_bridge.protocol._mcp import McpServer

__all__ = [
    "CloseSessionRequest",
    "CloseSessionResponse",
    "DeleteSessionRequest",
    "DeleteSessionResponse",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "LoadSessionRequest",
    "LoadSessionResponse",
    "NewSessionRequest",
    "NewSessionResponse",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SessionInfo",
]

_ConfigOptions = Annotated[list[SessionConfigOption] | None, SkipInvalidItems, DefaultOnError]


class NewSessionRequest(AcpModel):
    cwd: str
    additional_directories: Annotated[list[str], NullAsEmpty] = Field(default_factory=list)
    mcp_servers: Annotated[list[McpServer], NullAsEmpty]


class NewSessionResponse(AcpModel):
    session_id: str
    modes: Annotated[SessionModeState | None, DefaultOnError] = None
    config_options: _ConfigOptions = None


class LoadSessionRequest(AcpModel):
    session_id: str
    cwd: str
    additional_directories: Annotated[list[str], NullAsEmpty] = Field(default_factory=list)
    mcp_servers: Annotated[list[McpServer], NullAsEmpty]


class LoadSessionResponse(AcpModel):
    modes: Annotated[SessionModeState | None, DefaultOnError] = None
    config_options: _ConfigOptions = None


class ResumeSessionRequest(AcpModel):
    session_id: str
    cwd: str
    additional_directories: Annotated[list[str], NullAsEmpty] = Field(default_factory=list)
    mcp_servers: Annotated[list[McpServer], NullAsEmpty] = Field(default_factory=list)


class ResumeSessionResponse(AcpModel):
    modes: Annotated[SessionModeState | None, DefaultOnError] = None
    config_options: _ConfigOptions = None


class ListSessionsRequest(AcpModel):
    """Filter by `cwd`; `cursor` is the `nextCursor` of the previous page."""

    cwd: str | None = None
    cursor: str | None = None


class SessionInfo(AcpModel):
    session_id: str
    cwd: str
    additional_directories: Annotated[list[str], SkipInvalidItems, DefaultOnError] = Field(
        default_factory=list
    )
    title: Annotated[str | None, DefaultOnError] = None
    updated_at: Annotated[str | None, DefaultOnError] = None


class ListSessionsResponse(AcpModel):
    sessions: Annotated[list[SessionInfo], SkipInvalidItems, EmptyOnError]
    next_cursor: Annotated[str | None, DefaultOnError] = None


class CloseSessionRequest(AcpModel):
    """Cancels the session's turn as `session/cancel` would, then frees it."""

    session_id: str


class CloseSessionResponse(AcpModel):
    pass


class DeleteSessionRequest(AcpModel):
    """Deleting an unknown session SHOULD succeed silently."""

    session_id: str


class DeleteSessionResponse(AcpModel):
    pass
