"""Composition root: settings -> provider, tools and policies -> `agent.serve` on stdio."""

from __future__ import annotations

import logging
import os
import sys

import anyio

from acp_bridge.agent import AgentConfig, SlashCommand, serve
from acp_bridge.cli._settings import BridgeSettings
from acp_bridge.cli._trace import TraceWriter
from acp_bridge.providers import ModelProvider
from acp_bridge.turn import RetryPolicy
from acp_bridge.wire import open_stdio

__all__ = ["build_config", "run"]

_log = logging.getLogger("acp_bridge.cli")

DEFAULT_SYSTEM_PROMPT = (
    "You are a coding agent working in the user's editor through acp-bridge. "
    "Use the tools to read, search and change files and to run commands; "
    "paths are relative to the workspace. Be concise."
)


def _scripted(settings: BridgeSettings) -> tuple[ModelProvider, tuple[SlashCommand, ...]]:
    from acp_bridge.providers.scripted import ScriptedProvider, load_script

    default = load_script(settings.script) if settings.script else None
    provider = ScriptedProvider(default, model=settings.model or "scripted")
    commands = tuple(
        SlashCommand(name, script.description)
        for name, script in provider.available_scripts().items()
    )
    return provider, commands


def build_config(settings: BridgeSettings, trace: TraceWriter | None = None) -> AgentConfig:
    """The agent's configuration for these settings (no I/O beyond reading a script file)."""
    commands: tuple[SlashCommand, ...] = ()
    missing: tuple[str, ...] = ()
    if settings.provider == "scripted":
        provider, commands = _scripted(settings)
        model = provider.model
    else:
        from acp_bridge.providers import _registry as registry

        provider_settings = registry.settings_for(
            kind=settings.provider,
            model=settings.model,
            base_url=settings.base_url,
            idle_timeout=settings.idle_timeout,
            first_token_timeout=settings.first_token_timeout,
            max_tokens=settings.max_tokens,
            trace=trace.provider if trace else None,
        )
        if registry.needs_api_key(provider_settings) and not provider_settings.api_key:
            missing = registry.api_key_env_vars(settings.provider)
        provider = registry.create_provider(provider_settings)
        model = provider_settings.model
    if settings.inject_fault:
        from acp_bridge.providers._faults import FaultInjectingProvider, parse_fault_plan

        provider = FaultInjectingProvider(provider, parse_fault_plan(settings.inject_fault))
    models = settings.models or (model,)
    if model not in models:
        models = (model, *models)
    return AgentConfig(
        provider=provider,
        models=models,
        state_dir=settings.state_dir,
        missing_key_vars=missing,
        system_prompt=settings.system_prompt or DEFAULT_SYSTEM_PROMPT,
        retry_policy=RetryPolicy(max_attempts=settings.max_attempts),
        commands=commands,
    )


def run(settings: BridgeSettings) -> int:
    """Serves ACP on stdio until the editor closes stdin. Returns the exit status."""
    trace = TraceWriter(settings.trace, secrets=_known_secrets()) if settings.trace else None
    try:
        config = build_config(settings, trace)
    except Exception as exc:  # a bad script file, a bad fault plan: say so, never a traceback
        print(f"acp-bridge: {exc}", file=sys.stderr)
        return 2

    async def main() -> None:
        async with open_stdio() as transport:
            await serve(
                transport,
                config,
                max_line_bytes=settings.max_line_bytes,
                trace=trace.jsonrpc if trace else None,
            )

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 130
    finally:
        if trace:
            trace.close()
    return 0


def _known_secrets() -> tuple[str, ...]:
    names = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
    return tuple(os.environ[n] for n in names if os.environ.get(n))
