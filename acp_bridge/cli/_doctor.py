"""`acp-bridge-agent doctor`: one line per check, a nonzero exit when something is wrong.

Checks, in order (spec/configuration.md, CONF-DOCTOR-001): the configuration resolves; the
provider has a key (or needs none); the provider answers its model list (or exactly why not:
DNS, refused, TLS, 401, 404 with the URL asked and the likely fix); the state directory is a
writable folder with free space; the trace file opens; the MCP SDK is installed (the MCP
servers themselves are the editor's, per session: MCP-DOCTOR-001). More checks plug in with
`register_check`. Lines go to stdout: doctor is run by a person in a terminal, never by an editor.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TextIO

from acp_bridge.cli._settings import BridgeSettings, SettingsError

__all__ = ["Check", "main_doctor", "register_check", "report_settings_error", "run_checks"]


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report: `ok` False means something is wrong (exit status 1)."""

    name: str
    ok: bool
    line: str
    warning: bool = False

    def render(self) -> str:
        mark = "ok  " if self.ok and not self.warning else "warn" if self.ok else "FAIL"
        return f"{mark}  {self.name}: {self.line}"


CheckFn = Callable[[BridgeSettings], Iterable[Check]]
_EXTRA: list[CheckFn] = []


def register_check(check: CheckFn) -> CheckFn:
    """Adds a check (e.g. MCP servers) that runs after the built-in ones."""
    _EXTRA.append(check)
    return check


def _configuration(settings: BridgeSettings) -> Iterable[Check]:
    source = settings.sources.get("provider", "default")
    model = settings.model or "the provider's default model"
    yield Check("configuration", True, f"provider {settings.provider} (from {source}), {model}")
    for note in settings.notes:
        yield Check("configuration", True, note, warning=True)


def _key(settings: BridgeSettings) -> Iterable[Check]:
    from acp_bridge.cli._credentials import credentials_path
    from acp_bridge.cli._keys import missing_key_vars, provider_key

    path = credentials_path()
    if path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            yield Check(
                "credentials",
                False,
                f"{path} is readable by other users (mode {mode:04o}): run chmod 600 {path}",
            )
    if settings.provider == "scripted":
        yield Check("key", True, "the scripted model needs none")
        return
    key, source = provider_key(settings)
    if key:
        where = f"from {source}" if source != "login" else f"from the stored login ({path})"
        yield Check("key", True, f"{settings.provider} key {where}")
    elif missing := missing_key_vars(settings):
        yield Check(
            "key",
            False,
            f"the {settings.provider} provider needs an API key: set {' or '.join(missing)}, "
            f"or run `acp-bridge-agent login --provider {settings.provider}`",
        )
    else:
        yield Check("key", True, f"none needed for the local server {settings.base_url}")


def _provider(settings: BridgeSettings) -> Iterable[Check]:
    if settings.provider == "scripted":
        yield Check("provider", True, "scripted streams play locally (no network)")
        return
    from acp_bridge.cli._keys import provider_key
    from acp_bridge.cli._probe import list_models

    probe = list_models(settings.provider, settings.base_url, provider_key(settings)[0])
    if not probe.ok:
        yield Check("provider", False, probe.line)
        return
    yield Check("provider", True, probe.line)
    from acp_bridge.providers import _registry as registry

    model = settings.model or registry.default_model(settings.provider)
    if probe.models and model not in probe.models:
        shown = ", ".join(probe.models[:5]) + (", ..." if len(probe.models) > 5 else "")
        yield Check(
            "model",
            True,
            f"{model!r} is not in the provider's list ({shown}): check --model",
            warning=True,
        )


def _state(settings: BridgeSettings) -> Iterable[Check]:
    from acp_bridge.agent._state_dir import check_state_dir

    problem = check_state_dir(settings.state_dir)
    if problem is not None:
        yield Check("state directory", False, f"{settings.state_dir}: {problem.message}")
        return
    stats = os.statvfs(settings.state_dir)
    free = stats.f_bavail * stats.f_frsize // (1024 * 1024)
    yield Check("state directory", True, f"{settings.state_dir} is writable, {free} MiB free")


def _trace(settings: BridgeSettings) -> Iterable[Check]:
    if not settings.trace:
        return
    from acp_bridge.cli._run import trace_error

    try:
        with open(settings.trace, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        yield Check("trace", False, trace_error(settings, exc))
        return
    yield Check("trace", True, f"{settings.trace} can be appended to")


def _mcp(settings: BridgeSettings) -> Iterable[Check]:
    """MCP-DOCTOR-001: what doctor can know about MCP. The servers come from the editor, per
    session (`mcpServers`), and there is no setting for servers of the user's own, so the
    check is the client itself: the MCP SDK a session needs is installed (found, not
    imported: importing it costs seconds)."""
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        yield Check(
            "mcp",
            False,
            "the MCP SDK (`mcp`) is not installed, so no session can connect the editor's MCP "
            "servers: reinstall acp-bridge-agent (it depends on mcp)",
        )
        return
    version = importlib.metadata.version("mcp")
    yield Check(
        "mcp",
        True,
        f"MCP SDK {version} installed; the servers are the ones your editor passes for each "
        "session (mcpServers), so there are none to check here",
    )


_BUILT_IN: tuple[CheckFn, ...] = (_configuration, _key, _provider, _state, _trace)


def run_checks(settings: BridgeSettings) -> list[Check]:
    checks: list[Check] = []
    for check in (*_BUILT_IN, _mcp, *_EXTRA):
        checks.extend(check(settings))
    return checks


def main_doctor(settings: BridgeSettings, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    checks = run_checks(settings)
    for check in checks:
        out.write(check.render() + "\n")
    failed = [c for c in checks if not c.ok]
    out.write(
        f"{len(failed)} problem(s) found\n"
        if failed
        else "everything acp-bridge needs is in place\n"
    )
    return 1 if failed else 0


def report_settings_error(error: SettingsError, out: TextIO | None = None) -> int:
    """doctor's answer when the configuration itself does not resolve."""
    out = out or sys.stdout
    out.write(Check("configuration", False, str(error)).render() + "\n")
    out.write("1 problem(s) found\n")
    return 1
