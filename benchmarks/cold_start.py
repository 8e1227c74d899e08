"""Cold start: how long from spawning the agent to its `initialize` response.

Measured side by side in one run, interleaved (run 1 of each target, then run 2 of each, with
the order rotating), so that machine noise falls on all of them alike:

- acp-bridge:        `python -m acp_bridge --state-dir TMP`, spawn -> initialize response;
- sdk-minimal-agent: benchmarks/sdk_minimal_agent.py, the official Python SDK's minimal agent
                     (`agent-client-protocol`), spawn -> initialize response;
- python -c pass:    a bare interpreter, spawn -> exit (the floor any Python agent pays).

Each ACP target gets the initialize request written to its stdin right after spawning, as an
editor does; the clock stops when the complete response line has been read. One discarded
warm-up run per target comes first (so byte-code caches exist, as on a user's machine after the
first launch). The target of issue 2 is acp-bridge at most a third of the SDK agent's median.

    pip install -e '.[bench]'
    python benchmarks/cold_start.py             # table
    python benchmarks/cold_start.py --json      # machine-readable, with every sample
    python benchmarks/cold_start.py -n 50 --warmup 3
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _bytecode import compile_agents

HERE = Path(__file__).resolve().parent
TARGET_RATIO = 1 / 3  # acp-bridge / SDK agent, medians (issue 2)
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": True, "writeTextFile": True},
                    "terminal": True,
                },
                "clientInfo": {"name": "cold-start-benchmark", "version": "1"},
            },
        }
    ).encode()
    + b"\n"
)
SESSION_NEW = (
    b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n'
)


@dataclass
class Target:
    name: str
    argv: list[str]
    until: str  # "initialize" / "session/new" (that response read) or "exit"
    samples_ms: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        data = sorted(self.samples_ms)
        return {
            "name": self.name,
            "command": self.argv,
            "measures": "spawn -> exit"
            if self.until == "exit"
            else f"spawn -> {self.until} response",
            "runs": len(data),
            "median_ms": round(statistics.median(data), 2),
            "p90_ms": round(_percentile(data, 0.9), 2),
            "min_ms": round(data[0], 2),
            "max_ms": round(data[-1], 2),
            "mean_ms": round(statistics.fmean(data), 2),
            "samples_ms": [round(s, 2) for s in self.samples_ms],
        }


def _percentile(sorted_data: Sequence[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (as numpy's default)."""
    if len(sorted_data) == 1:
        return sorted_data[0]
    position = (len(sorted_data) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(sorted_data) - 1)
    return sorted_data[low] + (sorted_data[high] - sorted_data[low]) * (position - low)


