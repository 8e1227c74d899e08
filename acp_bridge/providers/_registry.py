"""Which provider to build from settings: kinds, defaults, API keys, and the factory.

The composition root (CLI flags over environment over config file) fills a
`ProviderSettings`; `create_provider` turns it into a `ModelProvider`. API keys come from
the settings or the ecosystem's standard variables (`api_key_env_vars`); a local server
(loopback or private address) needs none. The scripted kind is imported lazily so that
the HTTP stack and the scripted player stay independent.
"""

from __future__ import annotations

import enum
import ipaddress
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from acp_bridge._json import JsonValue

if TYPE_CHECKING:
    from acp_bridge.providers._base import ModelProvider
    from acp_bridge.providers._faults import FaultPlan

# The HTTP stack (httpx) is imported only when an HTTP provider is built, and the stream
# vocabulary and fault injection only when any provider is: the scripted default and the
# `initialize` handshake (which reads `default_model`) must not pay for them (cold start).
TraceSink = Callable[[dict[str, JsonValue]], None]

__all__ = [
    "ProviderKind",
    "ProviderSettings",
    "api_key_env_vars",
    "create_provider",
    "default_base_url",
    "default_model",
    "is_local_url",
    "missing_api_key_message",
    "needs_api_key",
    "resolve_api_key",
    "settings_for",
]


class ProviderKind(enum.StrEnum):
    """The `--provider` choices."""

    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    GEMINI = "gemini"
    SCRIPTED = "scripted"


_HTTP_KINDS = frozenset({ProviderKind.OPENAI, ProviderKind.ANTHROPIC, ProviderKind.GEMINI})
# Mirrors each adapter's DEFAULT_BASE_URL (a test keeps them equal) without importing httpx.
_DEFAULT_BASE_URLS: Mapping[ProviderKind, str] = {
    ProviderKind.OPENAI: "https://api.openai.com/v1",
    ProviderKind.ANTHROPIC: "https://api.anthropic.com",
    ProviderKind.GEMINI: "https://generativelanguage.googleapis.com/v1beta",
}
_API_KEY_ENV_VARS: Mapping[ProviderKind, tuple[str, ...]] = {
    ProviderKind.OPENAI: ("OPENAI_API_KEY",),
    ProviderKind.ANTHROPIC: ("ANTHROPIC_API_KEY",),
    ProviderKind.GEMINI: ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ProviderKind.SCRIPTED: (),
}
_DEFAULT_MODELS: Mapping[ProviderKind, str] = {
    ProviderKind.OPENAI: "gpt-4.1",
    ProviderKind.ANTHROPIC: "claude-sonnet-4-5",
    ProviderKind.GEMINI: "gemini-2.5-flash",
    ProviderKind.SCRIPTED: "scripted",
}
_LOCAL_NAMES = ("localhost", "host.docker.internal")
_LOCAL_SUFFIXES = (".localhost", ".local")


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """Everything needed to build one provider. None (or an empty model) means "the kind's
    default".

    `faults` wraps the provider in a `FaultInjectingProvider`; `script_path` is read by the
    scripted kind only. The API key is kept out of `repr`.
    """

    kind: ProviderKind
    model: str = ""
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    idle_timeout: float = 120.0
    first_token_timeout: float | None = 300.0
    connect_timeout: float = 10.0
    max_tokens: int | None = None
    max_output_bytes: int = 64 * 1024 * 1024
    thinking_budget: int | None = None
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    script_path: str | None = None
    faults: FaultPlan | None = None
    trace: TraceSink | None = field(default=None, repr=False, compare=False)


def api_key_env_vars(kind: ProviderKind | str) -> tuple[str, ...]:
    """The standard variables a kind's key is read from, in order of precedence."""
    return _API_KEY_ENV_VARS[ProviderKind(kind)]


def default_model(kind: ProviderKind | str) -> str:
    return _DEFAULT_MODELS[ProviderKind(kind)]


def default_base_url(kind: ProviderKind | str) -> str | None:
    """The public API root of an HTTP kind; None for the scripted kind."""
    return _DEFAULT_BASE_URLS.get(ProviderKind(kind))


