"""What each side says it supports in `initialize`.

Omitted capabilities are unsupported. Older capabilities are booleans; newer ones are object
markers: `{}` means supported, omitted or `null` means not (`CapabilityMarker`). Custom
capabilities go in a capability object's `_meta`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from acp_bridge.protocol._base import AcpModel, Bool, DefaultOnError

__all__ = [
    "AgentAuthCapabilities",
    "AgentCapabilities",
    "AuthCapabilities",
    "CapabilityMarker",
    "ClientCapabilities",
    "ClientSessionCapabilities",
    "ElicitationCapabilities",
    "FileSystemCapabilities",
    "McpCapabilities",
    "PromptCapabilities",
    "SessionCapabilities",
    "SessionConfigOptionsCapabilities",
]


class CapabilityMarker(AcpModel):
    """An object-marker capability: present (`{}`) means supported. Stands for the schema's
    `SessionListCapabilities`, `SessionCloseCapabilities`, `LogoutCapabilities`,
    `BooleanConfigOptionCapabilities`, `ElicitationFormCapabilities`, ... which all carry
    nothing but `_meta`."""


# --- the client's side -----------------------------------------------------------------


class FileSystemCapabilities(AcpModel):
    read_text_file: Annotated[Bool, DefaultOnError] = False
    write_text_file: Annotated[Bool, DefaultOnError] = False


class AuthCapabilities(AcpModel):
    """`terminal`: the client can run terminal auth methods (`AuthMethodTerminal`)."""

    terminal: Annotated[Bool, DefaultOnError] = False


class SessionConfigOptionsCapabilities(AcpModel):
    """`boolean`: the client renders boolean config options."""

    boolean: Annotated[CapabilityMarker | None, DefaultOnError] = None


class ClientSessionCapabilities(AcpModel):
    compaction: Annotated[CapabilityMarker | None, DefaultOnError] = None
    config_options: Annotated[SessionConfigOptionsCapabilities | None, DefaultOnError] = None
    notices: Annotated[CapabilityMarker | None, DefaultOnError] = None


class ElicitationCapabilities(AcpModel):
    form: Annotated[CapabilityMarker | None, DefaultOnError] = None
    url: Annotated[CapabilityMarker | None, DefaultOnError] = None


class ClientCapabilities(AcpModel):
    """What the editor supports: agent-to-client methods are only allowed when advertised."""

    fs: Annotated[FileSystemCapabilities, DefaultOnError] = Field(
        default_factory=FileSystemCapabilities
    )
    terminal: Annotated[Bool, DefaultOnError] = False
    session: Annotated[ClientSessionCapabilities | None, DefaultOnError] = None
    auth: Annotated[AuthCapabilities, DefaultOnError] = Field(default_factory=AuthCapabilities)
    elicitation: Annotated[ElicitationCapabilities | None, DefaultOnError] = None


# --- the agent's side ------------------------------------------------------------------


class PromptCapabilities(AcpModel):
    """Prompt content beyond the baseline (`text`, `resource_link`)."""

    image: Annotated[Bool, DefaultOnError] = False
    audio: Annotated[Bool, DefaultOnError] = False
    embedded_context: Annotated[Bool, DefaultOnError] = False


class McpCapabilities(AcpModel):
    """MCP transports beyond the baseline (stdio)."""

    http: Annotated[Bool, DefaultOnError] = False
    sse: Annotated[Bool, DefaultOnError] = False


class SessionCapabilities(AcpModel):
    """Optional session methods: each marker present means the method is implemented."""

    delete: Annotated[CapabilityMarker | None, DefaultOnError] = None
    additional_directories: Annotated[CapabilityMarker | None, DefaultOnError] = None
    resume: Annotated[CapabilityMarker | None, DefaultOnError] = None
    close: Annotated[CapabilityMarker | None, DefaultOnError] = None
    # Declared last: inside this class body the name `list` is this field.
    list: Annotated[CapabilityMarker | None, DefaultOnError] = None


class AgentAuthCapabilities(AcpModel):
    """`logout`: the agent implements the `logout` method."""

    logout: Annotated[CapabilityMarker | None, DefaultOnError] = None


class AgentCapabilities(AcpModel):
    load_session: Annotated[Bool, DefaultOnError] = False
    prompt_capabilities: Annotated[PromptCapabilities, DefaultOnError] = Field(
        default_factory=PromptCapabilities
    )
    mcp_capabilities: Annotated[McpCapabilities, DefaultOnError] = Field(
        default_factory=McpCapabilities
    )
    session_capabilities: Annotated[SessionCapabilities, DefaultOnError] = Field(
        default_factory=SessionCapabilities
    )
    auth: Annotated[AgentAuthCapabilities, DefaultOnError] = Field(
        default_factory=AgentAuthCapabilities
    )
