"""Session start: spawn -> `initialize`, -> `session/new`, -> first chunk of a prompt (issue 15.1).

What a user waits for when opening a thread and sending the first message. For each target a
fresh process is spawned and driven as an editor does: `initialize`, then `session/new` once it
is answered, then `session/prompt` once that is answered; the clock (started at spawn) is read
at each response and at the first `session/update` carrying an `agent_message_chunk`.

- acp-bridge: `python -m acp_bridge --state-dir TMP` (the scripted provider's default script);
- sdk-echo-agent: `benchmarks/_sdk_echo_agent.py`, the official Python SDK's agent sending one
  chunk echoing the prompt (the least any agent does before its first chunk).

acp-bridge keeps the compiled code of its dataclasses' methods in a cache under
`$XDG_CACHE_HOME/acp-bridge` (STARTUP-008): the warm-up run fills it, as a user's first start
does; `--first-start` gives every acp-bridge spawn an empty one instead.

Runs are interleaved in a rotating order after discarded warm-ups; medians are reported, and the
ratios acp-bridge / SDK (targets: initialize <= 0.2, session/new <= 0.3, first chunk <= 0.35).

    pip install -e '.[bench]'
    python benchmarks/bench_session_start.py -n 15
    python benchmarks/bench_session_start.py --json
    python benchmarks/bench_session_start.py -n 15 --first-start
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _bytecode import compile_agents

HERE = Path(__file__).resolve().parent
TARGETS = {"initialize": 0.2, "session/new": 0.3, "first chunk": 0.35}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


class _Reader:
    def __init__(self, process: subprocess.Popen[bytes], deadline: float) -> None:
        assert process.stdout is not None
        self.fd = process.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buffer = b""
        self.deadline = deadline
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)

    def until(self, done: Any) -> dict[str, Any]:
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                if done(message):
                    if "error" in message:
                        raise RuntimeError(f"error reply: {line[:300]!r}")
                    return message
            remaining = self.deadline - time.perf_counter()
            if remaining <= 0 or not self.selector.select(remaining):
                raise RuntimeError("no reply in time")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise RuntimeError(f"stdout closed: {self.buffer[:300]!r}")
            self.buffer += chunk


def _is_chunk(message: dict[str, Any]) -> bool:
    update = (message.get("params") or {}).get("update") or {}
    return (
        message.get("method") == "session/update"
        and update.get("sessionUpdate") == "agent_message_chunk"
    )


def _cpu_at_exit(process: subprocess.Popen[bytes], deadline: float) -> float:
    """The process's user + system CPU seconds, once it has exited (bounded wait)."""
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid == process.pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.perf_counter() > deadline:
            raise RuntimeError("the agent did not exit after stdin closed")
        time.sleep(0.005)  # a poll of the benchmark's own child, not a test wait