def is_local_url(url: str) -> bool:
    """Whether `url` points at this machine or a private network (no key expected there)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_unspecified


def needs_api_key(settings: ProviderSettings) -> bool:
    """Whether the provider cannot work without a key (cloud endpoints)."""
    if settings.kind is ProviderKind.SCRIPTED:
        return False
    return not (settings.base_url and is_local_url(settings.base_url))


def resolve_api_key(
    settings: ProviderSettings, environ: Mapping[str, str] | None = None
) -> str | None:
    """The explicit key, else the first non-empty standard variable, else None."""
    if settings.api_key:
        return settings.api_key
    env = os.environ if environ is None else environ
    for name in api_key_env_vars(settings.kind):
        if value := env.get(name, "").strip():
            return value
    return None


def missing_api_key_message(kind: ProviderKind | str) -> str:
    """What to tell the user when a key is needed and absent (never contains a key)."""
    names = " or ".join(api_key_env_vars(kind))
    return f"the {ProviderKind(kind).value} provider needs an API key: set {names}"


def settings_for(
    *,
    kind: ProviderKind | str,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    idle_timeout: float = 120.0,
    first_token_timeout: float | None = 300.0,
    connect_timeout: float = 10.0,
    max_tokens: int | None = None,
    max_output_bytes: int = 64 * 1024 * 1024,
    thinking_budget: int | None = None,
    extra_headers: Mapping[str, str] | None = None,
    script_path: str | None = None,
    faults: FaultPlan | None = None,
    trace: TraceSink | None = None,
    environ: Mapping[str, str] | None = None,
) -> ProviderSettings:
    """Resolved settings: the kind's default model, and the API key from the environment.

    Raises ValueError for an unknown kind.
    """
    provider_kind = ProviderKind(kind)
    draft = ProviderSettings(provider_kind, api_key=api_key)
    return ProviderSettings(
        kind=provider_kind,
        model=model or default_model(provider_kind),
        base_url=base_url,
        api_key=resolve_api_key(draft, environ),
        idle_timeout=idle_timeout,
        first_token_timeout=first_token_timeout,
        connect_timeout=connect_timeout,
        max_tokens=max_tokens,
        max_output_bytes=max_output_bytes,
        thinking_budget=thinking_budget,
        extra_headers=dict(extra_headers or {}),
        script_path=script_path,
        faults=faults,
        trace=trace,
    )


def create_provider(
    settings: ProviderSettings, environ: Mapping[str, str] | None = None
) -> ModelProvider:
    """Build the provider `settings` describe (fault injection wrapped around it if asked).

    A missing key is not an error here: the agent reports it as auth-required on use.
    """
    provider: ModelProvider
    model = settings.model or default_model(settings.kind)
    if settings.kind not in _HTTP_KINDS:
        provider = _create_scripted(settings, model)
    else:
        from acp_bridge.providers import http as stack

        classes: Mapping[ProviderKind, type[stack.HttpModelProvider]] = {
            ProviderKind.OPENAI: stack.OpenAIProvider,
            ProviderKind.ANTHROPIC: stack.AnthropicProvider,
            ProviderKind.GEMINI: stack.GeminiProvider,
        }
        provider = classes[settings.kind](
            stack.HttpProviderOptions(
                model=model,
                base_url=settings.base_url,
                api_key=resolve_api_key(settings, environ),
                idle_timeout=settings.idle_timeout,
                first_token_timeout=settings.first_token_timeout,
                connect_timeout=settings.connect_timeout,
                extra_headers=settings.extra_headers,
                max_tokens=settings.max_tokens,
                max_output_bytes=settings.max_output_bytes,
                thinking_budget=settings.thinking_budget,
                trace=settings.trace,
            )
        )
    if settings.faults is not None:
        from acp_bridge.providers._faults import FaultInjectingProvider

        provider = FaultInjectingProvider(provider, settings.faults)
    return provider


@dataclass(frozen=True, slots=True)
class _ScriptedView:
    """What `create_scripted_provider` reads (its `ScriptedSettings` protocol)."""

    model: str
    script_path: str | None


def _create_scripted(settings: ProviderSettings, model: str) -> ModelProvider:
    # Imported here: the scripted player is another layer's module and optional at import.
    from acp_bridge.providers.scripted import create_scripted_provider

    return create_scripted_provider(_ScriptedView(model=model, script_path=settings.script_path))
