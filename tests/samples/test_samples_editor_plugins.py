"""The Emacs and Neovim samples, run in the real editors against the real bridge.

`editor_samples/emacs/acp-bridge-agent-shell.el` is loaded into Emacs with agent-shell 0.63.6
and its ERT suite drives a real agent-shell buffer, which launches `python -m acp_bridge` with
the scripted model; `editor_samples/neovim/lua/acp_bridge/codecompanion.lua` is loaded into
headless Neovim with CodeCompanion.nvim and its TAP suite does the same with a CodeCompanion
chat. Each suite runs once (module fixtures); each requirement is its own test here. Both suites
also check the plugins as they are, without the sample, and record their defects: those are
the "without our sample" rows of editor_samples/README.md.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from editor_runtimes import REPO, bridge_command, emacs, neovim, oracles

pytestmark = [pytest.mark.subprocess]

SAMPLES = REPO / "editor_samples"
SUITE_TIMEOUT = 900  # seconds: the whole suite, on a slow shared CI machine


@dataclass(frozen=True, slots=True)
class SuiteRun:
    """The outcome of every test of one editor's suite, by name."""

    outcomes: dict[str, bool]
    output: str

    def assert_passed(self, name: str) -> None:
        assert name in self.outcomes, f"{name!r} did not run:\n{self.output[-4000:]}"
        assert self.outcomes[name], f"{name!r} failed:\n{self.output[-6000:]}"


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
        check=False,
    )
    return done.stdout + done.stderr


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["ACP_BRIDGE_TEST_COMMAND"] = bridge_command()
    env["HOME"] = str(tmp)  # the plugins write caches and transcripts under HOME
    env.pop("ACP_BRIDGE_STATE_DIR", None)
    return env


