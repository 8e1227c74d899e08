"""Resolving the bridge's settings: command-line flags over environment over config file.

The config file is TOML (`--config FILE`, default `$XDG_CONFIG_HOME/acp-bridge/config.toml`);
a missing default file is fine, a missing explicit one is an error. Every setting is in the
one table of `acp_bridge.cli._setting_table`; each error names the setting, where its value
came from and the fix (spec/configuration.md). API keys are read only from the providers'
standard environment variables or the stored `acp-bridge-agent login`, never from flags or the
config file, so they never land in shell history or a committed file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_bridge.cli._setting_table import SETTINGS, setting

if TYPE_CHECKING:
    from acp_bridge.providers import ModelInfo

__all__ = [
    "PROVIDER_KINDS",
    "BridgeSettings",
    "SettingsError",
    "default_config_path",
    "default_state_dir",
    "resolve",
]

PROVIDER_KINDS = setting("provider").choices

_ENV = {s.name: s.env for s in SETTINGS if s.env}
_FILE_KEYS = frozenset(s.name for s in SETTINGS)
_FLAGS = {s.name: s.flag for s in SETTINGS if s.flag}


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
    append_system_prompt: str | None = None
    max_line_bytes: int = 50 * 1024 * 1024
    idle_timeout: float = 60.0
    first_token_timeout: float = 120.0
    max_attempts: int = 4
    max_tokens: int = 8192
    max_output_bytes: int = 64 * 1024 * 1024
    max_wait: float = 180.0
    stall_notice_after: float = 15.0
    context_window: int | None = None
    model_info: Mapping[str, ModelInfo] = field(default_factory=dict)
    reasoning_effort: str = "default"
    fetch_models: str = "yes"
    merge_chunks: str = "yes"
    compaction_threshold: float = 0.8
    compaction_keep_turns: int = 2
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    """What the bridge inferred and says on stderr before serving (e.g. the provider)."""


def _load_file(path: Path, explicit: bool) -> dict[str, Any]:
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        if explicit:
            raise SettingsError(f"config file not found: {path}") from None
        return {}
    import tomllib  # only when there is a file to read (cold start)

    with handle:
        try:
            data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"config file {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - _FILE_KEYS)
    if unknown:
        raise SettingsError(
            f"config file {path}: unknown key(s) {', '.join(unknown)}; "
            f"the allowed keys are {', '.join(s.name for s in SETTINGS)} (see README, Options)"
        )
    return data


def _where(name: str, layer: str) -> str:
    if layer == "flag":
        return f"flag {_FLAGS.get(name, name)}"
    if layer == "environment":
        return f"environment variable {_ENV.get(name, name)}"
    return f"{layer}, key {name}"


def _coerce(name: str, value: Any, where: str) -> Any:
    spec = setting(name)
    try:
        if spec.kind == "table":
            from acp_bridge.cli._model_info import parse_model_info

            if not where.startswith("file "):
                raise SettingsError(f"{where}: {name} is set in the config file only")
            return parse_model_info(value)
        if spec.kind == "path":
            return Path(str(value)).expanduser()
        if spec.kind == "list":
            items = value.split(",") if isinstance(value, str) else list(value)
            return tuple(str(item).strip() for item in items if str(item).strip())
        if spec.kind in ("int", "float", "fraction"):
            if isinstance(value, bool):
                raise ValueError
            number = int(value) if spec.kind == "int" else float(value)
            if spec.kind == "fraction" and not 0 <= number <= 1:
                raise ValueError
        else:
            number = None
            value = str(value)
    except ValueError as exc:
        if spec.kind == "table":
            raise SettingsError(f"{where}: {exc}") from None
        raise SettingsError(
            f"{where}: {value!r} is not {_expected(spec.kind)}; "
            f"the default is {spec.default.replace('`', '')}"
        ) from None
    except TypeError:
        raise SettingsError(
            f"{where}: {value!r} is not {_expected(spec.kind)}; "
            f"the default is {spec.default.replace('`', '')}"
        ) from None
    if number is not None:
        if not (spec.minimum or 0) <= number < float("inf"):  # NaN fails too
            raise SettingsError(
                f"{where}: must be at least {spec.minimum:g}, got {value}; "
                f"the default is {spec.default.replace('`', '')}"
            )
        return number
    if spec.choices and value not in spec.choices:
        raise SettingsError(
            f"{where}: unknown {name} {value!r}; choose one of {', '.join(spec.choices)}"
        )
    return value


def _expected(kind: str) -> str:
    known = {"int": "a whole number", "float": "a number of seconds"}
    known["fraction"] = "a number from 0 to 1"
    return known.get(kind, f"a {kind}")


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
    for layer, entries in layers:
        for name, value in entries.items():
            if name not in _FILE_KEYS:
                raise SettingsError(
                    f"unknown setting {name!r} from {layer}; the allowed settings are "
                    f"{', '.join(s.name for s in SETTINGS)}"
                )
            values[name] = _coerce(name, value, _where(name, layer))
            sources[name] = layer
    notes: list[str] = []
    provider = values.get("provider", "scripted")
    if values.get("base_url") and "provider" not in values:
        # An endpoint without a provider is an OpenAI-compatible server, never the scripted
        # model (CONF-ERR-002): say so rather than silently playing scripts.
        values["provider"] = provider = "openai"
        sources["provider"] = "--base-url without --provider"
        notes.append(
            f"--base-url {values['base_url']} given without --provider: using --provider openai "
            "(OpenAI-compatible); pass --provider anthropic or gemini for those APIs"
        )
    elif values.get("base_url") and provider == "scripted":
        raise SettingsError(
            f"--base-url (from {sources['base_url']}) does not apply to the scripted model "
            f"(provider from {sources['provider']}); pass --provider openai for an "
            "OpenAI-compatible server, or drop --base-url"
        )
    if values.get("script") and provider != "scripted":
        raise SettingsError(
            f"--script only applies to --provider scripted (the provider is {provider}, from "
            f"{sources.get('provider')}); drop --script or --provider"
        )
    return BridgeSettings(**values, sources=sources, notes=tuple(notes))
