"""The package surface, the spec's examples, the requirement IDs, and lazy built-ins."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

import acp_bridge.providers.scripted as scripted
from acp_bridge.providers import ModelProvider
from acp_bridge.providers.scripted import (
    ScriptedProvider,
    builtin_scripts,
    loads_script,
    parse_script,
)

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "scripted-stream.md"
REQUIREMENTS = ROOT / "spec" / "requirements" / "scripted.toml"


def test_public_names_are_exact() -> None:
    assert scripted.__all__ == sorted(scripted.__all__, key=lambda n: (not n.isupper(), n))
    assert set(scripted.__all__) == {
        "DEFAULT_SCRIPT",
        "BreakStep",
        "EofStep",
        "FinishStep",
        "HttpErrorStep",
        "RefuseConnectionStep",
        "Script",
        "ScriptAttempt",
        "ScriptCall",
        "ScriptError",
        "ScriptSelection",
        "ScriptStep",
        "ScriptedProvider",
        "ScriptedSettings",
        "TextStep",
        "ThoughtStep",
        "ToolCallStep",
        "UsageStep",
        "builtin_scripts",
        "create_scripted_provider",
        "load_script",
        "loads_script",
        "parse_script",
    }
    for name in scripted.__all__:
        assert hasattr(scripted, name)


def test_scripted_provider_is_a_model_provider() -> None:
    provider: ModelProvider = ScriptedProvider()
    assert provider.name == "scripted"


def spec_json_examples() -> list[str]:
    return re.findall(r"```json\n(.*?)```", SPEC.read_text(encoding="utf-8"), flags=re.S)


def test_spec_has_examples() -> None:
    assert len(spec_json_examples()) >= 4


@pytest.mark.requirement("SCRIPT-001")
@pytest.mark.parametrize("index", range(len(spec_json_examples())))
def test_every_spec_example_loads(index: int) -> None:
    script = loads_script(spec_json_examples()[index], source=f"spec example {index + 1}")
    assert script.calls


def test_spec_help_desk_example_is_the_builtin_stream() -> None:
    (example,) = [e for e in spec_json_examples() if '"help-desk-refund"' in e]
    spec_script = loads_script(example)
    builtin = builtin_scripts()["help-desk-refund"]
    assert spec_script.calls[0] == builtin.calls[0]


@pytest.mark.requirement("SCRIPT-051")
def test_spec_error_examples_are_the_real_messages() -> None:
    spec = SPEC.read_text(encoding="utf-8")
    typo = {
        "name": "x",
        "description": "d",
        "calls": [
            {
                "attempts": [
                    [{"finish": "stop"}],
                    [{"text": "a"}, {"text": "b"}, {"tool_call": "f", "argumens": {}}],
                ]
            }
        ],
    }
    unfinished = {
        "name": "x",
        "description": "d",
        "calls": [{"attempts": [[{"text": "a"}, {"usage": {}}]]}],
    }
    for data in (typo, unfinished):
        with pytest.raises(scripted.ScriptError) as caught:
            parse_script(data, source="refund.json")
        assert str(caught.value) in spec


def test_requirements_are_specified_and_tested() -> None:
    requirements = tomllib.loads(REQUIREMENTS.read_text(encoding="utf-8"))["requirement"]
    ids = [r["id"] for r in requirements]
    assert len(ids) == len(set(ids))
    spec = SPEC.read_text(encoding="utf-8")
    for requirement in requirements:
        assert requirement["level"] in ("MUST", "SHOULD", "MAY")
        assert requirement["spec"] == f"spec/scripted-stream.md#{requirement['id'].lower()}"
        assert f'<a id="{requirement["id"].lower()}"></a>' in spec
        assert f"**{requirement['id']} ({requirement['level']})" in spec
    marked = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        marked |= set(re.findall(r'requirement\("(SCRIPT-\d+)"\)', path.read_text()))
    assert marked <= set(ids)
    # Every MUST is checked by at least one test.
    assert {r["id"] for r in requirements if r["level"] == "MUST"} <= marked


@pytest.mark.requirement("SCRIPT-050")
def test_builtins_ship_as_package_data() -> None:
    folder = files("acp_bridge.providers.scripted").joinpath("scripts")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".json"))
    assert names == sorted(f"{name}.json" for name in builtin_scripts())
    for name, script in builtin_scripts().items():
        assert script.source == f"<built-in scripts/{name}.json>"


@pytest.mark.requirement("SCRIPT-050")
def test_builtins_are_not_read_at_import() -> None:
    code = (
        "import acp_bridge.providers.scripted as s\n"
        "p = s.ScriptedProvider()\n"
        "before = s.builtin_scripts.cache_info().currsize\n"
        "p.available_scripts()\n"
        "print(before, s.builtin_scripts.cache_info().currsize)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == ["0", "1"]