def _read_response(process: subprocess.Popen[bytes], deadline: float, request_id: int = 1) -> bytes:
    """Reads stdout until the response to `request_id` (any line before it is skipped)."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    os.set_blocking(fd, False)
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError:
                    raise RuntimeError(f"not JSON on stdout: {line[:200]!r}") from None
                if isinstance(message, dict) and message.get("id") == request_id:
                    if "result" not in message:
                        raise RuntimeError(f"request {request_id} failed: {line[:300]!r}")
                    return line
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or not selector.select(remaining):
                raise RuntimeError("no initialize response in time")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"stdout closed before the initialize response: {buffer!r}")
            buffer += chunk


def measure(target: Target, timeout: float) -> float:
    """One cold start of `target`, in milliseconds."""
    start = time.perf_counter()
    if target.until == "exit":
        subprocess.run(target.argv, check=True, timeout=timeout)
        return (time.perf_counter() - start) * 1000
    process = subprocess.Popen(
        target.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert process.stdin is not None
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        _read_response(process, start + timeout)
        if target.until == "session/new":
            # As an editor does: session/new once initialize is answered (no MCP servers).
            process.stdin.write(SESSION_NEW)
            process.stdin.flush()
            _read_response(process, start + timeout, request_id=2)
        elapsed = (time.perf_counter() - start) * 1000
        process.stdin.close()  # end of input: the agent exits on its own
        process.wait(timeout=timeout)
        return elapsed
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def build_targets(python: str, state_dir: Path) -> list[Target]:
    return [
        Target(
            "acp-bridge", [python, "-m", "acp_bridge", "--state-dir", str(state_dir)], "initialize"
        ),
        Target(
            "acp-bridge session/new",
            [python, "-m", "acp_bridge", "--state-dir", str(state_dir)],
            "session/new",
        ),
        Target("sdk-minimal-agent", [python, str(HERE / "sdk_minimal_agent.py")], "initialize"),
        Target("python -c pass", [python, "-c", "pass"], "exit"),
    ]


def run(runs: int, warmup: int, timeout: float, python: str) -> dict[str, Any]:
    compile_agents(python)  # as pip leaves an installed wheel (benchmarks/_bytecode.py)
    with tempfile.TemporaryDirectory(prefix="acp-bridge-cold-start-") as tmp:
        targets = build_targets(python, Path(tmp) / "state")
        for _ in range(warmup):
            for target in targets:
                measure(target, timeout)
        for index in range(runs):
            # Rotate the order so no target always runs first (or right after another).
            shift = index % len(targets)
            for target in targets[shift:] + targets[:shift]:
                target.samples_ms.append(measure(target, timeout))
    summaries = {t.name: t.summary() for t in targets}
    bridge = summaries["acp-bridge"]["median_ms"]
    sdk = summaries["sdk-minimal-agent"]["median_ms"]
    bare = summaries["python -c pass"]["median_ms"]
    session_new = summaries["acp-bridge session/new"]["median_ms"]
    return {
        "benchmark": "cold start (spawn -> initialize response)",
        "python": python,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "runs": runs,
        "warmup": warmup,
        "targets": list(summaries.values()),
        "ratios": {
            "bridge_over_sdk": round(bridge / sdk, 3),
            "bridge_over_bare_python": round(bridge / bare, 3),
            "sdk_over_bare_python": round(sdk / bare, 3),
            "session_new_over_sdk": round(session_new / sdk, 3),
        },
        "target": {
            "bridge_over_sdk_at_most": round(TARGET_RATIO, 3),
            "met": bridge <= sdk * TARGET_RATIO,
        },
    }


def render(report: dict[str, Any]) -> str:
    lines = [
        f"cold start, {report['runs']} interleaved runs per target "
        f"({report['warmup']} warm-up discarded); Python {report['python_version']}, "
        f"{report['cpus']} CPUs",
        "",
        f"{'target':<23} {'measures':<30} {'median ms':>10} {'p90 ms':>9} {'min ms':>9}",
    ]
    for t in report["targets"]:
        lines.append(
            f"{t['name']:<23} {t['measures']:<30} {t['median_ms']:>10.1f} "
            f"{t['p90_ms']:>9.1f} {t['min_ms']:>9.1f}"
        )
    ratios, target = report["ratios"], report["target"]
    lines += [
        "",
        f"acp-bridge / sdk-minimal-agent (medians): {ratios['bridge_over_sdk']:.2f}  "
        f"(target <= {target['bridge_over_sdk_at_most']:.2f}: "
        f"{'met' if target['met'] else 'NOT met'})",
        f"acp-bridge / python -c pass    (medians): {ratios['bridge_over_bare_python']:.2f}",
        f"sdk-minimal-agent / python -c pass       : {ratios['sdk_over_bare_python']:.2f}",
        f"acp-bridge to session/new / sdk-minimal-agent initialize: "
        f"{ratios['session_new_over_sdk']:.2f}",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=20, help="runs per target (20)")
    parser.add_argument("--warmup", type=int, default=1, help="discarded runs per target (1)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per start (60)")
    parser.add_argument("--python", default=sys.executable, help="interpreter to start")
    parser.add_argument("--json", action="store_true", help="print a JSON report")
    options = parser.parse_args(argv)
    if options.runs < 1:
        parser.error("--runs must be at least 1")
    if options.python == sys.executable and importlib.util.find_spec("acp") is None:
        print(
            "cold_start: the official ACP Python SDK is not installed; "
            "run: pip install -e '.[bench]'",
            file=sys.stderr,
        )
        return 2
    report = run(options.runs, options.warmup, options.timeout, options.python)
    print(json.dumps(report, indent=2) if options.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
