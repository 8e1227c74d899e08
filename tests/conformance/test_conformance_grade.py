"""`acp-bridge conformance`: the reference reducer passes, a naive one fails naming what it
gets wrong, the report says it in words, and the exit status says it to CI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acp_bridge.conformance import grade_view, load_fixtures, view_of_wire

ROOT = Path(__file__).resolve().parents[2]
NAIVE = [sys.executable, str(Path(__file__).with_name("naive_adapter.py"))]
CLI = [sys.executable, "-m", "acp_bridge", "conformance"]
TIMEOUT = 300


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=TIMEOUT, check=False, cwd=ROOT
    )


@pytest.fixture(scope="module")
def naive_report() -> dict:
    done = _run("grade-reducer", "--json", "--", *NAIVE)
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


@pytest.mark.requirement("KIT-003")
@pytest.mark.requirement("EDITOR-002")
@pytest.mark.requirement("EDITOR-004")
@pytest.mark.requirement("EDITOR-005")
def test_a_naive_reducer_fails_naming_the_reset_requirements(naive_report: dict) -> None:
    failed = set(naive_report["failedRequirements"])
    assert {"EDITOR-002", "EDITOR-004", "EDITOR-005"} <= failed
    # It splits on messageId and keeps tool calls right: those pass.
    assert not failed & {"EDITOR-001", "EDITOR-003", "EDITOR-006", "EDITOR-009", "EDITOR-012"}
    assert naive_report["passed"] is False


@pytest.mark.requirement("KIT-003")
def test_the_report_gives_the_first_difference_in_words(naive_report: dict) -> None:
    by_id = {r["id"]: r for r in naive_report["requirements"]}
    failure = next(f for f in by_id["EDITOR-002"]["failures"] if f["scenario"] == "broken-mid-word")
    assert failure["difference"] == (
        'messages[1]: expected the agent message "The stream broke in the middle of a word and '
        'the bridge retried it. You should read this sentence exactly once.", the editor '
        'shows the agent message "The stream broke in the middle of a wo" (the partial text of '
        "an abandoned attempt: the reset marker discards it)"
    )


@pytest.mark.requirement("KIT-002")
@pytest.mark.requirement("KIT-003")
def test_the_python_sample_adapter_passes_every_scenario() -> None:
    done = _run("grade-reducer", "--", sys.executable, "editor_samples/python/adapter.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every requirement passes" in done.stdout
    assert "FAIL" not in done.stdout


@pytest.mark.requirement("KIT-002")
@pytest.mark.parametrize("fixture", load_fixtures(), ids=lambda f: f.name)
def test_the_reference_reducer_passes_every_check(fixture) -> None:
    results = grade_view(fixture, view_of_wire(fixture.wire))
    assert results
    assert all(r.passed for r in results), [r.difference for r in results]


@pytest.mark.requirement("KIT-003")
def test_an_append_only_editor_fails_with_the_glued_text_named() -> None:
    fixture = next(f for f in load_fixtures() if f.name == "tool-call-then-break")
    results = grade_view(fixture, view_of_wire(fixture.wire, "append_only"))
    failed = [r for r in results if not r.passed]
    assert failed[0].difference.startswith("messages[1]: expected the agent message")
    assert "an abandoned attempt's text, which the reset marker discards" in failed[0].difference


@pytest.mark.requirement("KIT-003")
def test_list_show_export_and_usage_errors(tmp_path: Path) -> None:
    listed = _run("list")
    assert listed.returncode == 0
    assert "broken-mid-word" in listed.stdout
    shown = _run("show", "broken-twice")
    assert json.loads(shown.stdout)["name"] == "broken-twice"
    exported = _run("export", str(tmp_path))
    assert exported.returncode == 0
    assert (tmp_path / "gives-up.json").is_file()
    assert (tmp_path / "gives-up.ndjson").is_file()
    lines = (tmp_path / "hello.ndjson").read_text().splitlines()
    assert all(set(json.loads(line)) == {"from", "message"} for line in lines)
    unknown = _run("show", "no-such-scenario")
    assert unknown.returncode == 2
    assert "acp-bridge-agent conformance list" in unknown.stderr
    missing = _run("grade-reducer")
    assert missing.returncode == 2
    assert "after `--`" in missing.stderr


@pytest.mark.requirement("KIT-003")
def test_an_adapter_that_crashes_fails_its_scenarios_with_its_stderr() -> None:
    crash = [sys.executable, "-c", "import sys; sys.exit('adapter broke')"]
    done = _run("grade-reducer", "--scenario", "hello", "--", *crash)
    assert done.returncode == 1
    assert "ERROR hello: the adapter exited with status 1: adapter broke" in done.stdout


@pytest.mark.requirement("EDITOR-012")
@pytest.mark.requirement("EDITOR-001")
def test_a_replay_keeps_two_user_prompts_in_a_row_apart() -> None:
    fixture = next(f for f in load_fixtures() if f.name == "replay-after-retries")
    users = [m["text"] for m in fixture.expected["messages"] if m["role"] == "user"]
    assert users == ["/broken-mid-word", "/empty-answer", "/broken-thought"]
    assert all(r.passed for r in grade_view(fixture, view_of_wire(fixture.wire)))
    # An editor that ignores messageId glues the two prompts: the kit names EDITOR-012.
    glued = grade_view(fixture, view_of_wire(fixture.wire, "append_only"))
    failed = next(r for r in glued if not r.passed)
    assert "EDITOR-012" in failed.check.requirements
    assert '"/empty-answer/broken-thought"' in failed.difference


@pytest.mark.requirement("KIT-006")
def test_text_grading_fails_a_glued_partial_and_passes_the_clean_answer() -> None:
    from acp_bridge.conformance._text import grade_text

    fixture = next(f for f in load_fixtures() if f.name == "broken-mid-word")
    answer = fixture.expected["messages"][1]["text"]
    clean = grade_text(fixture, f"[client] session/new\n↻ retrying (attempt 2)\n{answer}\n[done]")
    assert all(r.passed for r in clean), [r.difference for r in clean]
    glued = grade_text(fixture, f"The stream broke in the middle of a wo{answer}\n[done] end_turn")
    failed = {r.check.field: r.difference for r in glued if not r.passed}
    assert failed["messages"] == (
        'the client shows the agent text "The stream broke in the middle of a wo" 2 times where '
        "the expected view has it once (the partial text of an abandoned attempt, which the "
        "reset marker discards)"
    )
    assert failed["retries"].startswith("the client shows no retry note")
