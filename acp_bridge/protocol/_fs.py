"""`fs/*`: the editor's file system, unsaved buffers included (Agent -> Client requests).

Each method is only allowed when the client advertised it in `clientCapabilities.fs`.
Paths are absolute; `line` is 1-based. The client creates a missing file on write.
"""

from __future__ import annotations

from acp_bridge.protocol._base import AcpModel, UInt32

__all__ = [
    "ReadTextFileRequest",
    "ReadTextFileResponse",
    "WriteTextFileRequest",
    "WriteTextFileResponse",
]


class ReadTextFileRequest(AcpModel):
    session_id: str
    path: str
    line: UInt32 | None = None
    limit: UInt32 | None = None


class ReadTextFileResponse(AcpModel):
    content: str


class WriteTextFileRequest(AcpModel):
    session_id: str
    path: str
    content: str


class WriteTextFileResponse(AcpModel):
    pass