def measure(
    argv: list[str],
    cwd: str,
    timeout: float,
    run_in: str | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, float]:
    start = time.perf_counter()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=run_in,
        env=env,
    )
    assert process.stdin is not None
    marks: dict[str, float] = {}
    try:
        reader = _Reader(process, start + timeout)
        init = {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": True,
            },
            "clientInfo": {"name": "bench-session-start", "version": "1"},
        }
        process.stdin.write(
            _line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        )
        process.stdin.flush()
        reader.until(lambda m: m.get("id") == 1)
        marks["initialize"] = time.perf_counter() - start
        process.stdin.write(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "session/new",
                    "params": {"cwd": cwd, "mcpServers": []},
                }
            )
        )
        process.stdin.flush()
        session = reader.until(lambda m: m.get("id") == 2)["result"]["sessionId"]
        marks["session/new"] = time.perf_counter() - start
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}
        process.stdin.write(
            _line({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
        )
        process.stdin.flush()
        reader.until(_is_chunk)
        marks["first chunk"] = time.perf_counter() - start
        reader.until(lambda m: m.get("id") == 3)
        process.stdin.close()
        marks["cpu"] = _cpu_at_exit(process, start + timeout)
        return marks
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--first-start",
        action="store_true",
        help="give every acp-bridge spawn an empty code cache (STARTUP-008): what the first "
        "start after an install or an upgrade pays; by default the warm-up run fills it, as "
        "a user's first start does",
    )
    parser.add_argument(
        "--compare",
        metavar="CHECKOUT",
        help="also run the acp-bridge of another checkout (e.g. main before a change), "
        "interleaved with the others: its ratios to the SDK agent are printed too",
    )
    args = parser.parse_args()
    python = sys.executable
    compile_agents(python)  # as pip leaves an installed wheel (benchmarks/_bytecode.py)
    where: dict[str, str | None] = {}
    if args.compare:  # `python -m acp_bridge` run from the checkout imports its package
        where["acp-bridge@compare"] = str(Path(args.compare).resolve())
        subprocess.run(
            [
                python,
                "-c",
                "import compileall, sys; compileall.compile_dir(sys.argv[1], quiet=2)",
                str(Path(args.compare) / "acp_bridge"),
            ],
            check=True,
            timeout=300,
        )
    with tempfile.TemporaryDirectory(prefix="bench-session-start-") as tmp:
        targets = {
            "acp-bridge": [python, "-m", "acp_bridge", "--state-dir", f"{tmp}/state"],
            "sdk-echo-agent": [python, str(HERE / "_sdk_echo_agent.py")],
        }
        for name in where:
            targets[name] = [python, "-m", "acp_bridge", "--state-dir", f"{tmp}/{name}"]
        samples: dict[str, dict[str, list[float]]] = {
            name: {mark: [] for mark in (*TARGETS, "cpu")} for name in targets
        }
        names = list(targets)
        spawns = iter(range(1_000_000))

        def env_for(name: str) -> dict[str, str] | None:
            if not args.first_start or name == "sdk-echo-agent":
                return None
            return {**os.environ, "XDG_CACHE_HOME": f"{tmp}/cache-{next(spawns)}"}

        for _ in range(args.warmup):
            for name in names:
                measure(targets[name], tmp, args.timeout, where.get(name), env_for(name))
        for run in range(args.runs):
            turn = run % len(names)
            for name in names[turn:] + names[:turn]:
                measured = measure(targets[name], tmp, args.timeout, where.get(name), env_for(name))
                for mark, value in measured.items():
                    samples[name][mark].append(value * 1000)
    medians = {
        n: {m: statistics.median(v) for m, v in marks.items()} for n, marks in samples.items()
    }
    ratios = {m: medians["acp-bridge"][m] / medians["sdk-echo-agent"][m] for m in (*TARGETS, "cpu")}
    compared = {
        name: {m: medians[name][m] / medians["sdk-echo-agent"][m] for m in (*TARGETS, "cpu")}
        for name in where
    }
    if args.json:
        print(
            json.dumps(
                {
                    "runs": args.runs,
                    "mediansMs": medians,
                    "ratios": ratios,
                    "comparedRatios": compared,
                    "targets": TARGETS,
                    "samplesMs": samples,
                },
                indent=2,
            )
        )
        return 0
    print(f"session start, {args.runs} interleaved runs per agent (medians, ms)")
    print(f"{'':14}{'acp-bridge':>12}{'sdk-echo-agent':>16}{'ratio':>8}  target")
    for mark, target in TARGETS.items():
        verdict = "met" if ratios[mark] <= target else "NOT met"
        print(
            f"{mark:14}{medians['acp-bridge'][mark]:12.1f}{medians['sdk-echo-agent'][mark]:16.1f}"
            f"{ratios[mark]:8.2f}  <= {target} {verdict}"
        )
    bridge_cpu, sdk_cpu = medians["acp-bridge"]["cpu"], medians["sdk-echo-agent"]["cpu"]
    print(
        f"{'cpu (run)':14}{bridge_cpu:12.1f}{sdk_cpu:16.1f}{ratios['cpu']:8.2f}"
        "  (user+sys of the whole run, to the prompt response; less load-dependent)"
    )
    for name, theirs in compared.items():
        figures = ", ".join(f"{m} {theirs[m]:.2f}" for m in (*TARGETS, "cpu"))
        print(f"{name} ({where[name]}) / sdk-echo-agent: {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
