"""Composition root: settings -> provider, tools and policies -> `agent.serve` on stdio."""

from __future__ import annotations

import gc
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from acp_bridge.agent._serve import serve
from acp_bridge.cli._keys import auth_offer, missing_key_vars, provider_key
from acp_bridge.cli._model_list import model_lister
from acp_bridge.cli._settings import BridgeSettings
from acp_bridge.cli._trace import TraceWriter
from acp_bridge.providers import REASONING_LEVELS, prompt_media

if TYPE_CHECKING:
    from acp_bridge.agent._config import AgentConfig
    from acp_bridge.providers._base import ModelProvider
from acp_bridge.wire import ClaimedStdio, open_stdio

__all__ = ["build_config", "missing_key_vars", "run", "trace_error"]

_log = logging.getLogger("acp_bridge.cli")

DEFAULT_SYSTEM_PROMPT = (
    "You are a coding agent working in the user's editor through acp-bridge. "
    "Use the tools to read, search and change files and to run commands; "
    "paths are relative to the workspace. Be concise."
)


def build_config(settings: BridgeSettings, trace: TraceWriter | None = None) -> AgentConfig:
    """The agent's configuration for these settings (no I/O beyond reading a script file)."""
    from acp_bridge.agent import AgentConfig, SlashCommand
    from acp_bridge.agent._config import COMPACT_COMMAND
    from acp_bridge.turn import RetryPolicy

    commands: tuple[SlashCommand, ...] = ()
    list_models = None
    if settings.provider == "scripted":
        from acp_bridge.providers.scripted import ScriptedProvider, load_script

        default = load_script(settings.script) if settings.script else None
        scripted = ScriptedProvider(default, model=settings.model or "scripted")
        commands = tuple(
            SlashCommand(name, script.description)
            for name, script in scripted.available_scripts().items()
        )
        provider: ModelProvider = scripted
        model = scripted.model
    else:
        from acp_bridge.cli._keys import RekeyingProvider
        from acp_bridge.providers import _registry as registry

        def build(key: str | None) -> ModelProvider:
            return registry.create_provider(
                registry.settings_for(
                    kind=settings.provider,
                    model=settings.model,
                    base_url=settings.base_url,
                    api_key=key,
                    idle_timeout=settings.idle_timeout,
                    first_token_timeout=settings.first_token_timeout,
                    max_tokens=settings.max_tokens,
                    max_output_bytes=settings.max_output_bytes,
                    trace=trace.provider if trace else None,
                )
            )

        # The key is looked up at each model call: a login in a terminal needs no restart.
        provider = RekeyingProvider(build, lambda: provider_key(settings)[0])
        model = provider.model
        if settings.fetch_models == "yes":  # PICK-001
            list_models = model_lister(build, lambda: provider_key(settings)[0])
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
        missing_key_vars=missing_key_vars(settings),
        auth=auth_offer(settings),
        system_prompt=settings.system_prompt or DEFAULT_SYSTEM_PROMPT,
        retry_policy=RetryPolicy(
            max_attempts=settings.max_attempts,
            max_wait=settings.max_wait if settings.max_wait > 0 else None,
            stall_notice_after=settings.stall_notice_after
            if settings.stall_notice_after > 0
            else None,
        ),
        context_window=settings.context_window,
        merge_chunks=settings.merge_chunks == "yes",
        model_info=settings.model_info,
        levels=() if settings.provider == "scripted" else REASONING_LEVELS,  # REASON-001
        reasoning_effort=settings.reasoning_effort,
        list_models=list_models,
        append_system_prompt=settings.append_system_prompt,
        commands=(COMPACT_COMMAND, *commands),  # COMPACT-007: /compact for every provider
        compaction_threshold=settings.compaction_threshold,
        compaction_keep_turns=settings.compaction_keep_turns,
    )


