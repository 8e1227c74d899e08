"""Resolving the bridge's settings: command-line flags over environment over config file.

The config file is TOML (`--config FILE`, default `$XDG_CONFIG_HOME/acp-bridge/config.toml`);
a missing default file is fine, a missing explicit one is an error. API keys are read only
from the providers' standard environment variables, never from flags or the config file, so
they never land in shell history or a committed file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PROVIDER_KINDS", "BridgeSettings", "SettingsError", "default_config_path", "resolve"]

PROVIDER_KINDS = ("scripted", "openai", "anthropic", "gemini")

_ENV = {
    "provider": "ACP_BRIDGE_PROVIDER",
    "model": "ACP_BRIDGE_MODEL",
    "base_url": "ACP_BRIDGE_BASE_URL",
    "script": "ACP_BRIDGE_SCRIPT",
    "state_dir": "ACP_BRIDGE_STATE_DIR",
    "trace": "ACP_BRIDGE_TRACE",
    "log_level": "ACP_BRIDGE_LOG_LEVEL",
    "inject_fault": "ACP_BRIDGE_INJECT_FAULT",
    "max_wait": "ACP_BRIDGE_MAX_WAIT",
    "context_window": "ACP_BRIDGE_CONTEXT_WINDOW",
}
_FILE_KEYS = frozenset(
    {
        *_ENV,
        "models",
        "system_prompt",
        "max_line_bytes",
        "idle_timeout",
        "first_token_timeout",
        "max_attempts",
        "max_tokens",
        "stall_notice_after",
    }
)


_INTS = frozenset({"max_line_bytes", "max_attempts", "max_tokens", "context_window"})
_FLOATS = frozenset({"idle_timeout", "first_token_timeout", "max_wait", "stall_notice_after"})


class SettingsError(Exception):
    """A setting is missing, unknown or malformed; the message says which and where."""


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value and Path(value).is_absolute() else Path.home() / fallback


def default_config_path() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / "acp-bridge" / "config.toml"


def default_state_dir() -> Path:
    return _xdg("XDG_STATE_HOME", ".local/state") / "acp-bridge"


@dataclass(frozen=True, slots=True)
class BridgeSettings:
    """Every resolved setting. `sources` says where each came from (flag, env, file, default)."""

    provider: str = "scripted"
    model: str | None = None
    models: tuple[str, ...] = ()
    base_url: str | None = None
    script: str | None = None
    state_dir: Path = field(default_factory=default_state_dir)
    trace: str | None = None
    log_level: str = "warning"
    inject_fault: str | None = None
    system_prompt: str | None = None
    max_line_bytes: int = 50 * 1024 * 1024
    idle_timeout: float = 60.0
    first_token_timeout: float = 120.0
    max_attempts: int = 4
    max_tokens: int = 8192
    max_wait: float = 180.0
    stall_notice_after: float = 15.0
    context_window: int | None = None
    sources: Mapping[str, str] = field(default_factory=dict)


def _load_file(path: Path, explicit: bool) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        if explicit:
            raise SettingsError(f"config file not found: {path}") from None
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - _FILE_KEYS)
    if unknown:
        raise SettingsError(f"config file {path}: unknown keys {', '.join(unknown)}")
    return data


def _coerce(name: str, value: Any, where: str) -> Any:
    try:
        if name == "state_dir":
            return Path(str(value)).expanduser()
        if name == "models":
            items = value.split(",") if isinstance(value, str) else list(value)
            return tuple(str(item).strip() for item in items if str(item).strip())
        if name in _INTS:
            return int(value)
        if name in _FLOATS:
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} from {where} is not valid: {value!r}") from None


def resolve(
    flags: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
    config_path: str | None = None,
) -> BridgeSettings:
    """Flags (non-None values) over environment over the config file over defaults."""
    environ = os.environ if environ is None else environ
    explicit = config_path is not None
    path = Path(config_path).expanduser() if config_path else default_config_path()
    layers: list[tuple[str, Mapping[str, Any]]] = [
        (f"file {path}", _load_file(path, explicit)),
        ("environment", {k: environ[v] for k, v in _ENV.items() if environ.get(v)}),
        ("flag", {k: v for k, v in flags.items() if v is not None}),
    ]
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for where, layer in layers:
        for name, value in layer.items():
            if name not in BridgeSettings.__dataclass_fields__ or name == "sources":
                raise SettingsError(f"unknown setting {name!r} from {where}")
            values[name] = _coerce(name, value, where)
            sources[name] = where
    provider = values.get("provider", "scripted")
    if provider not in PROVIDER_KINDS:
        raise SettingsError(
            f"unknown provider {provider!r} (from {sources.get('provider')}); "
            f"choose one of {', '.join(PROVIDER_KINDS)}"
        )
    if values.get("script") and provider != "scripted":
        raise SettingsError("--script only applies to --provider scripted")
    return BridgeSettings(**values, sources=sources)
