"""Runs the real bridge (`acp_bridge.agent.serve`) in-process over a memory pair."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from editor import ScriptedEditor, connect
from rawpeer import MemoryLink

from acp_bridge.agent import AgentConfig, SlashCommand, serve
from acp_bridge.providers import ModelProvider, ModelRequest, StreamEvent
from acp_bridge.providers.scripted import ScriptedProvider, builtin_scripts
from acp_bridge.turn import RetryPolicy

# Back-off waits are real waits in the engine; tests keep them tiny but non-zero paths.
FAST_RETRIES = RetryPolicy(base_delay=0.001, max_delay=0.002, max_retry_after=5.0)


class RecordingProvider:
    """A scripted provider (`ScriptedProvider(None)` by default), remembering every request
    it was asked to stream."""

    def __init__(self, inner: ScriptedProvider | None = None) -> None:
        self.inner = inner or ScriptedProvider(None)
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        return self.inner.stream(request)


def schema_validator() -> Any:
    from acp_schema import AgentWireValidator

    return AgentWireValidator(strict_roots=True)


def scripted_config(
    state_dir: Path, provider: ModelProvider | None = None, **extra: Any
) -> AgentConfig:
    scripts = builtin_scripts()
    options: dict[str, Any] = {
        "provider": provider or ScriptedProvider(None),
        "models": ("scripted",),
        "state_dir": state_dir,
        "retry_policy": FAST_RETRIES,
        "commands": tuple(SlashCommand(n, s.description) for n, s in sorted(scripts.items())),
    }
    options.update(extra)
    return AgentConfig(**options)


@contextlib.asynccontextmanager
async def running_bridge(
    config: AgentConfig, *, validate: bool = True, **editor_options: Any
) -> AsyncIterator[ScriptedEditor]:
    """The bridge serving on one end of a memory pair, a scripted editor on the other."""
    async with MemoryLink() as link, anyio.create_task_group() as tg:
        tg.start_soon(serve, link.agent_side, config)
        validator = schema_validator() if validate else None
        async with connect(link.client_side, validator=validator, **editor_options) as editor:
            yield editor
        tg.cancel_scope.cancel()
