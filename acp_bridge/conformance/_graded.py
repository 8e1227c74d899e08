"""Graded real clients: one result file per client under `spec/conformance/graded/`, and the
table `editor_samples/README.md` shows, rendered from them (so it cannot drift).

    acp-bridge conformance grade-client --record spec/conformance/graded/acpx.json \\
        --client acpx --client-version 0.19.1 --text -- acpx ... exec {prompt}
    acp-bridge conformance table       # the Markdown table, from the result files
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp_bridge.conformance._catalog import REQUIREMENTS
from acp_bridge.conformance._grade import Report

__all__ = ["GRADED_FORMAT", "graded_record", "load_graded", "render_table"]

GRADED_FORMAT = "acp-bridge-graded-client/1"


def graded_record(
    report: Report, *, client: str, version: str, how: str, command: Sequence[str]
) -> dict[str, Any]:
    """What is kept of a report: per requirement pass or fail, per scenario pass or fail,
    and the first difference of each failing requirement."""
    data = report.to_json()
    return {
        "format": GRADED_FORMAT,
        "client": client,
        "version": version,
        "how": how,
        "command": [arg.removeprefix(os.getcwd() + os.sep) for arg in command],
        "passed": data["passed"],
        "requirements": {r["id"]: r["passed"] for r in data["requirements"]},
        "firstDifference": {
            r["id"]: f"{r['failures'][0]['scenario']}: {r['failures'][0]['difference']}"
            for r in data["requirements"]
            if r["failures"]
        },
        "scenarios": {
            s["name"]: ("skipped" if "skipped" in s else s["passed"]) for s in data["scenarios"]
        },
    }


def load_graded(folder: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") == GRADED_FORMAT:
            found.append(data)
    return found


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(i.removeprefix("EDITOR-") for i in ids) if ids else "none"


def render_table(records: Sequence[dict[str, Any]]) -> str:
    """The Markdown table of graded clients (EDITOR requirement numbers)."""
    lines = [
        "| client | version | graded with | passes (EDITOR-0NN) | fails (EDITOR-0NN) "
        "| not graded |",
        "|---|---|---|---|---|---|",
    ]
    for record in records:
        results: dict[str, bool] = record["requirements"]
        passed = [r for r in REQUIREMENTS if results.get(r) is True]
        failed = [r for r in REQUIREMENTS if results.get(r) is False]
        missing = [r for r in REQUIREMENTS if r not in results]
        lines.append(
            f"| {record['client']} | {record['version']} | {record['how']} | "
            f"{_ids(passed)} | {_ids(failed)} | {_ids(missing) if missing else '-'} |"
        )
    return "\n".join(lines) + "\n"
