"""Regenerates the fixtures from the bridge's real output (a maintainer command).

Each scenario runs through the real agent (`acp_bridge.agent.serve`, the scripted provider
playing the scenario's script, exactly as `acp-bridge --script FILE` does) and the reference
client, over an in-memory pair. The transcript is made reproducible by replacing what differs
from run to run (section 6.1 of spec/editor-conformance.md): the session id, the workspace
path, timestamps, versions and effect-key hashes. The expected view is the reference
reducer's; the checks come from the catalog.

    acp-bridge conformance regenerate [DIR]      # default: spec/conformance/ of the checkout
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

import anyio

from acp_bridge.agent import AgentConfig, SlashCommand, serve
from acp_bridge.client import WireMessage, allow_once, connect
from acp_bridge.conformance._catalog import SCENARIOS, Scenario
from acp_bridge.conformance._fixture import FIXTURE_FORMAT, FixtureError
from acp_bridge.conformance._view import view_of_wire
from acp_bridge.providers.scripted import ScriptedProvider, loads_script
from acp_bridge.turn import RetryPolicy
from acp_bridge.wire import create_memory_pair

__all__ = ["WORKSPACE", "generate_fixture", "regenerate", "scenario_script", "workspace_files"]

WORKSPACE = "/workspace"
"""The workspace path every fixture shows in place of the real temporary one."""

_SESSION = "sess_conformance"
_TIME = "2026-01-01T00:00:00.000Z"
_VERSION = "0.0.0"
_KEY = "0" * 64
_SESSION_ID = re.compile(r"sess_[0-9a-f]{24}")
_README = "# My project\n\nA test workspace.\n"
# Back-off waits are real waits; the wire is the same with tiny ones (Retry-After still holds).
_POLICY = RetryPolicy(base_delay=0.001, max_delay=0.002, max_retry_after=5.0)
_WAIT = 60.0


def workspace_files() -> dict[str, str]:
    """The scratch workspace every scenario starts in (the tool-loop scripts read it)."""
    return {"README.md": _README}


def scenario_script(scenario: Scenario, scripts_dir: Path | None = None) -> dict[str, Any]:
    """The scenario's script as JSON: a built-in's file, or `spec/conformance/scripts/`."""
    if scenario.builtin or (scenario.load and scenario.script in _builtin_names()):
        folder = files("acp_bridge.providers.scripted").joinpath("scripts")
        text = folder.joinpath(f"{scenario.script}.json").read_text(encoding="utf-8")
    else:
        folder_path = scripts_dir or Path(__file__).resolve().parents[2] / "spec" / "conformance"
        text = (folder_path / "scripts" / f"{scenario.script}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _builtin_names() -> set[str]:
    from acp_bridge.providers.scripted import builtin_scripts

    return set(builtin_scripts())


def _config(script: dict[str, Any], state_dir: Path) -> AgentConfig:
    provider = ScriptedProvider(loads_script(json.dumps(script), source="<scenario>"))
    commands = tuple(
        SlashCommand(name, s.description) for name, s in provider.available_scripts().items()
    )
    return AgentConfig(
        provider=provider,
        models=("scripted",),
        state_dir=state_dir,
        retry_policy=_POLICY,
        commands=commands,
    )


async def _connection(
    config: AgentConfig, work: Path, prompts: tuple[str, ...], load: str | None
) -> tuple[list[WireMessage], str]:
    agent_side, client_side = create_memory_pair()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, agent_side, config)
            with anyio.fail_after(_WAIT):
                async with connect(client_side, policy=allow_once) as client:
                    await client.initialize()
                    if load is None:
                        session_id = await client.new_session(work)
                        for prompt in prompts:
                            await client.prompt(session_id, prompt)
                    else:
                        session_id = load
                        await client.load_session(session_id, work)
            tg.cancel_scope.cancel()
    finally:
        await agent_side.aclose()
        await client_side.aclose()
    return client.transcript, session_id


def _normalize(value: Any, paths: tuple[str, ...], key: str | None = None) -> Any:
    if isinstance(value, str):
        if key == "updatedAt":
            return _TIME
        if key == "effectKey":
            return _KEY
        for path in paths:
            value = value.replace(path, WORKSPACE)
        return _SESSION_ID.sub(_SESSION, value)
    if isinstance(value, list):
        return [_normalize(v, paths) for v in value]
    if isinstance(value, dict):
        out = {k: _normalize(v, paths, k) for k, v in value.items()}
        if key in ("agentInfo", "clientInfo") and "version" in out:
            out["version"] = _VERSION
        return out
    return value


def _wire(transcript: list[WireMessage], paths: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {
            "from": "client" if m.direction == "sent" else "agent",
            "message": _normalize(m.message, paths),
        }
        for m in transcript
    ]


async def generate_fixture(scenario: Scenario, scripts_dir: Path | None = None) -> dict[str, Any]:
    """Runs `scenario` through the real agent and returns its fixture (JSON-ready)."""
    script = scenario_script(scenario, scripts_dir)
    with tempfile.TemporaryDirectory(prefix="acp-conformance-") as tmp:
        root = Path(tmp)
        work = root / "workspace"
        work.mkdir()
        for name, text in workspace_files().items():
            (work / name).write_text(text, encoding="utf-8")
        paths = (str(work.resolve()), str(work))
        config = _config(script, root / "state")
        transcript, session_id = await _connection(config, work, scenario.prompts, None)
        setup: list[dict[str, Any]] = []
        if scenario.load:
            setup = _wire(transcript, paths)
            transcript, _ = await _connection(_config(script, root / "state"), work, (), session_id)
        wire = _wire(transcript, paths)
    expected = view_of_wire(wire)
    checks = [check.to_json() for check in scenario.checks]
    for check in scenario.checks:
        for item in check.items:
            if item not in expected[check.field]:
                raise FixtureError(f"{scenario.name}: {item!r} is not in the expected view")
    fixture: dict[str, Any] = {
        "format": FIXTURE_FORMAT,
        "name": scenario.name,
        "summary": scenario.summary,
        "kind": "load" if scenario.load else "prompt",
        "prompts": list(scenario.prompts),
        "workspace": workspace_files(),
        "script": script,
        "expected": expected,
        "checks": checks,
    }
    if setup:
        fixture["setup"] = setup
    fixture["wire"] = wire
    return fixture


def dumps_fixture(fixture: Mapping[str, Any]) -> str:
    """Fixture JSON as checked in: two-space indent, one wire message per line."""
    head = {k: v for k, v in fixture.items() if k not in ("setup", "wire")}
    text = json.dumps(head, indent=2, ensure_ascii=False)[:-2]
    for key in ("setup", "wire"):
        if key in fixture:
            lines = ",\n".join(
                "    " + json.dumps(item, ensure_ascii=False, separators=(",", ":"))
                for item in fixture[key]
            )
            text += f',\n  "{key}": [\n{lines}\n  ]'
    return text + "\n}\n"


def regenerate(folder: Path, scripts_dir: Path | None = None) -> list[Path]:
    """Writes every scenario's fixture into `folder`; returns the files written."""

    async def run() -> list[Path]:
        written = []
        for scenario in SCENARIOS:
            fixture = await generate_fixture(scenario, scripts_dir)
            path = folder / f"{scenario.name}.json"
            path.write_text(dumps_fixture(fixture), encoding="utf-8")
            written.append(path)
        return written

    folder.mkdir(parents=True, exist_ok=True)
    return anyio.run(run)
