"""The `initialize` handshake, answered before the heavy layers (and pydantic) load.

Version negotiation (initialization.mdx): the client sends the latest version it supports;
we echo it when we support it, else answer our latest, 1. Only implemented capabilities are
advertised (an omitted capability means unsupported).

Cold start is what editors feel first (some time `initialize` out), so a well-formed request
is read by a small exact check and answered from a plain dict; anything unusual falls back to
the pydantic models, which give the precise -32602. Tests hold the two paths equal and the
result valid against `InitializeResponse` and the official schema.
"""

from __future__ import annotations

from typing import Any

from acp_bridge import __version__
from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.agent._auth import AuthOffer, auth_methods, offer_for

__all__ = ["SUPPORTED_VERSION", "initialize", "initialize_result"]

SUPPORTED_VERSION = 1
_UINT16 = 65535


def initialize_result(
    missing_key_vars: tuple[str, ...],
    *,
    offer: AuthOffer | None = None,
    caps: JsonValue = None,
    audio: bool = False,
    image: bool = True,
) -> JsonObject:
    """What acp-bridge answers to `initialize` (an `InitializeResponse` on the wire).

    `caps` are the client's capabilities: the terminal login is offered only to a client
    that enabled `auth.terminal` (spec/authentication.md, AUTH-WIRE-001). `audio` and
    `image`: a configured model takes them (AUDIO-001, PROMPTCAP-001).
    """
    offer = offer_for(offer, missing_key_vars)
    return {
        "protocolVersion": SUPPORTED_VERSION,
        "agentCapabilities": {
            # Durable sessions (spec/sessions.md, SESS-040): exactly what is implemented.
            "loadSession": True,
            "promptCapabilities": {"image": image, "audio": audio, "embeddedContext": True},
            # stdio MCP servers are a MUST; both remote transports work too (MCP-CAP-001).
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {
                "list": {},
                "resume": {},
                "close": {},
                "delete": {},
                "additionalDirectories": {},
            },
            "auth": {"logout": {}},
        },
        "authMethods": auth_methods(offer, missing_key_vars, caps),  # type: ignore[dict-item]
        "agentInfo": {"name": "acp-bridge", "title": "acp-bridge", "version": __version__},
    }


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _plain(params: JsonValue) -> JsonObject | None:
    """The client capabilities of a well-formed, ordinary request; None otherwise."""
    if not isinstance(params, dict):
        return None
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= _UINT16:
        return None
    caps = params.get("clientCapabilities", {})
    if not isinstance(caps, dict):
        return None
    fs = caps.get("fs", {})
    if not isinstance(fs, dict) or not all(_is_bool(fs.get(k, False)) for k in fs):
        return None
    if not _is_bool(caps.get("terminal", False)):
        return None
    info = params.get("clientInfo")
    if info is not None and not (
        isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
        and isinstance(info.get("title", ""), str | None)
    ):
        return None
    if not isinstance(params.get("_meta", {}), dict | None):
        return None
    return caps


def initialize(
    params: JsonValue,
    *,
    missing_key_vars: tuple[str, ...],
    offer: AuthOffer | None = None,
    audio: bool = False,
    image: bool = True,
) -> tuple[JsonObject, JsonObject]:
    """The `initialize` result and the client's capabilities as sent (a JSON object).

    Raises `pydantic.ValidationError` (answered with -32602) for a malformed request.
    """
    caps = _plain(params)
    if caps is None:
        from acp_bridge.protocol._base import from_wire, to_wire
        from acp_bridge.protocol._initialize import InitializeRequest

        request = from_wire(InitializeRequest, params)
        caps = to_wire(request.client_capabilities) if request.client_capabilities else {}
    result = initialize_result(missing_key_vars, offer=offer, caps=caps, audio=audio, image=image)
    return result, caps
