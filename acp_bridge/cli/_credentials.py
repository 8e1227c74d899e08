"""Stored API keys: what `acp-bridge-agent login` saves and `acp-bridge-agent logout` removes.

The keys live in one per-user JSON file, `$XDG_CONFIG_HOME/acp-bridge/credentials.json`
(default `~/.config/acp-bridge/credentials.json`), created with mode 0600 in a 0700 folder
and replaced atomically, so a key is never readable by other users nor half-written. The
provider's standard environment variable always wins over a stored key (spec/authentication.md,
AUTH-KEY-001); the file is read each time a key is needed, so a login done in a terminal while
the editor runs is picked up without a restart.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "CredentialsError",
    "credentials_path",
    "forget_keys",
    "load_keys",
    "resolve_key",
    "store_key",
]

_FILE_MODE = 0o600
_DIR_MODE = 0o700
_VERSION = 1


class CredentialsError(Exception):
    """The credentials file cannot be read or written; the message names it and the fix."""


def credentials_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    home = Path(env.get("HOME") or Path.home())
    root = Path(base) if base and Path(base).is_absolute() else home / ".config"
    return root / "acp-bridge" / "credentials.json"


def load_keys(path: Path) -> dict[str, str]:
    """The stored keys by provider kind; {} when nothing is stored (or the file is unreadable:
    a broken file must not stop the bridge, `acp-bridge-agent doctor` reports it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, dict):
        return {}
    return {k: v for k, v in keys.items() if isinstance(k, str) and isinstance(v, str) and v}


def _write(path: Path, keys: Mapping[str, str]) -> None:
    import tempfile  # only when writing: the agent's startup reads, never writes

    try:
        path.parent.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".credentials-", dir=path.parent)
    except OSError as exc:
        raise CredentialsError(
            f"cannot write {path}: {exc.strerror or exc}; make {path.parent} writable "
            "or set XDG_CONFIG_HOME to a writable folder"
        ) from None
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": _VERSION, "keys": dict(keys)}, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise CredentialsError(f"cannot write {path}: {exc.strerror or exc}") from None


def store_key(path: Path, provider: str, key: str) -> None:
    """Saves `key` for `provider` (replacing an older one), file mode 0600."""
    keys = load_keys(path)
    keys[provider] = key
    _write(path, keys)


def forget_keys(path: Path, provider: str | None = None) -> list[str]:
    """Removes the stored key of `provider` (every key when None); the providers removed."""
    keys = load_keys(path)
    removed = sorted(keys) if provider is None else [p for p in keys if p == provider]
    if not removed:
        return []
    remaining = {k: v for k, v in keys.items() if k not in removed}
    if remaining:
        _write(path, remaining)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return removed


def resolve_key(
    provider: str,
    env_vars: tuple[str, ...],
    environ: Mapping[str, str] | None = None,
    path: Path | None = None,
) -> tuple[str | None, str]:
    """The key to use and where it came from: the first set standard variable (it wins),
    else the stored login, else (None, "none")."""
    env = os.environ if environ is None else environ
    for name in env_vars:
        if value := env.get(name, "").strip():
            return value, name
    stored = load_keys(path or credentials_path(environ)).get(provider)
    if stored:
        return stored, "login"
    return None, "none"
