"""The cold-start benchmark runs and reports what benchmarks/README.md promises.

One run per target, no warm-up: this checks the script (it starts all three targets, reads
acp-bridge's and the SDK agent's initialize responses, and computes the ratios), not the
figures, which need a quiet machine and `-n 20` or more.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from subprocess_util import isolated_env, run_bounded

pytestmark = [pytest.mark.subprocess]

REPO = Path(__file__).resolve().parents[2]


def test_cold_start_benchmark_reports_all_targets_and_ratios(tmp_path: Path) -> None:
    result = run_bounded(
        [
            sys.executable,
            str(REPO / "benchmarks" / "cold_start.py"),
            "-n",
            "1",
            "--warmup",
            "0",
            "--json",
        ],
        timeout=120,
        env=isolated_env(tmp_path / "home"),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(result.stdout)
    targets = {t["name"]: t for t in report["targets"]}
    assert set(targets) == {
        "acp-bridge",
        "acp-bridge session/new",
        "sdk-minimal-agent",
        "python -c pass",
    }
    for target in targets.values():
        assert target["runs"] == 1
        assert 0 < target["min_ms"] <= target["median_ms"] <= target["p90_ms"] <= target["max_ms"]
    ratios = report["ratios"]
    bridge, sdk = targets["acp-bridge"]["median_ms"], targets["sdk-minimal-agent"]["median_ms"]
    assert ratios["bridge_over_sdk"] == pytest.approx(bridge / sdk, abs=0.001)
    assert report["target"]["met"] == (bridge <= sdk / 3)
    session_new = targets["acp-bridge session/new"]["median_ms"]
    assert ratios["session_new_over_sdk"] == pytest.approx(session_new / sdk, abs=0.001)
