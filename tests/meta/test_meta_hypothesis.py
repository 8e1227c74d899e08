"""Every property test runs under the cold-start Hypothesis profile (tests/conftest.py), and
no test's own `@settings` brings back what the profile turns off."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parents[1]
# What a fresh clone on a loaded machine trips by chance, not by a bug.
TIMING_CHECKS = {HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example}
# A test may narrow its examples (max_examples, stateful step counts) and allow more checks off.
ALLOWED_KEYWORDS = {"max_examples", "suppress_health_check", "stateful_step_count"}


@pytest.mark.requirement("REL-002")
def test_the_profile_in_use_is_the_cold_start_one() -> None:
    current = settings.default
    assert current.deadline is None
    assert set(current.suppress_health_check) >= TIMING_CHECKS
    assert current.print_blob
    if os.environ.get("CI") and not os.environ.get("HYPOTHESIS_PROFILE"):
        assert current.derandomize
        assert current.database is None


def _settings_calls(tree: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "settings"
    ]


@pytest.mark.requirement("REL-002")
def test_no_test_overrides_the_profile() -> None:
    problems = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for call in _settings_calls(ast.parse(path.read_text())):
            where = f"{path.relative_to(TESTS)}:{call.lineno}"
            for keyword in call.keywords:
                if keyword.arg not in ALLOWED_KEYWORDS:
                    problems.append(f"{where}: `{keyword.arg}=` (the profile sets it)")
                elif keyword.arg == "suppress_health_check":
                    keeps = isinstance(keyword.value, ast.List) and any(
                        isinstance(item, ast.Starred)
                        and ast.unparse(item.value) == "settings.default.suppress_health_check"
                        for item in keyword.value.elts
                    )
                    if not keeps:
                        problems.append(
                            f"{where}: start the list with "
                            "*settings.default.suppress_health_check (the profile's)"
                        )
    assert not problems, "\n".join(problems)
