"""The `initialize` handshake, kept light: it must answer before the heavy layers load.

Version negotiation (initialization.mdx): the client sends the latest version it supports;
we echo it when we support it, else answer our latest, 1. Only implemented capabilities are
advertised (an omitted capability means unsupported).
"""

from __future__ import annotations

from acp_bridge import __version__
from acp_bridge._json import JsonValue
from acp_bridge.protocol._base import from_wire, to_wire
from acp_bridge.protocol._capabilities import (
    AgentCapabilities,
    ClientCapabilities,
    PromptCapabilities,
)
from acp_bridge.protocol._initialize import (
    AuthMethod,
    AuthMethodAgent,
    Implementation,
    InitializeRequest,
    InitializeResponse,
)

__all__ = ["AUTH_METHOD_ID", "auth_methods", "initialize"]

SUPPORTED_VERSION = 1
AUTH_METHOD_ID = "env-api-key"


def auth_methods(missing_key_vars: tuple[str, ...]) -> list[AuthMethod]:
    """The agent auth method offered when the provider's API key is missing."""
    if not missing_key_vars:
        return []
    names = " or ".join(missing_key_vars)
    return [
        AuthMethodAgent(
            id=AUTH_METHOD_ID,
            name="API key from the environment",
            description=f"Set {names} in the environment that launches acp-bridge.",
        )
    ]


def initialize(
    params: JsonValue, *, missing_key_vars: tuple[str, ...]
) -> tuple[JsonValue, ClientCapabilities | None]:
    """The `initialize` result and the client's capabilities."""
    request = from_wire(InitializeRequest, params)
    response = InitializeResponse(
        protocol_version=SUPPORTED_VERSION,
        agent_capabilities=AgentCapabilities(
            load_session=False,
            prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
        ),
        auth_methods=auth_methods(missing_key_vars),
        agent_info=Implementation(name="acp-bridge", title="acp-bridge", version=__version__),
    )
    return to_wire(response), request.client_capabilities
