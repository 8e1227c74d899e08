"""The stream benchmark (benchmarks/bench_stream_throughput.py) still runs, on a tiny stream.

It checks the harness, not the speed (2 shared cores make timings meaningless here): every
chunk of the burst and of the paced prompt reaches the reader once and in order through the
bridge (chunk merging on and off) and through the raw loop (the benchmark raises otherwise),
and the JSON summary has the figures and the ratios the issue asks for (with their spread,
the agents' CPU per chunk and chunks per line). The SDK agent needs the optional `bench`
extra, so it is left out here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from subprocess_util import isolated_env, run_bounded

pytestmark = pytest.mark.subprocess

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_stream_throughput.py"


def test_the_benchmark_forwards_every_chunk_through_bridge_and_raw_loop(tmp_path: Path) -> None:
    argv = [
        sys.executable,
        str(BENCHMARK),
        *("--json", "--agents", "bridge,bridge-unmerged,raw", "--runs", "1"),
        *("--chunks", "300", "--warmup", "20", "--paced-chunks", "20", "--gap-us", "200"),
    ]
    done = run_bounded(argv, timeout=120.0, env=isolated_env(tmp_path / "home"))
    assert done.returncode == 0, done.stderr.decode()
    summary = json.loads(done.stdout)

    assert set(summary["agents"]) == {"bridge", "bridge-unmerged", "raw"}
    for figures in summary["agents"].values():
        (run,) = figures["runs"]
        assert run["burst"]["chunks"] == 300
        assert run["paced"]["chunks"] == 20
        assert figures["chunksPerSecond"] > 0
        assert figures["textBytesPerSecond"] > figures["chunksPerSecond"]  # a few bytes each
        assert 0 < figures["pacedLatencyUs"]["p50"] <= figures["pacedLatencyUs"]["p99"]
        assert 0 < figures["burstLatencyUs"]["p50"] <= figures["burstLatencyUs"]["p99"]
        assert figures["cpuUsPerChunk"]["min"] <= figures["cpuUsPerChunk"]["median"]
        spread = figures["textBytesPerSecondSpread"]
        assert spread["min"] <= figures["textBytesPerSecond"] <= spread["max"]
    agents = summary["agents"]
    # One line per chunk without merging; merged lines carry one chunk or more.
    assert agents["bridge-unmerged"]["chunksPerLine"] == 1
    assert agents["raw"]["chunksPerLine"] == 1
    assert agents["bridge"]["chunksPerLine"] >= 1
    unmerged = summary["ratios"]["bridgeUnmergedOverRaw"]  # chunks/s, merging off
    expected = agents["bridge-unmerged"]["chunksPerSecond"] / agents["raw"]["chunksPerSecond"]
    assert unmerged["value"] == pytest.approx(expected)
    assert unmerged["met"] is (unmerged["value"] >= 0.5)
    merged = summary["ratios"]["bridgeOverRaw"]  # text bytes/s, merging on
    expected = agents["bridge"]["textBytesPerSecond"] / agents["raw"]["textBytesPerSecond"]
    assert merged["value"] == pytest.approx(expected)
    assert merged["met"] is (merged["value"] >= 0.9)
    for key in ("bridgeUnmergedOverRaw", "bridgeOverRaw", "bridgeOverRawCpu"):
        ratio = summary["ratios"][key]  # one run: the median of one paired ratio
        assert ratio["min"] == ratio["value"] == ratio["max"]
