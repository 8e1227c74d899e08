"""agent.json, acp-bridge's entry for the ACP registry, stays valid: against the registry's
agent.schema.json (pinned in tests/registry/, see its README) and the registry's further
rules, and its `uvx` distribution is this project's wheel, whose command starts the agent
(spec/release.md, REL-006)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft7Validator
from release.conftest import NAME, PROJECT, ROOT
from subprocess_util import run_bounded

MANIFEST = json.loads((ROOT / "agent.json").read_text())
SCHEMA_FILE = ROOT / "tests" / "registry" / "agent.schema.json"
SCHEMA_SHA256 = "17056bae2fb3acf4b5be809a2796772385170bae73a54f61bcb619682524efbd"


@pytest.mark.requirement("REL-006")
def test_the_manifest_is_valid_against_the_registry_schema() -> None:
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == SCHEMA_SHA256
    schema = json.loads(SCHEMA_FILE.read_text())
    Draft7Validator.check_schema(schema)
    validator = Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(MANIFEST)]
    assert not errors, errors
    # The schema's own keys only: the registry's clients read nothing else.
    assert set(MANIFEST) <= set(schema["properties"])


@pytest.mark.requirement("REL-006")
def test_the_manifest_follows_the_registry_rules_and_this_project() -> None:
    # The registry's build script: the id names the entry's folder, lowercase with hyphens;
    # a semantic version that the package's pinned version repeats.
    assert re.fullmatch(r"[a-z][a-z0-9-]*", MANIFEST["id"])
    assert MANIFEST["id"] == "acp-bridge"
    assert MANIFEST["version"] == PROJECT["version"]
    assert MANIFEST["license"] == PROJECT["license"]
    assert MANIFEST["repository"] == PROJECT["urls"]["Repository"]
    assert MANIFEST["authors"] == [author["name"] for author in PROJECT["authors"]]
    (kind,) = MANIFEST["distribution"]
    assert kind == "uvx"
    uvx = MANIFEST["distribution"]["uvx"]
    assert uvx["package"] == f"{NAME}@{PROJECT['version']}"  # `uvx NAME@VERSION`
    assert "latest" not in uvx["package"]
    assert not (ROOT / "icon.svg").exists() or "icon" in MANIFEST


@pytest.mark.requirement("REL-006")
def test_the_uvx_command_of_the_manifest_starts_the_agent(installed: Path, tmp_path: Path) -> None:
    """`uvx acp-bridge-agent@0.1.0 ARGS` runs the console script named like the package from
    an environment with the wheel: the same as the clean venv's script with ARGS."""
    uvx = MANIFEST["distribution"]["uvx"]
    command = uvx["package"].split("@")[0]
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    served = run_bounded(
        [str(installed / command), *uvx.get("args", []), "--state-dir", str(tmp_path / "s")],
        input=(json.dumps(request) + "\n").encode(),
        env={"PATH": str(installed), "HOME": str(tmp_path), **uvx.get("env", {})},
        cwd=tmp_path,
    )
    assert served.returncode == 0, served.stderr.decode(errors="replace")
    (line,) = served.stdout.splitlines()
    assert json.loads(line)["result"]["agentInfo"]["name"] == "acp-bridge"
