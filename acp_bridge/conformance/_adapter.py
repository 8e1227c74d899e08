"""Running a reducer adapter over the fixtures (the adapter contract, section 6.2).

The adapter is a program in the plugin's own language: it reads one scenario's wire as NDJSON
on stdin (`{"from": "client"|"agent", "message": <JSON-RPC message>}` per line), feeds the
plugin's reducer, and prints the view as one JSON object on stdout. It runs once per scenario,
with `ACP_CONFORMANCE_SCENARIO` set to the scenario's name.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from typing import Any

from acp_bridge.conformance._fixture import Fixture, wire_lines
from acp_bridge.conformance._grade import Report, ScenarioResult, grade_view

__all__ = ["ADAPTER_TIMEOUT", "grade_reducer", "parse_view_output"]

ADAPTER_TIMEOUT = 120.0
"""Seconds one adapter run may take (an editor started in batch mode is slow to start)."""


def parse_view_output(stdout: str) -> Any:
    """The view an adapter printed: its whole stdout as JSON, else its last non-empty line."""
    text = stdout.strip()
    try:
        return json.loads(text)
    except ValueError:
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines:
            raise ValueError("the adapter printed nothing on stdout") from None
        try:
            return json.loads(lines[-1])
        except ValueError:
            raise ValueError(
                f"the adapter's stdout is not a JSON view; its last line: {lines[-1][:200]!r}"
            ) from None


def _tail(text: str, limit: int = 400) -> str:
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def run_adapter(fixture: Fixture, command: Sequence[str], timeout: float) -> ScenarioResult:
    result = ScenarioResult(fixture.name)
    env = dict(os.environ, ACP_CONFORMANCE_SCENARIO=fixture.name)
    try:
        done = subprocess.run(
            list(command),
            input=wire_lines(fixture.wire),
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        result.error = f"cannot run {command[0]!r}: no such program (is it on PATH?)"
        return result
    except subprocess.TimeoutExpired:
        result.error = f"the adapter did not finish within {timeout:g} s"
        return result
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        result.error = f"the adapter exited with status {done.returncode}: {_tail(stderr)}"
        return result
    try:
        view = parse_view_output(done.stdout.decode("utf-8", "replace"))
    except ValueError as exc:
        result.error = f"{exc} (stderr: {_tail(stderr)})" if stderr.strip() else str(exc)
        return result
    result.checks = grade_view(fixture, view)
    return result


def grade_reducer(
    fixtures: Sequence[Fixture], command: Sequence[str], *, timeout: float = ADAPTER_TIMEOUT
) -> Report:
    """Runs the adapter `command` over every fixture and grades each view."""
    report = Report(f"reducer adapter `{' '.join(command)}`")
    for fixture in fixtures:
        report.scenarios.append(run_adapter(fixture, command, timeout))
    return report