def run(settings: BridgeSettings) -> int:
    """Serves ACP on stdio until the editor closes stdin. Returns the exit status."""
    # Claim stdout before anything else runs: from here on, stray output goes to stderr.
    claimed = ClaimedStdio()
    try:
        trace = TraceWriter(settings.trace, secrets=_known_secrets()) if settings.trace else None
    except OSError as exc:
        claimed.release()
        print(f"acp-bridge: {trace_error(settings, exc)}", file=sys.stderr)
        return 2
    # An unusable state directory does not stop serving: initialize and authenticate still
    # work, and the methods that need it answer its precise error (CONF-STATE-001).
    from acp_bridge.agent._state_dir import check_state_dir

    if problem := check_state_dir(settings.state_dir):
        print(f"acp-bridge: {problem.message} ({settings.state_dir})", file=sys.stderr)
    try:
        # Validate what can fail early (a bad script or fault plan) without loading the heavy
        # layers: those load right after `initialize` is answered.
        if settings.script:
            from acp_bridge.providers.scripted import load_script

            load_script(settings.script)
        if settings.inject_fault:
            from acp_bridge.providers._faults import parse_fault_plan

            parse_fault_plan(settings.inject_fault)
        missing = missing_key_vars(settings)
    except Exception as exc:  # say what is wrong, never a traceback
        claimed.release()
        print(f"acp-bridge: {exc}", file=sys.stderr)
        return 2

    async def main() -> None:
        async with open_stdio(claimed) as transport:
            await serve(
                transport,
                lambda: _frozen(lambda: build_config(settings, trace)),
                missing_key_vars=missing,
                auth=auth_offer(settings),
                max_line_bytes=settings.max_line_bytes,
                trace=trace.jsonrpc if trace else None,
                **_media(settings),  # AUDIO-001, PROMPTCAP-001
            )

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 130
    finally:
        claimed.release()
        if trace:
            trace.close()
    return 0


def _media(settings: BridgeSettings) -> dict[str, bool]:
    """`promptCapabilities` image and audio from the settings alone, for an `initialize`
    answered before the config is built: what the configured models take (PROMPTCAP-001)."""
    from acp_bridge.providers._registry import default_model

    models = (settings.model or default_model(settings.provider), *settings.models)
    image, audio = prompt_media(settings.provider, models, settings.model_info)
    return {"image": image, "audio": audio}


def trace_error(settings: BridgeSettings, exc: OSError) -> str:
    """One line for a trace file that cannot be opened (CONF-ERR-005)."""
    where = settings.sources.get("trace", "flag")
    setting = (
        "--trace"
        if where == "flag"
        else "ACP_BRIDGE_TRACE"
        if where == "environment"
        else ("the config key trace")
    )
    reason = exc.strerror or type(exc).__name__
    return (
        f"cannot open the trace file {settings.trace!r} ({setting}): {reason}; give a file "
        "path in an existing, writable folder, or drop the setting"
    )


def _frozen(build: Callable[[], AgentConfig]) -> AgentConfig:
    """Builds the config and loads the agent (right after `initialize` is answered), then
    turns the garbage collector back on, which `main` turned off (STARTUP-003).

    The start path only creates objects that live as long as the process (modules, classes,
    the config): collecting them is wasted work (a sixth of the start's CPU). Once loaded,
    `gc.freeze()` moves them out of the collector's generations, so the collections that a
    stream's many small objects trigger stay cheap (about 20% more chunks per second in
    benchmarks/bench_stream_throughput.py).
    """
    try:
        config = build()
        import acp_bridge.agent._agent  # noqa: F401  (the agent's own modules, frozen too)
        from acp_bridge.cli._code_cache import save_installed

        save_installed()  # STARTUP-008: on a first start, what these loads compiled
        gc.freeze()
        return config
    finally:
        gc.enable()


def _known_secrets() -> tuple[str, ...]:
    names = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
    return tuple(os.environ[n] for n in names if os.environ.get(n))
