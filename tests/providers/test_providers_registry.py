"""The provider registry: kinds, defaults, API keys and the factory."""

from __future__ import annotations

import pytest

from acp_bridge.providers._faults import FaultInjectingProvider, FaultPlan, FaultPoint
from acp_bridge.providers._registry import (
    ProviderKind,
    ProviderSettings,
    api_key_env_vars,
    create_provider,
    default_base_url,
    default_model,
    is_local_url,
    missing_api_key_message,
    needs_api_key,
    resolve_api_key,
    settings_for,
)
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpModelProvider,
    OpenAIProvider,
)


def test_api_key_env_vars() -> None:
    assert api_key_env_vars("openai") == ("OPENAI_API_KEY",)
    assert api_key_env_vars(ProviderKind.ANTHROPIC) == ("ANTHROPIC_API_KEY",)
    assert api_key_env_vars("gemini") == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    assert api_key_env_vars("scripted") == ()
    with pytest.raises(ValueError, match="nope"):
        api_key_env_vars("nope")


@pytest.mark.requirement("PROV-LOCAL-001")
@pytest.mark.parametrize(
    ("kind", "base_url", "needed"),
    [
        ("openai", None, True),
        ("openai", "https://openrouter.ai/api/v1", True),
        ("openai", "http://127.0.0.1:11434/v1", False),
        ("openai", "http://localhost:8080/v1", False),
        ("openai", "http://[::1]:8000/v1", False),
        ("openai", "http://192.168.1.20:1234/v1", False),
        ("anthropic", None, True),
        ("anthropic", "http://127.0.0.1:8080", False),
        ("gemini", None, True),
        ("scripted", None, False),
    ],
)
def test_needs_api_key(kind: str, base_url: str | None, needed: bool) -> None:
    assert needs_api_key(ProviderSettings(ProviderKind(kind), base_url=base_url)) is needed


def test_is_local_url() -> None:
    assert is_local_url("http://gpu.local:8000/v1")
    assert not is_local_url("https://api.openai.com/v1")
    assert not is_local_url("not a url")


def test_resolve_api_key_precedence() -> None:
    gemini = ProviderSettings(ProviderKind.GEMINI)
    env = {"GEMINI_API_KEY": " ", "GOOGLE_API_KEY": "g-key"}
    assert resolve_api_key(gemini, env) == "g-key"
    assert resolve_api_key(gemini, {**env, "GEMINI_API_KEY": "gem"}) == "gem"
    explicit = ProviderSettings(ProviderKind.GEMINI, api_key="flag")
    assert resolve_api_key(explicit, {"GEMINI_API_KEY": "gem"}) == "flag"
    assert resolve_api_key(ProviderSettings(ProviderKind.OPENAI), {}) is None


def test_missing_api_key_message_names_the_variables() -> None:
    message = missing_api_key_message("gemini")
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in message


@pytest.mark.parametrize(
    ("kind", "cls", "base_url"),
    [
        ("openai", OpenAIProvider, "https://api.openai.com/v1"),
        ("anthropic", AnthropicProvider, "https://api.anthropic.com"),
        ("gemini", GeminiProvider, "https://generativelanguage.googleapis.com/v1beta"),
    ],
)
def test_create_http_providers(kind: str, cls: type[HttpModelProvider], base_url: str) -> None:
    env = {name: "env-SECRET" for name in api_key_env_vars(kind)}
    provider = create_provider(ProviderSettings(ProviderKind(kind)), env)
    assert isinstance(provider, cls)
    assert (provider.name, provider.model, provider.base_url) == (
        kind,
        default_model(kind),
        base_url,
    )
    assert default_base_url(kind) == base_url
    assert provider.options.api_key == "env-SECRET"
    assert "env-SECRET" not in repr(provider.options)


@pytest.mark.requirement("PROV-SECRET-001")
def test_settings_repr_hides_the_key() -> None:
    settings = ProviderSettings(ProviderKind.OPENAI, api_key="sk-SECRET")
    assert "sk-SECRET" not in repr(settings)


def test_create_with_overrides_and_faults() -> None:
    settings = ProviderSettings(
        ProviderKind.OPENAI,
        model="qwen3",
        base_url="http://127.0.0.1:11434/v1",
        idle_timeout=5.0,
        first_token_timeout=None,
        max_tokens=100,
        faults=FaultPlan(FaultPoint.IN_TOOL_CALL),
    )
    provider = create_provider(settings, {})
    assert isinstance(provider, FaultInjectingProvider)
    inner = provider.inner
    assert isinstance(inner, OpenAIProvider)
    assert (inner.model, inner.base_url, inner.options.api_key) == (
        "qwen3",
        "http://127.0.0.1:11434/v1",
        None,
    )
    assert (
        inner.options.idle_timeout,
        inner.options.first_token_timeout,
        inner.options.max_tokens,
    ) == (5.0, None, 100)


def test_create_scripted_provider_lazily() -> None:
    provider = create_provider(ProviderSettings(ProviderKind.SCRIPTED), {})
    assert (provider.name, provider.model) == ("scripted", "scripted")
    assert default_base_url("scripted") is None


@pytest.mark.requirement("PROV-LOCAL-001")
def test_settings_for_resolves_model_and_key() -> None:
    settings = settings_for(kind="anthropic", environ={"ANTHROPIC_API_KEY": "ak"}, max_tokens=5)
    assert (settings.kind, settings.model, settings.api_key, settings.max_tokens) == (
        ProviderKind.ANTHROPIC,
        "claude-sonnet-4-5",
        "ak",
        5,
    )
    local = settings_for(
        kind="openai", model="llama3", base_url="http://127.0.0.1:8080/v1", environ={}
    )
    assert (local.model, local.api_key, needs_api_key(local)) == ("llama3", None, False)
    with pytest.raises(ValueError, match="bogus"):
        settings_for(kind="bogus")


def test_default_base_urls_match_the_adapters_without_importing_httpx() -> None:
    import subprocess
    import sys

    from acp_bridge.providers import http
    from acp_bridge.providers._registry import default_base_url

    for kind, cls in (
        ("openai", http.OpenAIProvider),
        ("anthropic", http.AnthropicProvider),
        ("gemini", http.GeminiProvider),
    ):
        assert default_base_url(kind) == cls.DEFAULT_BASE_URL
    probe = (
        "import sys, acp_bridge.providers._registry as r; "
        "r.api_key_env_vars('openai'); print('httpx' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
