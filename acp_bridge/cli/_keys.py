"""The provider's API key as the bridge finds it: the standard variable, else the stored login.

`auth_offer` tells the agent how to look the key up again at each use and how the user logs
in, so a login done in a terminal while the editor is connected is picked up at the next
`authenticate`, `session/new` or prompt; `RekeyingProvider` rebuilds the HTTP provider when
the key it finds has changed (spec/authentication.md, AUTH-KEY-001).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from acp_bridge.cli._credentials import credentials_path, forget_keys, resolve_key
from acp_bridge.cli._settings import BridgeSettings

if TYPE_CHECKING:
    from acp_bridge.agent._auth import AuthOffer
    from acp_bridge.providers import ModelProvider, ModelRequest, StreamEvent

__all__ = ["RekeyingProvider", "auth_offer", "login_args", "missing_key_vars", "provider_key"]


def _key_vars(provider: str) -> tuple[str, ...]:
    if provider == "scripted":
        return ()
    from acp_bridge.providers import _registry as registry

    return registry.api_key_env_vars(provider)


def provider_key(
    settings: BridgeSettings,
    environ: Mapping[str, str] | None = None,
    path: Path | None = None,
) -> tuple[str | None, str]:
    """(key, where from): the standard variable wins over the stored login."""
    if settings.provider == "scripted":
        return None, "none"
    return resolve_key(settings.provider, _key_vars(settings.provider), environ, path)


def _needs_key(settings: BridgeSettings) -> bool:
    if settings.provider == "scripted":
        return False
    from acp_bridge.providers import _registry as registry

    return registry.needs_api_key(
        registry.ProviderSettings(
            registry.ProviderKind(settings.provider), base_url=settings.base_url
        )
    )


def missing_key_vars(
    settings: BridgeSettings, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """The variables to set when the provider needs a key and none is found (env or login)."""
    if not _needs_key(settings) or provider_key(settings, environ)[0]:
        return ()
    return _key_vars(settings.provider)


def login_args(settings: BridgeSettings) -> tuple[str, ...]:
    """The arguments of the terminal login for this configuration."""
    args: tuple[str, ...] = ("login",)
    if settings.provider != "scripted":
        args += ("--provider", settings.provider)
        if settings.base_url:
            args += ("--base-url", settings.base_url)
    return args


def auth_offer(settings: BridgeSettings) -> AuthOffer:
    from acp_bridge.agent._auth import AuthOffer

    def forget() -> None:
        kind = None if settings.provider == "scripted" else settings.provider
        forget_keys(credentials_path(), kind)

    return AuthOffer(
        provider=settings.provider,
        key_vars=_key_vars(settings.provider),
        login_args=login_args(settings),
        missing_now=lambda: missing_key_vars(settings),
        forget=forget,
    )


class RekeyingProvider:
    """A provider built with the key found now, rebuilt when that key changes (a login or a
    logout since the last model call). Implements `ModelProvider`."""

    def __init__(
        self, build: Callable[[str | None], ModelProvider], lookup: Callable[[], str | None]
    ) -> None:
        self._build = build
        self._lookup = lookup
        self._key = lookup()
        self._inner = build(self._key)

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def model(self) -> str:
        return self._inner.model

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        key = self._lookup()
        if key != self._key:
            self._key, self._inner = key, self._build(key)
        return self._inner.stream(request)
