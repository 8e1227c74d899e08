"""The TypeScript sample (editor_samples/typescript): a reducer on the official
`@agentclientprotocol/sdk`, graded through the adapter contract, and its own tests under
Node's test runner, against the real bridge.

The sample's packages (pinned in its package.json and package-lock.json) are installed with
`npm ci` on first use and compiled with its pinned `tsc`. Without Node.js the tests skip with
what to install, except under CI, where they must run.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from npm_oracles import NPM_CI, require_node

pytestmark = [pytest.mark.npm, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "editor_samples" / "typescript"
CLI = [sys.executable, "-m", "acp_bridge", "conformance"]
TIMEOUT = 900


def _run(argv: list[str], **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=TIMEOUT, check=False, **options
    )


@pytest.fixture(scope="module")
def built() -> Path:
    """The compiled sample (dist/), after `npm ci` and `tsc` under a file lock."""
    require_node("the TypeScript sample's @agentclientprotocol/sdk")
    lock = Path(tempfile.gettempdir()) / "acp-bridge-typescript-sample.lock"
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        if not (SAMPLE / "node_modules" / ".bin" / "tsc").exists():
            done = _run(list(NPM_CI), cwd=SAMPLE, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, f"`{' '.join(NPM_CI)}` in {SAMPLE}: {done.stderr}"
        done = _run([str(SAMPLE / "node_modules" / ".bin" / "tsc"), "-p", "."], cwd=SAMPLE)
        assert done.returncode == 0, done.stdout + done.stderr
    return SAMPLE / "dist"


@pytest.mark.requirement("KIT-004")
@pytest.mark.requirement("KIT-002")
def test_the_typescript_adapter_passes_every_scenario(built: Path) -> None:
    adapter = built / "src" / "adapter.js"
    done = _run([*CLI, "grade-reducer", "--json", "--", "node", str(adapter)], cwd=ROOT)
    report = json.loads(done.stdout)
    assert done.returncode == 0, report["failedRequirements"]
    assert report["passed"] is True
    assert all(s["passed"] for s in report["scenarios"])


@pytest.mark.requirement("KIT-004")
def test_the_samples_node_tests_pass_against_the_real_bridge(built: Path) -> None:
    env = dict(os.environ, ACP_BRIDGE_COMMAND=shlex.join([sys.executable, "-m", "acp_bridge"]))
    done = _run(["node", "--test", str(built / "test")], cwd=SAMPLE, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
    assert "# skipped 0" in done.stdout


@pytest.mark.requirement("KIT-006")
def test_the_client_example_graded_end_to_end_passes_as_recorded(built: Path) -> None:
    client = built / "src" / "client.js"
    agent_args = ["--agent", "{agent}", "--cwd", "{workspace}", "--view", "{view}", "{prompt}"]
    scenarios = ["broken-thought", "abandoned-write-and-command", "gives-up"]
    selected = [arg for name in scenarios for arg in ("--scenario", name)]
    done = _run(
        [*CLI, "grade-client", "--json", *selected, "--", "node", str(client), *agent_args],
        cwd=ROOT,
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0, json.dumps(report["requirements"], indent=1)[-3000:]
    recorded = json.loads((ROOT / "spec/conformance/graded/typescript-sdk.json").read_text())
    assert recorded["passed"] is True
    assert all(recorded["scenarios"][name] is True for name in scenarios)
