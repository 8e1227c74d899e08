"""Authentication on the wire: the `authMethods` offered, `authenticate` and `logout`.

spec/authentication.md. Every configuration advertises the agent method `api-key` (the ACP
registry admits only agents with an agent or terminal method, the scripted default included);
`authenticate` with it answers `{}` when the provider has what it needs (a key from the
standard variable or a stored `acp-bridge-agent login`, or no key needed at all) and a -32000 naming
both ways to log in when not (AUTH-WIRE-002). The terminal method `login` (`type:
"terminal"`, args `login ...`) is advertised only when the client set
`clientCapabilities.auth.terminal` (AUTH-WIRE-001), and is never accepted by `authenticate`.
This module is imported by the light `initialize` path: no pydantic here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.errors import AuthRequired, InvalidParams

__all__ = [
    "AGENT_METHOD_ID",
    "TERMINAL_METHOD_ID",
    "AuthGate",
    "AuthOffer",
    "auth_methods",
    "auth_required",
    "check_authenticate",
    "offer_for",
    "terminal_auth_enabled",
]

AGENT_METHOD_ID = "api-key"
TERMINAL_METHOD_ID = "login"


@dataclass(frozen=True, slots=True)
class AuthOffer:
    """How the provider's key is found now, and how the user logs in.

    Attributes:
        provider: the provider kind ("scripted", "openai", ...).
        key_vars: the provider's standard key variables (empty: it needs no key).
        login_args: the arguments of the terminal login (appended to the agent's command).
        missing_now: the key variables still to set, looked up at each call (env, then the
            stored login); None means "use the static list the agent was configured with".
        forget: removes the stored login of this provider (ACP `logout`); None: nothing to do.
    """

    provider: str = "scripted"
    key_vars: tuple[str, ...] = ()
    login_args: tuple[str, ...] = ("login",)
    missing_now: Callable[[], tuple[str, ...]] | None = None
    forget: Callable[[], None] | None = None

    def login_command(self) -> str:
        return "acp-bridge-agent " + " ".join(self.login_args)


def offer_for(offer: AuthOffer | None, missing_key_vars: tuple[str, ...]) -> AuthOffer:
    """`offer`, or one inferred from the missing variables (configurations built in code)."""
    if offer is not None:
        return offer
    if not missing_key_vars:
        return AuthOffer()
    first = missing_key_vars[0].lower()
    kind = next((k for k in ("openai", "anthropic", "gemini") if first.startswith(k)), "model")
    return AuthOffer(provider=kind, key_vars=missing_key_vars)


def terminal_auth_enabled(caps: JsonValue) -> bool:
    """Whether the client set `clientCapabilities.auth.terminal` to true (nothing else counts)."""
    auth = caps.get("auth") if isinstance(caps, dict) else None
    return isinstance(auth, dict) and auth.get("terminal") is True


def auth_methods(offer: AuthOffer, missing: tuple[str, ...], caps: JsonValue) -> list[JsonObject]:
    """The `authMethods` of the `initialize` response (AUTH-WIRE-001, AUTH-SCRIPTED-001)."""
    if not offer.key_vars:
        description = (
            "The scripted model needs no key, so there is nothing to log in to: authenticate "
            "succeeds. For a real model start acp-bridge with --provider openai, anthropic or "
            "gemini."
        )
    else:
        names = " or ".join(offer.key_vars)
        state = "No key is set yet. " if missing else "A key is set. "
        description = (
            f"{state}The {offer.provider} provider reads its key from {names}; set it in the "
            f"environment that launches acp-bridge, or run `{offer.login_command()}` in a "
            "terminal once."
        )
    methods: list[JsonObject] = [
        {"id": AGENT_METHOD_ID, "name": "API key", "description": description}
    ]
    if terminal_auth_enabled(caps):
        methods.append(
            {
                "id": TERMINAL_METHOD_ID,
                "name": "Log in with an API key",
                "description": "Pick the provider, paste its API key (hidden), test it and "
                "store it for this user.",
                "type": "terminal",
                "args": list(offer.login_args),
            }
        )
    return methods


def auth_required(offer: AuthOffer, missing: tuple[str, ...]) -> AuthRequired:
    """The -32000 for a missing key, naming both ways to log in (AUTH-WIRE-002)."""
    names = " or ".join(missing)
    return AuthRequired(
        f"Authentication required: the {offer.provider} provider needs an API key. Set {names} "
        "in the environment that launches acp-bridge and restart it, or run "
        f'`{offer.login_command()}` in a terminal (the editor\'s "Log in with an API key" '
        "method does that)",
        {
            "reason": "auth_required",
            "env": list(missing),
            "login": offer.login_command(),
            "authMethods": [AGENT_METHOD_ID, TERMINAL_METHOD_ID],
        },
    )


def check_authenticate(method_id: str, offer: AuthOffer, missing: tuple[str, ...]) -> None:
    """Raises the precise error for `authenticate(method_id)`; returns when it succeeds."""
    if method_id == TERMINAL_METHOD_ID:
        raise InvalidParams.at(
            "methodId",
            f"{TERMINAL_METHOD_ID!r} is a terminal method: the client runs "
            f"`{offer.login_command()}` in a terminal instead of calling authenticate",
        )
    if method_id != AGENT_METHOD_ID:
        raise InvalidParams.at(
            "methodId",
            f"Unknown authentication method; this agent offers {AGENT_METHOD_ID!r} (and "
            f"{TERMINAL_METHOD_ID!r}, run in a terminal, for clients with terminal auth)",
            got=method_id,
        )
    if missing:
        raise auth_required(offer, missing)


class AuthGate:
    """The agent's view of authentication on one connection: looks the key up at each use."""

    def __init__(self, offer: AuthOffer | None, missing_key_vars: tuple[str, ...]) -> None:
        self.offer = offer_for(offer, missing_key_vars)
        self._static = missing_key_vars

    def missing(self) -> tuple[str, ...]:
        """The key variables still to set, looked up now (a login may have happened since)."""
        lookup = self.offer.missing_now
        return lookup() if lookup is not None else self._static

    def require(self) -> None:
        """Raises the -32000 when the provider needs a key and none is found."""
        if missing := self.missing():
            raise auth_required(self.offer, missing)

    def authenticate(self, method_id: str) -> None:
        check_authenticate(method_id, self.offer, self.missing())

    def logout(self) -> None:
        """Forgets the stored login (a key from the environment stays: it always wins)."""
        if self.offer.forget is not None:
            self.offer.forget()
