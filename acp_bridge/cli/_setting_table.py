"""The one table of settings: config-file key, flag, environment variable, type, default, meaning.

Everything else is derived from it: what `resolve` accepts from each layer, the checks of each
value, the "allowed keys" of an unknown-key error, and the tables in README.md and
spec/configuration.md (rendered by `render_markdown`; tests/cli keeps the documents equal to
it, CONF-DOC-001).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SETTINGS", "Setting", "render_markdown", "setting"]


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting. `kind`: str, path, list, int, float, fraction (0..1), choice, table (config
    file only); `minimum` for numbers."""

    name: str
    flag: str | None
    env: str | None
    kind: str
    default: str
    meaning: str
    minimum: float | None = None
    choices: tuple[str, ...] = ()

    def names(self) -> str:
        """How the user sets it: `--flag` / `ENV` / config key `name`."""
        ways = [w for w in (self.flag, self.env) if w]
        return " / ".join([*ways, f"config key {self.name}"])


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "provider",
        "--provider",
        "ACP_BRIDGE_PROVIDER",
        "choice",
        "`scripted`",
        "the model provider; `--base-url` without it means `openai`",
        choices=("scripted", "openai", "anthropic", "gemini"),
    ),
    Setting(
        "model", "--model", "ACP_BRIDGE_MODEL", "str", "the provider's default", "the model id"
    ),
    Setting(
        "models",
        "--models",
        "ACP_BRIDGE_MODELS",
        "list",
        "the model alone",
        "the models offered in the editor's model picker (comma-separated, or a TOML list)",
    ),
    Setting(
        "base_url",
        "--base-url",
        "ACP_BRIDGE_BASE_URL",
        "str",
        "the provider's public API",
        "an OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter), "
        "with its `/v1`",
    ),
    Setting(
        "script",
        "--script",
        "ACP_BRIDGE_SCRIPT",
        "str",
        "none",
        "play your own scripted stream (format: spec/scripted-stream.md)",
    ),
    Setting(
        "state_dir",
        "--state-dir",
        "ACP_BRIDGE_STATE_DIR",
        "path",
        "`~/.local/state/acp-bridge`",
        "where the effect ledger and sessions live",
    ),
    Setting(
        "inject_fault",
        "--inject-fault",
        "ACP_BRIDGE_INJECT_FAULT",
        "str",
        "none",
        "break the real provider's stream on purpose: `after-events:5`, `in-tool-call`, "
        "`before-finish`, with `@attempts=N`",
    ),
    Setting(
        "trace",
        "--trace",
        "ACP_BRIDGE_TRACE",
        "str",
        "none",
        "append every JSON-RPC message and provider event as NDJSON, secrets redacted",
    ),
    Setting(
        "log_level",
        "--log-level",
        "ACP_BRIDGE_LOG_LEVEL",
        "choice",
        "`warning`",
        "stderr log level",
        choices=("debug", "info", "warning", "error"),
    ),
    Setting(
        "system_prompt",
        "--system-prompt",
        "ACP_BRIDGE_SYSTEM_PROMPT",
        "str",
        "a short coding-agent instruction",
        "the system instruction sent to the model (replaces the built-in one)",
    ),
    Setting(
        "append_system_prompt",
        "--append-system-prompt",
        "ACP_BRIDGE_APPEND_SYSTEM_PROMPT",
        "str",
        "none",
        "text added after the system instruction; the workspace's AGENTS.md, CLAUDE.md and "
        "GEMINI.md (and those of the additional directories) follow it, size-bounded",
    ),
    Setting(
        "max_line_bytes",
        "--max-line-bytes",
        "ACP_BRIDGE_MAX_LINE_BYTES",
        "int",
        "`52428800` (50 MiB)",
        "the largest accepted message, in bytes",
        minimum=1024,
    ),
    Setting(
        "idle_timeout",
        None,
        "ACP_BRIDGE_IDLE_TIMEOUT",
        "float",
        "`60`",
        "seconds without a byte from the provider, once the model's first token came, "
        "before its stream counts as broken",
        minimum=0.001,
    ),
    Setting(
        "first_token_timeout",
        None,
        "ACP_BRIDGE_FIRST_TOKEN_TIMEOUT",
        "float",
        "`120`",
        "seconds from a request to the model's first token; until then the idle timeout "
        "does not apply (raise it for a model that processes long prompts slowly)",
        minimum=0.001,
    ),
    Setting(
        "max_attempts",
        None,
        "ACP_BRIDGE_MAX_ATTEMPTS",
        "int",
        "`4`",
        "attempts per model call before the turn gives up",
        minimum=1,
    ),
    Setting(
        "max_tokens",
        None,
        "ACP_BRIDGE_MAX_TOKENS",
        "int",
        "`8192`",
        "output token limit per model call",
        minimum=1,
    ),
    Setting(
        "max_output_bytes",
        None,
        "ACP_BRIDGE_MAX_OUTPUT_BYTES",
        "int",
        "`67108864`",
        "most bytes one model call may stream before it is stopped (64 MiB)",
        minimum=1,
    ),
    Setting(
        "max_wait",
        "--max-wait",
        "ACP_BRIDGE_MAX_WAIT",
        "float",
        "`180`",
        "how long a model call may wait without progress, retries included, before the "
        "turn fails naming what to check (0: no limit)",
        minimum=0,
    ),
    Setting(
        "stall_notice_after",
        None,
        "ACP_BRIDGE_STALL_NOTICE_AFTER",
        "float",
        "`15`",
        "seconds without progress before the user is told the model is still waiting (0: never)",
        minimum=0,
    ),
    Setting(
        "context_window",
        "--context-window",
        "ACP_BRIDGE_CONTEXT_WINDOW",
        "int",
        "known models, else `128000`",
        "the model's context window in tokens, for `usage_update`",
        minimum=1,
    ),
    Setting(
        "model_info",
        None,
        None,
        "table",
        "the known-models tables",
        'what a model takes and its window, config file only: `[model_info."ID"]` with '
        '`input = ["text"]` (text only), `["text", "image"]` or `["text", "image", "audio"]` '
        "and `context_window = N`; wins over the tables and the provider's metadata",
    ),
    Setting(
        "reasoning_effort",
        "--reasoning-effort",
        "ACP_BRIDGE_REASONING_EFFORT",
        "choice",
        "`default`",
        "the sessions' default reasoning effort (OpenAI `reasoning_effort`, Anthropic and "
        "Gemini thinking budgets of 2048/8192/24576 tokens); `default` sends none",
        choices=("default", "low", "medium", "high"),  # providers.REASONING_LEVELS
    ),
    Setting(
        "fetch_models",
        "--fetch-models",
        "ACP_BRIDGE_FETCH_MODELS",
        "choice",
        "`yes`",
        "`yes`: the model picker also offers the provider's own model list, and usage its "
        "windows, fetched once per connection after the first session opens (configured "
        "models on any failure); `no`: no request beyond the model calls",
        choices=("no", "yes"),
    ),
    Setting(
        "merge_chunks",
        "--merge-chunks",
        "ACP_BRIDGE_MERGE_CHUNKS",
        "choice",
        "`yes`",
        "`yes`: text chunks that queue behind a slow editor are written as one chunk of the "
        "same message; `no`: every chunk is its own `session/update`",
        choices=("yes", "no"),
    ),
    Setting(
        "compaction_threshold",
        "--compaction-threshold",
        "ACP_BRIDGE_COMPACTION_THRESHOLD",
        "fraction",
        "`0.8`",
        "compact the conversation before a model call once the context in use reaches this "
        "fraction of the window (0: only when the provider says it is too long)",
        minimum=0,
    ),
    Setting(
        "compaction_keep_turns",
        "--compaction-keep-turns",
        "ACP_BRIDGE_COMPACTION_KEEP_TURNS",
        "int",
        "`2`",
        "how many recent prompt turns a compaction keeps whole",
        minimum=1,
    ),
)

_BY_NAME = {s.name: s for s in SETTINGS}


def setting(name: str) -> Setting:
    return _BY_NAME[name]


def render_markdown() -> str:
    """The settings table as it appears in README.md and spec/configuration.md."""
    lines = [
        "| config key | flag | environment | default | meaning |",
        "|---|---|---|---|---|",
    ]
    for s in SETTINGS:
        flag = f"`{s.flag}`" if s.flag else ""
        if s.flag and s.choices:
            flag = f"`{s.flag} {'|'.join(s.choices)}`".replace("|", "\\|")
        env = f"`{s.env}`" if s.env else ""
        lines.append(f"| `{s.name}` | {flag} | {env} | {s.default} | {s.meaning} |")
    return "\n".join(lines) + "\n"