@pytest.fixture(scope="module")
def agent_shell(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    program = emacs()
    plugins = oracles() / "emacs"
    tmp = tmp_path_factory.mktemp("emacs")
    output = _run(
        [
            program,
            "--batch",
            "-Q",
            *("-L", str(plugins / "acp.el")),
            *("-L", str(plugins / "shell-maker")),
            *("-L", str(plugins / "agent-shell")),
            *("-L", str(SAMPLES / "emacs")),
            *("-l", str(SAMPLES / "emacs" / "test" / "acp-bridge-agent-shell-test.el")),
            "-f",
            "ert-run-tests-batch-and-exit",
        ],
        _env(tmp),
        tmp,
    )
    outcomes = {
        name: verdict == "passed"
        for verdict, name in re.findall(r"^\s*(passed|FAILED)\s+\d+/\d+\s+(\S+)", output, re.M)
    }
    return SuiteRun(outcomes, output)


@pytest.fixture(scope="module")
def codecompanion(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    program = neovim()
    plugins = oracles() / "neovim"
    tmp = tmp_path_factory.mktemp("neovim")
    env = _env(tmp)
    env["CODECOMPANION"] = str(plugins / "codecompanion.nvim")
    env["PLENARY"] = str(plugins / "plenary.nvim")
    env["XDG_STATE_HOME"] = str(tmp / "state")
    env["XDG_DATA_HOME"] = str(tmp / "data")
    output = _run(
        [
            program,
            "--headless",
            "-u",
            "NONE",
            "-c",
            f"luafile {SAMPLES / 'neovim' / 'test' / 'run.lua'}",
        ],
        env,
        tmp,
    )
    outcomes = {
        name: verdict == "ok"
        for verdict, name in re.findall(r"^(ok|not ok) \d+ - (.+)$", output, re.M)
    }
    return SuiteRun(outcomes, output)


# agent-shell 0.63.6 as it is: what its users see today.
def test_agent_shell_without_the_sample_keeps_the_abandoned_partial(agent_shell: SuiteRun) -> None:
    agent_shell.assert_passed("acp-bridge-agent-shell-plain-keeps-abandoned-partial")


def test_agent_shell_without_the_sample_glues_replayed_prompts(agent_shell: SuiteRun) -> None:
    agent_shell.assert_passed("acp-bridge-agent-shell-plain-load-glues-prompts")


@pytest.mark.requirement("EDITOR-002")
def test_agent_shell_with_the_sample_discards_a_broken_word(agent_shell: SuiteRun) -> None:
    agent_shell.assert_passed("acp-bridge-agent-shell-reset-discards-broken-word")


@pytest.mark.requirement("EDITOR-005")
def test_agent_shell_with_the_sample_discards_a_broken_thought(agent_shell: SuiteRun) -> None:
    agent_shell.assert_passed("acp-bridge-agent-shell-reset-discards-broken-thought")


@pytest.mark.requirement("EDITOR-004")
def test_agent_shell_with_the_sample_survives_two_resets(agent_shell: SuiteRun) -> None:
    agent_shell.assert_passed("acp-bridge-agent-shell-reset-twice")


@pytest.mark.requirement("EDITOR-003")
def test_agent_shell_with_the_sample_keeps_the_first_model_call(agent_shell: SuiteRun) -> None:
    agent_shell.assert_passed("acp-bridge-agent-shell-reset-in-second-model-call-keeps-first")


@pytest.mark.requirement("EDITOR-012")
def test_agent_shell_with_the_sample_keeps_replayed_prompts_apart(agent_shell: SuiteRun) -> None:
    agent_shell.assert_passed("acp-bridge-agent-shell-load-keeps-prompts-apart")


def test_agent_shell_suite_ran_whole(agent_shell: SuiteRun) -> None:
    assert len(agent_shell.outcomes) == 7, agent_shell.output[-4000:]
    assert "Ran 7 tests" in agent_shell.output


# CodeCompanion.nvim as it is, then with the sample's honour_reset().
def test_codecompanion_without_the_sample_glues_the_texts(codecompanion: SuiteRun) -> None:
    codecompanion.assert_passed(
        "plain: the abandoned partial is glued to the retried text (EDITOR-002 fails)"
    )


def test_codecompanion_without_the_sample_glues_restored_prompts(codecompanion: SuiteRun) -> None:
    codecompanion.assert_passed(
        "plain: a restored session glues consecutive user prompts (EDITOR-012 fails)"
    )


@pytest.mark.requirement("EDITOR-002")
def test_codecompanion_with_the_sample_discards_a_broken_word(codecompanion: SuiteRun) -> None:
    codecompanion.assert_passed("EDITOR-002: a word broken mid-stream is shown once")


@pytest.mark.requirement("EDITOR-005")
def test_codecompanion_with_the_sample_discards_a_broken_thought(codecompanion: SuiteRun) -> None:
    codecompanion.assert_passed("EDITOR-005: an abandoned thought is discarded")


@pytest.mark.requirement("EDITOR-004")
def test_codecompanion_with_the_sample_survives_two_resets(codecompanion: SuiteRun) -> None:
    codecompanion.assert_passed("EDITOR-004: two resets in a row leave the third attempt only")


@pytest.mark.requirement("EDITOR-003")
def test_codecompanion_with_the_sample_keeps_the_first_model_call(codecompanion: SuiteRun) -> None:
    codecompanion.assert_passed(
        "EDITOR-003: a reset in the 2nd model call keeps the 1st call's text and tool call"
    )


@pytest.mark.requirement("EDITOR-012")
def test_codecompanion_with_the_sample_keeps_restored_prompts_apart(
    codecompanion: SuiteRun,
) -> None:
    codecompanion.assert_passed("EDITOR-012: a restored session keeps user prompts apart")


def test_codecompanion_suite_ran_whole(codecompanion: SuiteRun) -> None:
    assert len(codecompanion.outcomes) == 8, codecompanion.output[-4000:]


# The graded-clients table's rows for the two editors (spec/conformance/graded/), re-checked by
# grading the real editors again on a few scenarios through `acp-bridge conformance grade-client`.
REGRADED = ["broken-mid-word", "broken-thought", "tool-loop-break-second-call"]


def _regrade(command: list[str], env: dict[str, str], tmp: Path) -> dict[str, bool]:
    argv = [sys.executable, "-m", "acp_bridge", "conformance", "grade-client", "--json"]
    for name in REGRADED:
        argv += ["--scenario", name]
    done = subprocess.run(
        [*argv, "--", *command],
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
        check=False,
        cwd=tmp,
        env=env,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report = json.loads(done.stdout)
    return {scenario["name"]: scenario["passed"] for scenario in report["scenarios"]}


def _recorded(name: str) -> dict[str, bool]:
    results = json.loads((REPO / "spec/conformance/graded" / f"{name}.json").read_text())
    return {scenario: results["scenarios"][scenario] for scenario in REGRADED}


@pytest.mark.requirement("KIT-005")
@pytest.mark.parametrize(
    ("reset_mode", "record"), [("0", "agent-shell"), ("1", "agent-shell-with-sample")]
)
def test_agent_shell_graded_again_gives_the_recorded_results(
    reset_mode: str, record: str, tmp_path: Path
) -> None:
    program = emacs()
    plugins = oracles() / "emacs"
    env = _env(tmp_path)
    env["ACP_BRIDGE_RESET_MODE"] = reset_mode
    command = [
        program,
        "--batch",
        "-Q",
        *("-L", str(plugins / "acp.el")),
        *("-L", str(plugins / "shell-maker")),
        *("-L", str(plugins / "agent-shell")),
        *("-L", str(SAMPLES / "emacs")),
        *("-l", str(SAMPLES / "emacs" / "test" / "acp-bridge-conformance-client.el")),
    ]
    shown = _regrade(command, env, tmp_path)
    assert shown == _recorded(record)
    assert all(shown.values()) is (reset_mode == "1")


@pytest.mark.requirement("KIT-005")
@pytest.mark.parametrize(
    ("reset_mode", "record"), [("0", "codecompanion"), ("1", "codecompanion-with-sample")]
)
def test_codecompanion_graded_again_gives_the_recorded_results(
    reset_mode: str, record: str, tmp_path: Path
) -> None:
    program = neovim()
    plugins = oracles() / "neovim"
    env = _env(tmp_path)
    env["ACP_BRIDGE_RESET_MODE"] = reset_mode
    env["CODECOMPANION"] = str(plugins / "codecompanion.nvim")
    env["PLENARY"] = str(plugins / "plenary.nvim")
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    client = SAMPLES / "neovim" / "test" / "conformance_client.lua"
    shown = _regrade(
        [program, "--headless", "-u", "NONE", "-c", f"luafile {client}"], env, tmp_path
    )
    assert shown == _recorded(record)
    assert all(shown.values()) is (reset_mode == "1")
