"""`acp-bridge-agent login` and `acp-bridge-agent logout`: the terminal side of authentication.

`login` is what the editor's terminal auth method runs (spec/authentication.md, AUTH-LOGIN-001):
pick the provider (the configured one, else asked), paste the key with hidden input, test it
with one bounded model-list request, and store it in the per-user credentials file (mode
0600). Exit status 0 means logged in; anything else means not (the ACP terminal-auth
contract). `logout` removes stored keys. The standard variable always wins over a stored key.
"""

from __future__ import annotations

import getpass
import sys
from typing import TextIO

from acp_bridge.cli._credentials import (
    CredentialsError,
    credentials_path,
    forget_keys,
    store_key,
)
from acp_bridge.cli._settings import PROVIDER_KINDS, BridgeSettings

__all__ = ["main_login", "main_logout"]

_HTTP_KINDS = tuple(k for k in PROVIDER_KINDS if k != "scripted")


def _ask_provider(stdin: TextIO, out: TextIO) -> str | None:
    out.write("Which provider do you want to log in to?\n")
    for number, kind in enumerate(_HTTP_KINDS, 1):
        out.write(f"  {number}) {kind}\n")
    out.write(f"Provider [1-{len(_HTTP_KINDS)} or name, default {_HTTP_KINDS[0]}]: ")
    out.flush()
    answer = stdin.readline().strip().lower()
    if not answer:
        return _HTTP_KINDS[0]
    if answer.isdigit() and 1 <= int(answer) <= len(_HTTP_KINDS):
        return _HTTP_KINDS[int(answer) - 1]
    return answer if answer in _HTTP_KINDS else None


def _ask_base_url(provider: str, stdin: TextIO, out: TextIO) -> str | None:
    from acp_bridge.providers import _registry as registry

    default = registry.default_base_url(provider)
    out.write(f"Endpoint to test the key against [Enter: {default}]: ")
    out.flush()
    return stdin.readline().strip() or None


def _read_key(provider: str, stdin: TextIO, out: TextIO) -> str:
    """Hidden input on a terminal; from a pipe (`... | acp-bridge-agent login`) the first line, with
    no warning about echo (there is no terminal to echo on)."""
    if _is_terminal(stdin):
        return getpass.getpass(f"Paste the {provider} API key (input hidden): ", stream=out)
    out.write(f"Reading the {provider} API key from standard input\n")
    line = stdin.readline()
    if not line:
        raise EOFError
    return line


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _env_var_set(provider: str) -> str | None:
    import os

    from acp_bridge.providers import _registry as registry

    return next((n for n in registry.api_key_env_vars(provider) if os.environ.get(n)), None)


def main_login(
    settings: BridgeSettings, stdin: TextIO | None = None, out: TextIO | None = None
) -> int:
    """The interactive login; returns the exit status (0: a tested key is stored)."""
    from acp_bridge.cli._probe import list_models

    stdin = stdin or sys.stdin
    out = out or sys.stderr
    provider = settings.provider if settings.provider != "scripted" else None
    base_url = settings.base_url
    if provider is None:
        provider = _ask_provider(stdin, out)
        if provider is None:
            out.write(f"acp-bridge-agent login: choose one of {', '.join(_HTTP_KINDS)}\n")
            return 2
        base_url = _ask_base_url(provider, stdin, out)
    try:
        key = _read_key(provider, stdin, out)
    except (EOFError, KeyboardInterrupt):
        out.write("\nacp-bridge-agent login: cancelled, nothing stored\n")
        return 1
    key = key.strip()
    if not key:
        out.write("acp-bridge-agent login: no key entered, nothing stored\n")
        return 1
    out.write(f"Testing the key against {provider} ...\n")
    out.flush()
    probe = list_models(provider, base_url, key)
    if not probe.ok:
        what = (
            "the key was refused"
            if probe.reason in ("http-401", "http-403")
            else ("could not test the key")
        )
        out.write(f"acp-bridge-agent login: {what}: {probe.line}. Nothing stored.\n")
        return 1
    path = credentials_path()
    try:
        store_key(path, provider, key)
    except CredentialsError as exc:
        out.write(f"acp-bridge-agent login: {exc}\n")
        return 1
    out.write(f"Logged in to {provider}: {probe.line}. The key is stored in {path} (mode 0600).\n")
    if env := _env_var_set(provider):
        out.write(f"Note: {env} is set in this environment and wins over the stored key.\n")
    return 0


def main_logout(settings: BridgeSettings, out: TextIO | None = None) -> int:
    """Removes the stored key of the configured provider (every stored key for scripted)."""
    out = out or sys.stderr
    provider = settings.provider if settings.provider != "scripted" else None
    path = credentials_path()
    try:
        removed = forget_keys(path, provider)
    except CredentialsError as exc:
        out.write(f"acp-bridge-agent logout: {exc}\n")
        return 1
    if removed:
        out.write(f"Logged out: removed the stored key(s) of {', '.join(removed)} from {path}.\n")
    else:
        out.write(f"Nothing to log out: no stored key{f' for {provider}' if provider else ''}.\n")
    for kind in removed or ([provider] if provider else []):
        if env := _env_var_set(kind):
            out.write(f"Note: {env} is still set in this environment; unset it to log out fully.\n")
    return 0
