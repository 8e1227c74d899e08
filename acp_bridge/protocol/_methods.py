"""The method tables (PROTO-METHOD-001): each ACP v1 method name, exactly the schema's
`x-method`, with the model of its params and of its result (`None` for a notification).

- `AGENT_METHODS`: what the agent handles (the client sends them).
- `CLIENT_METHODS`: what the client handles (the agent sends them).
- `PROTOCOL_METHODS`: what either side may send.

`elicitation/create` and `elicitation/complete` are stable in the schema but not modelled:
the bridge never sends them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from acp_bridge.protocol._base import AcpModel
from acp_bridge.protocol._config import (
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)
from acp_bridge.protocol._fs import (
    ReadTextFileRequest,
    ReadTextFileResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from acp_bridge.protocol._initialize import (
    AuthenticateRequest,
    AuthenticateResponse,
    InitializeRequest,
    InitializeResponse,
    LogoutRequest,
    LogoutResponse,
)
from acp_bridge.protocol._permission import RequestPermissionRequest, RequestPermissionResponse
from acp_bridge.protocol._prompt import (
    CancelNotification,
    CancelRequestNotification,
    PromptRequest,
    PromptResponse,
)
from acp_bridge.protocol._session import (
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    NewSessionRequest,
    NewSessionResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
)
from acp_bridge.protocol._terminal import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    KillTerminalRequest,
    KillTerminalResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
)
from acp_bridge.protocol._updates import SessionNotification

__all__ = ["AGENT_METHODS", "CLIENT_METHODS", "PROTOCOL_METHODS", "MethodSpec"]


class MethodSpec(NamedTuple):
    """A method's params model and result model (`result` is None for a notification)."""

    params: type[AcpModel]
    result: type[AcpModel] | None

    @property
    def is_notification(self) -> bool:
        return self.result is None


AGENT_METHODS: Mapping[str, MethodSpec] = MappingProxyType(
    {
        "initialize": MethodSpec(InitializeRequest, InitializeResponse),
        "authenticate": MethodSpec(AuthenticateRequest, AuthenticateResponse),
        "logout": MethodSpec(LogoutRequest, LogoutResponse),
        "session/new": MethodSpec(NewSessionRequest, NewSessionResponse),
        "session/load": MethodSpec(LoadSessionRequest, LoadSessionResponse),
        "session/list": MethodSpec(ListSessionsRequest, ListSessionsResponse),
        "session/resume": MethodSpec(ResumeSessionRequest, ResumeSessionResponse),
        "session/close": MethodSpec(CloseSessionRequest, CloseSessionResponse),
        "session/delete": MethodSpec(DeleteSessionRequest, DeleteSessionResponse),
        "session/set_mode": MethodSpec(SetSessionModeRequest, SetSessionModeResponse),
        "session/set_config_option": MethodSpec(
            SetSessionConfigOptionRequest, SetSessionConfigOptionResponse
        ),
        "session/prompt": MethodSpec(PromptRequest, PromptResponse),
        "session/cancel": MethodSpec(CancelNotification, None),
    }
)

CLIENT_METHODS: Mapping[str, MethodSpec] = MappingProxyType(
    {
        "session/request_permission": MethodSpec(
            RequestPermissionRequest, RequestPermissionResponse
        ),
        "session/update": MethodSpec(SessionNotification, None),
        "fs/read_text_file": MethodSpec(ReadTextFileRequest, ReadTextFileResponse),
        "fs/write_text_file": MethodSpec(WriteTextFileRequest, WriteTextFileResponse),
        "terminal/create": MethodSpec(CreateTerminalRequest, CreateTerminalResponse),
        "terminal/output": MethodSpec(TerminalOutputRequest, TerminalOutputResponse),
        "terminal/wait_for_exit": MethodSpec(
            WaitForTerminalExitRequest, WaitForTerminalExitResponse
        ),
        "terminal/kill": MethodSpec(KillTerminalRequest, KillTerminalResponse),
        "terminal/release": MethodSpec(ReleaseTerminalRequest, ReleaseTerminalResponse),
    }
)

PROTOCOL_METHODS: Mapping[str, MethodSpec] = MappingProxyType(
    {"$/cancel_request": MethodSpec(CancelRequestNotification, None)}
)
