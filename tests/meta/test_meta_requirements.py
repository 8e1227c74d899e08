"""spec/requirements/*.toml and the tests agree, both ways.

Every requirement ID is checked by at least one test (`@pytest.mark.requirement("ID")`), and
every ID a test names is defined, with a level and a pointer into spec/.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LEVELS = {"MUST", "SHOULD", "MAY"}


def _requirements() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for path in sorted((ROOT / "spec" / "requirements").glob("*.toml")):
        for item in tomllib.loads(path.read_text())["requirement"]:
            assert item["id"] not in found, f"{item['id']} defined twice ({path.name})"
            found[item["id"]] = {**item, "file": path.name}
    return found


def _marked_ids() -> set[str]:
    ids: set[str] = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "requirement"
            ):
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        ids.add(arg.value)
    return ids


def test_every_requirement_is_well_formed() -> None:
    for rid, item in _requirements().items():
        assert re.fullmatch(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-\d{3}", rid), rid
        assert item.get("level") in LEVELS, rid
        assert item.get("title"), rid
        spec_file = item.get("spec", "").split("#")[0]
        assert spec_file, f"{rid}: no spec"
        assert (ROOT / spec_file).exists(), f"{rid}: {item.get('spec')}"


def test_every_requirement_is_tested() -> None:
    untested = sorted(set(_requirements()) - _marked_ids())
    assert not untested, f"requirements without a test: {untested}"


def test_every_tested_id_is_defined() -> None:
    unknown = sorted(_marked_ids() - set(_requirements()))
    assert not unknown, f"tests name undefined requirements: {unknown}"
