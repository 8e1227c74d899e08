"""The settings are documented from one table (CONF-DOC-001)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_bridge.cli import build_parser
from acp_bridge.cli._setting_table import SETTINGS, render_markdown
from acp_bridge.cli._settings import BridgeSettings, resolve

pytestmark = pytest.mark.requirement("CONF-DOC-001")

ROOT = Path(__file__).resolve().parents[2]
START = "<!-- settings table: generated from acp_bridge/cli/_setting_table.py"
END = "<!-- end of settings table -->"


@pytest.mark.parametrize("document", ["README.md", "spec/configuration.md"])
def test_the_documented_table_is_the_rendered_one(document: str) -> None:
    text = (ROOT / document).read_text()
    assert text.count(START) == 1, f"{document} has no generated settings table"
    block = text.split(START, 1)[1].split("\n", 1)[1].split(END, 1)[0]
    assert block == render_markdown(), (
        f"{document}'s settings table is out of date; paste the output of "
        "`python -c 'from acp_bridge.cli._setting_table import render_markdown as r; "
        'print(r(), end="")\'`'
    )


def test_the_table_covers_every_setting_and_every_flag() -> None:
    fields = set(BridgeSettings.__dataclass_fields__) - {"sources", "notes"}
    assert {s.name for s in SETTINGS} == fields
    parser_flags = {
        option
        for action in build_parser()._actions
        for option in action.option_strings
        if option.startswith("--") and option not in ("--help", "--version", "--config")
    }
    assert parser_flags == {s.flag for s in SETTINGS if s.flag}


def test_every_environment_variable_of_the_table_is_read(tmp_path: Path) -> None:
    values = {"int": "2048", "float": "7", "list": "a,b", "path": str(tmp_path), "str": "x"}
    values["fraction"] = "0.5"
    for s in SETTINGS:
        if s.env is None or s.kind == "choice":
            continue
        if s.name == "base_url":
            continue  # it implies --provider openai (CONF-ERR-002), tested on its own
        settings = resolve({}, {s.env: values[s.kind]}, "/dev/null")
        assert settings.sources[s.name] == "environment", s.name
