"""The conformance kit: fixtures, graders and the `acp-bridge conformance` command.

- `load_fixtures` / `Fixture`: the language-neutral scenarios of `spec/conformance/` (the
  exact wire exchange and the view a conforming editor shows, each check tagged with its
  `EDITOR-0NN` requirement);
- `grade_view` / `grade_reducer` / `Report`: grade a view, or a plugin's reducer adapter run
  over every scenario (the adapter contract of spec/editor-conformance.md section 6);
- `view_of_wire`: the reference reducer's view (`acp_bridge.client`) of a wire exchange.

It sits above `client` and `agent` (fixtures are regenerated from the real agent) and below
`cli`.
"""

from acp_bridge.conformance._adapter import grade_reducer, parse_view_output
from acp_bridge.conformance._catalog import REQUIREMENTS, SCENARIOS, Scenario
from acp_bridge.conformance._cli import main_conformance
from acp_bridge.conformance._fixture import (
    FIXTURE_FORMAT,
    VIEW_FIELDS,
    Check,
    Fixture,
    FixtureError,
    fixture_dir,
    load_fixtures,
    parse_fixture,
    wire_lines,
)
from acp_bridge.conformance._grade import CheckResult, Report, ScenarioResult, grade_view
from acp_bridge.conformance._view import editor_events, view_json, view_of_wire

__all__ = [
    "FIXTURE_FORMAT",
    "REQUIREMENTS",
    "SCENARIOS",
    "VIEW_FIELDS",
    "Check",
    "CheckResult",
    "Fixture",
    "FixtureError",
    "Report",
    "Scenario",
    "ScenarioResult",
    "editor_events",
    "fixture_dir",
    "grade_reducer",
    "grade_view",
    "load_fixtures",
    "main_conformance",
    "parse_fixture",
    "parse_view_output",
    "view_json",
    "view_of_wire",
    "wire_lines",
]
