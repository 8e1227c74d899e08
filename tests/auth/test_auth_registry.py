"""The ACP registry's admission check (`verify_agents.py --auth-check`), applied to the real
command for every provider setting, with and without its key (AUTH-REGISTRY-001).

The request and the rule are the registry's (agentclientprotocol/registry,
`.github/workflows/client.py`): `initialize` with terminal, fs and the `_meta` terminal-auth
marker, then at least one auth method whose `type` is agent or terminal, where no `type`
means agent. The registry's script itself is run against a local manifest in the report of
this change (it needs `uv` and a checkout of that repository).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp_schema import AgentWireValidator
from subprocess_util import LineProcess, bridge_argv, isolated_env

pytestmark = [pytest.mark.subprocess, pytest.mark.requirement("AUTH-REGISTRY-001")]

REGISTRY_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": 1,
        "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
        "clientCapabilities": {
            "terminal": True,
            "fs": {"readTextFile": True, "writeTextFile": True},
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
    },
}

SETTINGS = [
    ("scripted", None),
    ("openai", None),
    ("openai", "OPENAI_API_KEY"),
    ("anthropic", None),
    ("anthropic", "ANTHROPIC_API_KEY"),
    ("gemini", None),
    ("gemini", "GEMINI_API_KEY"),
]


def _method_type(method: dict[str, Any]) -> str:
    meta = method.get("_meta") if isinstance(method.get("_meta"), dict) else {}
    if method.get("type"):
        return str(method["type"])
    if "terminal-auth" in meta:
        return "terminal"
    return "agent"


@pytest.mark.parametrize(("provider", "key_var"), SETTINGS)
def test_the_registry_admission_check_passes(
    tmp_path: Path, provider: str, key_var: str | None
) -> None:
    extra = {key_var: "sk-registry-check-000000000"} if key_var else {}
    env = isolated_env(tmp_path / "home", {"TERM": "dumb", **extra})
    validator = AgentWireValidator(strict_roots=True)
    validator.note_client_message(REGISTRY_INITIALIZE)
    with LineProcess(bridge_argv("--provider", provider), env=env) as bridge:
        bridge.send(REGISTRY_INITIALIZE)
        response = json.loads(bridge.read_line())
    validator.check(response)
    assert "error" not in response
    methods = response["result"]["authMethods"]
    valid = [m for m in methods if _method_type(m) in ("agent", "terminal")]
    assert valid, f"No authMethods in response: {methods}"
    # The registry's marker is not the schema's capability: no terminal method here.
    assert [m["id"] for m in methods] == ["api-key"]
