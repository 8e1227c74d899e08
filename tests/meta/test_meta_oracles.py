"""The test oracles on a fresh machine: where the official schema comes from, and what a test
says when Node.js is missing (tests/acp_schema.py, tests/npm_oracles.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import acp_schema
import npm_oracles
import pytest
from _pytest.outcomes import Skipped

ROOT = Path(__file__).resolve().parents[2]
NO_NODE = "node and npm not found on PATH"


@pytest.mark.requirement("REL-001")
def test_the_schema_is_pinned_next_to_acpx_in_the_npm_lockfile() -> None:
    package = json.loads((ROOT / "tests" / "npm" / "package.json").read_text())
    name, version = acp_schema.SCHEMA_PACKAGE.rsplit("@", 1)
    assert package["dependencies"][name] == version
    assert "acpx" in package["dependencies"]
    lock = json.loads((ROOT / "tests" / "npm" / "package-lock.json").read_text())
    entry = lock["packages"][f"node_modules/{name}"]
    assert entry["version"] == version
    assert entry["integrity"].startswith("sha512-")


@pytest.mark.requirement("REL-001")
def test_the_schema_in_use_is_the_pinned_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(acp_schema.SCHEMA_ENV, raising=False)
    path = acp_schema.schema_path()
    assert path in (acp_schema.npm_schema_path(), acp_schema.shared_schema_path())
    assert hashlib.sha256(path.read_bytes()).hexdigest() == acp_schema.SCHEMA_SHA256
    assert acp_schema.schema() == json.loads(path.read_bytes())


@pytest.mark.requirement("REL-001")
def test_the_lookup_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    npm_dir, shared = tmp_path / "npm", tmp_path / "shared.json"
    monkeypatch.setattr(acp_schema, "NPM_DIR", npm_dir)
    monkeypatch.setattr(acp_schema, "shared_schema_path", lambda: shared)
    monkeypatch.setattr(acp_schema, "node_problem", lambda: NO_NODE)
    chosen = tmp_path / "chosen.json"
    monkeypatch.setenv(acp_schema.SCHEMA_ENV, str(chosen))
    assert acp_schema.schema_path() == chosen  # used as is, even when missing
    monkeypatch.delenv(acp_schema.SCHEMA_ENV)
    with pytest.raises(acp_schema.SchemaUnavailable):
        acp_schema.schema_path()
    shared.write_text("{}")
    assert acp_schema.schema_path() == shared
    acp_schema.npm_schema_path().parent.mkdir(parents=True)
    acp_schema.npm_schema_path().write_text("{}")
    assert acp_schema.schema_path() == npm_dir / (
        "node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"
    )


def _without_node_or_copy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(acp_schema.SCHEMA_ENV, raising=False)
    monkeypatch.setattr(acp_schema, "NPM_DIR", tmp_path / "npm")
    monkeypatch.setattr(acp_schema, "shared_schema_path", lambda: tmp_path / "none.json")
    monkeypatch.setattr(acp_schema, "node_problem", lambda: NO_NODE)
    monkeypatch.setattr(acp_schema, "_outcome", [])
    monkeypatch.setattr(npm_oracles, "node_problem", lambda: NO_NODE)


@pytest.mark.requirement("REL-001")
def test_without_node_a_schema_test_skips_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _without_node_or_copy(monkeypatch, tmp_path)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(Skipped) as caught:
        acp_schema.schema()
    reason = str(caught.value)
    assert NO_NODE in reason
    assert "Node.js 20 or newer with npm" in reason
    assert "npm ci --no-audit --no-fund --loglevel=error" in reason
    assert "@agentclientprotocol/sdk@2.4.0" in reason
    assert acp_schema.SCHEMA_ENV in reason
    with pytest.raises(Skipped, match=r"acpx .* needs Node.js"):
        npm_oracles.installed(tmp_path / "npm" / "acpx", "acpx")


@pytest.mark.requirement("REL-001")
def test_without_node_under_ci_a_schema_test_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _without_node_or_copy(monkeypatch, tmp_path)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(acp_schema.SchemaUnavailable, match=r"CI must run this test: .*Node.js 20"):
        acp_schema.schema()
    with pytest.raises(AssertionError, match="CI must run this test: acpx"):
        npm_oracles.installed(tmp_path / "npm" / "acpx", "acpx")


@pytest.mark.requirement("REL-001")
def test_a_wrong_file_is_named_never_skipped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CI", raising=False)
    missing = tmp_path / "nowhere" / "schema.json"
    with pytest.raises(acp_schema.SchemaNotFound, match="ACP_SCHEMA_PATH") as caught:
        acp_schema.load_schema(missing)
    assert str(missing) in str(caught.value)
    other = tmp_path / "other.json"
    other.write_text('{"type": "object"}')
    with pytest.raises(acp_schema.SchemaNotFound, match="is not the ACP v1 JSON schema"):
        acp_schema.load_schema(other)
    # A copy with other bytes than the pinned package's is a failure, not a skip.
    monkeypatch.delenv(acp_schema.SCHEMA_ENV, raising=False)
    real = acp_schema.schema_path().read_bytes()
    monkeypatch.setattr(acp_schema, "_outcome", [])
    monkeypatch.setattr(acp_schema, "NPM_DIR", tmp_path / "npm")
    copy = acp_schema.npm_schema_path()
    copy.parent.mkdir(parents=True)
    copy.write_bytes(real + b"\n")
    with pytest.raises(acp_schema.SchemaNotFound, match=r"not the pinned .* run `npm ci`"):
        acp_schema.schema()
