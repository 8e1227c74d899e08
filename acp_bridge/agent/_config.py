"""What the composition root hands the agent: the model, where state lives, and policies."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from acp_bridge.agent._auth import AuthOffer
from acp_bridge.mcp import McpLimits
from acp_bridge.providers import ModelInfo, ModelProvider
from acp_bridge.turn import RetryPolicy

if TYPE_CHECKING:
    from acp_bridge.tools import ToolRegistry

__all__ = ["COMPACT_COMMAND", "AgentConfig", "SlashCommand"]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A command offered to the editor through `available_commands_update`."""

    name: str
    description: str


COMPACT_COMMAND = SlashCommand(
    "compact",
    "Summarise the older part of the conversation now, so the session keeps fitting the "
    "model's context window",
)
"""`/compact` (COMPACT-007), offered for every provider: defined with the configuration so
building it loads nothing of compaction (cold start)."""


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """Everything the agent needs, already resolved (flags, environment, config file).

    Attributes:
        provider: the model, one instance for the whole connection.
        models: the model ids offered in the `model` config option; the first is the default.
        missing_key_vars: when non-empty, the provider needs an API key from one of these
            environment variables and none is set: session/new and session/prompt answer
            -32000 (auth required) naming them.
        auth: how the key is looked up now and how the user logs in (spec/authentication.md);
            None infers it from `missing_key_vars` (the key is then not looked up again).
        state_dir: where the effect ledger (and sessions) live.
        system_prompt: the base system instruction sent with every model call (the user's
            `system_prompt` replaces the built-in one); `append_system_prompt` follows it,
            then the workspace and the project instructions (spec/daily-use.md#instr-001).
        retry_policy: the turn engine's retry policy.
        commands: slash commands offered after session/new.
        tools: the tools offered to the model; None: `default_tools()`, built with the
            prompt turns (after the first session is answered: cold start).
        context_window: the model's context window in tokens (the `context_window`
            setting); None: the known-models table, else a default (usage_update.size).
        model_info: what the user declared of each model (the `model_info` setting): what
            it takes (images, audio) and its context window (MODEL-INFO-001).
        mcp_limits: the bounds of the sessions' MCP servers (spec/mcp.md).
        levels: the reasoning efforts offered (REASON-001); empty: the option is not offered.
        reasoning_effort: the sessions' default effort (one of `levels`).
        list_models: fetches the provider's model list for the picker (PICK-001), with what
            it says of each model where it says it (USAGE-005); None: only `models` are offered.
        merge_chunks: chunks queued behind a slow editor are merged (the `merge_chunks`
            setting); False writes each as its own update (MEM-004 bounds the queue either way).
        compaction_threshold / compaction_keep_turns: compaction before a model call once
            the context in use reaches this fraction of the window (0: only on an
            overflow), keeping this many recent turns whole (COMPACT-008).
    """

    provider: ModelProvider
    models: tuple[str, ...]
    state_dir: Path
    missing_key_vars: tuple[str, ...] = ()
    auth: AuthOffer | None = None
    system_prompt: str | None = None
    retry_policy: RetryPolicy = field(default_factory=RetryPolicy)
    commands: tuple[SlashCommand, ...] = ()
    tools: ToolRegistry | None = None
    max_model_calls: int = 32
    context_window: int | None = None
    model_info: Mapping[str, ModelInfo] = field(default_factory=dict)
    mcp_limits: McpLimits = field(default_factory=McpLimits)
    append_system_prompt: str | None = None
    levels: tuple[str, ...] = ()
    reasoning_effort: str = "default"
    list_models: Callable[[], Awaitable[Sequence[str] | Mapping[str, ModelInfo]]] | None = None
    merge_chunks: bool = True
    compaction_threshold: float = 0.8
    compaction_keep_turns: int = 2
