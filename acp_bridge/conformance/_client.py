"""`grade-client`: a headless client, end to end, against the scenario agent (section 6.4).

For each prompt scenario the kit prepares a scratch workspace, writes the scenario's script,
and runs the client command with these placeholders replaced in its arguments (and the same
values in `ACP_CONFORMANCE_*` environment variables):

    {agent}      the scenario agent's command line, shell-quoted: acp-bridge --script FILE ...
    {prompt}     the prompt to send
    {workspace}  the scratch workspace (also the client's working directory)
    {view}       a file the client may write its view JSON to

What the client showed is read from the `{view}` file if it wrote one, else from its stdout:
a view JSON (section 6.2), or with `--text` the plain text the user reads, graded by
`_text.grade_text`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from acp_bridge.client import bridge_command
from acp_bridge.conformance._adapter import parse_view_output
from acp_bridge.conformance._fixture import Fixture
from acp_bridge.conformance._grade import Report, ScenarioResult, grade_view
from acp_bridge.conformance._text import grade_text

__all__ = ["grade_client", "scenario_agent"]

_LOAD_SKIPPED = (
    "a session/load scenario: the kit drives a headless client through prompts only "
    "(grade the client's replay with grade-reducer)"
)


def scenario_agent(script: Path, state_dir: Path) -> list[str]:
    """The scenario agent: acp-bridge itself, playing `script`, with its own state."""
    return [*bridge_command(), "--script", str(script), "--state-dir", str(state_dir)]


def _tail(text: str, limit: int = 400) -> str:
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def _run_one(
    fixture: Fixture, command: Sequence[str], timeout: float, text: bool
) -> ScenarioResult:
    result = ScenarioResult(fixture.name)
    if fixture.kind != "prompt" or len(fixture.prompts) != 1:
        result.skipped = _LOAD_SKIPPED
        return result
    with tempfile.TemporaryDirectory(prefix="acp-conformance-client-") as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        workspace.mkdir()
        for name, content in (fixture.raw or {}).get("workspace", {}).items():
            (workspace / name).write_text(content, encoding="utf-8")
        script = root / f"{fixture.name}.json"
        script.write_text(json.dumps(fixture.script), encoding="utf-8")
        view_file = root / "view.json"
        values = {
            "agent": shlex.join(scenario_agent(script, root / "state")),
            "prompt": fixture.prompts[0],
            "workspace": str(workspace),
            "view": str(view_file),
        }
        argv = [arg.format_map(values) if "{" in arg else arg for arg in command]
        # The client runs in the workspace: paths given relative to here are made absolute.
        argv = [
            str(Path(a).resolve())
            if "/" in a and not Path(a).is_absolute() and Path(a).exists()
            else a
            for a in argv
        ]
        env = dict(os.environ, ACP_CONFORMANCE_SCENARIO=fixture.name)
        env.update({f"ACP_CONFORMANCE_{k.upper()}": v for k, v in values.items()})
        try:
            done = subprocess.run(
                argv,
                cwd=workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except FileNotFoundError:
            result.error = f"cannot run {argv[0]!r}: no such program (is it on PATH?)"
            return result
        except subprocess.TimeoutExpired:
            result.error = f"the client did not finish within {timeout:g} s"
            return result
        stdout = done.stdout.decode("utf-8", "replace")
        stderr = done.stderr.decode("utf-8", "replace")
        written = view_file.read_text(encoding="utf-8") if view_file.is_file() else ""
    if done.returncode != 0 and fixture.name != "gives-up":
        # A failed turn may make a client exit non-zero; any other failure is an error.
        result.error = f"the client exited with status {done.returncode}: {_tail(stderr)}"
        return result
    if text and not written.strip():
        result.checks = grade_text(fixture, stdout)
        return result
    try:
        view = parse_view_output(written if written.strip() else stdout)
    except ValueError as exc:
        result.error = f"{exc}; with --text the kit grades plain output"
        return result
    result.checks = grade_view(fixture, view)
    return result


def grade_client(
    fixtures: Sequence[Fixture], command: Sequence[str], *, timeout: float, text: bool = False
) -> Report:
    """Runs the client `command` once per prompt scenario and grades what it showed."""
    report = Report(f"client `{' '.join(command)}`" + (" (text output)" if text else ""))
    for fixture in fixtures:
        report.scenarios.append(_run_one(fixture, command, timeout, text))
    return report
