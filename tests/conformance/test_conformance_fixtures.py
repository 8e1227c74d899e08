"""The fixtures of spec/conformance/: complete, schema-valid, and exactly what the bridge
produces today (a fresh regeneration equals the checked-in files)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from acp_schema import AgentWireValidator

from acp_bridge.conformance import REQUIREMENTS, SCENARIOS, load_fixtures, view_of_wire
from acp_bridge.conformance._generate import regenerate
from acp_bridge.providers.scripted import builtin_scripts, load_script

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "spec" / "conformance"


@pytest.mark.requirement("KIT-001")
def test_a_fresh_regeneration_equals_the_checked_in_fixtures(tmp_path: Path) -> None:
    written = regenerate(tmp_path)
    assert {p.name for p in written} == {p.name for p in KIT.glob("*.json")}
    for path in written:
        fresh, checked_in = path.read_text(), (KIT / path.name).read_text()
        assert fresh == checked_in, (
            f"{path.name} is stale: run `acp-bridge-agent conformance regenerate`"
            " and review the diff"
        )


@pytest.mark.requirement("KIT-001")
@pytest.mark.parametrize("fixture", load_fixtures(KIT), ids=lambda f: f.name)
def test_every_message_of_a_fixture_validates_against_the_official_schema(fixture) -> None:
    for connection in (fixture.setup, fixture.wire):
        if not connection:
            continue
        validator = AgentWireValidator(strict_roots=True)
        checked = 0
        for item in connection:
            if item["from"] == "client":
                validator.note_client_message(item["message"])
            else:
                validator.check(item["message"])
                checked += 1
        assert checked > 3


@pytest.mark.requirement("KIT-001")
@pytest.mark.requirement("EDITOR-010")
def test_every_built_in_script_and_every_targeted_script_has_a_scenario() -> None:
    names = {f.name for f in load_fixtures(KIT)}
    assert set(builtin_scripts()) <= names
    for path in (KIT / "scripts").glob("*.json"):
        script = load_script(path)
        assert any(s.script == script.name for s in SCENARIOS), path.name
    assert {s.name for s in SCENARIOS} == names


@pytest.mark.requirement("KIT-001")
def test_every_editor_requirement_is_checked_and_every_tag_is_defined() -> None:
    defined = {
        item["id"]
        for item in tomllib.loads((ROOT / "spec/requirements/client.toml").read_text())[
            "requirement"
        ]
    }
    assert set(REQUIREMENTS) == defined
    tagged = {r for f in load_fixtures(KIT) for r in f.requirements}
    assert tagged == defined


@pytest.mark.requirement("KIT-001")
@pytest.mark.parametrize("fixture", load_fixtures(KIT), ids=lambda f: f.name)
def test_the_expected_view_is_the_reference_reducers_and_embeds_a_loadable_script(
    fixture, tmp_path: Path
) -> None:
    assert view_of_wire(fixture.wire) == fixture.expected
    path = tmp_path / "script.json"
    path.write_text(json.dumps(fixture.script))
    load_script(path)
    prompts = [
        item["message"]["params"]["prompt"][0]["text"]
        for item in (*fixture.setup, *fixture.wire)
        if item["message"].get("method") == "session/prompt"
    ]
    assert prompts == list(fixture.prompts)
