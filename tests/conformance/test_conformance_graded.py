"""The graded-clients table of editor_samples/README.md: rendered from the result files in
spec/conformance/graded/, and those results re-checked by grading the clients again."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from acp_bridge.conformance import REQUIREMENTS
from acp_bridge.conformance._graded import GRADED_FORMAT, load_graded, render_table

ROOT = Path(__file__).resolve().parents[2]
GRADED = ROOT / "spec" / "conformance" / "graded"
README = ROOT / "editor_samples" / "README.md"
_BLOCK = re.compile(r"<!-- graded-clients:begin[^>]*-->\n(.*?)<!-- graded-clients:end -->", re.S)
# Scenarios re-graded per client (the full runs take minutes: real back-off waits).
_REGRADED = ["hello", "broken-mid-word", "tool-call-then-break"]


def _record(name: str) -> dict:
    return json.loads((GRADED / f"{name}.json").read_text())


@pytest.mark.requirement("KIT-005")
def test_the_readme_table_is_the_rendering_of_the_result_files() -> None:
    match = _BLOCK.search(README.read_text(encoding="utf-8"))
    assert match, "editor_samples/README.md has no graded-clients block"
    assert match.group(1) == render_table(load_graded(GRADED)), (
        "run `acp-bridge conformance table` and paste it between the graded-clients markers"
    )


@pytest.mark.requirement("KIT-005")
def test_every_result_file_is_well_formed() -> None:
    records = load_graded(GRADED)
    assert len(records) == len(list(GRADED.glob("*.json")))
    for record in records:
        assert record["format"] == GRADED_FORMAT
        assert set(record["requirements"]) <= set(REQUIREMENTS)
        failed = {r for r, passed in record["requirements"].items() if not passed}
        assert failed == set(record["firstDifference"]), record["client"]
        assert record["passed"] == (not failed)


@pytest.mark.requirement("KIT-004")
def test_the_reference_reducer_passes_everything() -> None:
    record = _record("reference-python")
    assert record["passed"] is True
    assert set(record["requirements"]) == set(REQUIREMENTS)


def _regrade(*command: str, text: bool, env: dict[str, str] | None = None) -> dict:
    argv = [sys.executable, "-m", "acp_bridge", "conformance", "grade-client", "--json"]
    if text:
        argv.append("--text")
    for name in _REGRADED:
        argv += ["--scenario", name]
    done = subprocess.run(
        [*argv, "--", *command],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    return {s["name"]: s["passed"] for s in report["scenarios"]}


@pytest.mark.npm
@pytest.mark.subprocess
@pytest.mark.requirement("KIT-006")
@pytest.mark.requirement("KIT-005")
def test_acpx_graded_again_gives_the_recorded_results(tmp_path: Path) -> None:
    from subprocess_util import acpx_executable, isolated_env

    acpx = acpx_executable()
    env = isolated_env(tmp_path)  # acpx keeps its state under HOME
    shown = _regrade(
        str(acpx),
        "--agent",
        "{agent}",
        "--approve-all",
        "--format",
        "text",
        "exec",
        "{prompt}",
        text=True,
        env=env,
    )
    recorded = _record("acpx")["scenarios"]
    assert shown == {name: recorded[name] for name in _REGRADED}
    # acpx shows the answer of a plain turn, and glues the abandoned partial of a retry.
    assert shown == {"hello": True, "broken-mid-word": False, "tool-call-then-break": False}


@pytest.mark.subprocess
@pytest.mark.requirement("KIT-006")
def test_the_python_sdk_example_client_graded_again_gives_the_recorded_results(
    tmp_path: Path,
) -> None:
    import os

    from subprocess_util import isolated_env

    env = isolated_env(tmp_path / "home", {"TMPDIR": str(tmp_path)})
    fetch = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         "-d", str(tmp_path / "acp-bridge-sdk-example-0.12.1"), "agent-client-protocol==0.12.1"],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    if fetch.returncode != 0:
        message = f"the SDK's sdist (examples/client.py) comes from PyPI: {fetch.stderr[-300:]}"
        if os.environ.get("CI"):
            raise AssertionError(f"CI must run this test: {message}")
        pytest.skip(message)
    shown = _regrade("sh", "tests/conformance/sdk_example_client.sh", text=True, env=env)
    recorded = _record("python-sdk-example")["scenarios"]
    assert shown == {name: recorded[name] for name in _REGRADED}
    assert shown["broken-mid-word"] is False
