"""`session/request_permission`: the agent asks the user before a tool call runs.

The request shows the tool call and the options; the answer is the selected option's id, or
`cancelled` (which the client MUST send for every pending request once the turn is
cancelled).
"""

from __future__ import annotations

import enum
from typing import Annotated, Literal, TypeAlias

from pydantic import Field, TypeAdapter

from acp_bridge.protocol._base import UNION_CONFIG, AcpModel
from acp_bridge.protocol._tool_call import ToolCallUpdate

__all__ = [
    "REQUEST_PERMISSION_OUTCOME",
    "CancelledPermissionOutcome",
    "PermissionOption",
    "PermissionOptionKind",
    "RequestPermissionOutcome",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "SelectedPermissionOutcome",
]


class PermissionOptionKind(enum.StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    REJECT_ONCE = "reject_once"
    REJECT_ALWAYS = "reject_always"


class PermissionOption(AcpModel):
    option_id: str
    name: str
    kind: PermissionOptionKind


class RequestPermissionRequest(AcpModel):
    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


class SelectedPermissionOutcome(AcpModel):
    outcome: Literal["selected"] = "selected"
    option_id: str


class CancelledPermissionOutcome(AcpModel):
    outcome: Literal["cancelled"] = "cancelled"


RequestPermissionOutcome: TypeAlias = Annotated[
    SelectedPermissionOutcome | CancelledPermissionOutcome, Field(discriminator="outcome")
]

REQUEST_PERMISSION_OUTCOME: TypeAdapter[RequestPermissionOutcome] = TypeAdapter(
    RequestPermissionOutcome, config=UNION_CONFIG
)


class RequestPermissionResponse(AcpModel):
    outcome: RequestPermissionOutcome
