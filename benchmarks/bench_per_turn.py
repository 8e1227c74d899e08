"""Per-turn cost in one long session, per provider, and last chunk -> response (issue 15.2).

Per provider, three agents run side by side, their prompts interleaved (one of each in turn,
so the machine's load falls on all three alike), against benchmarks/_turn_server.py (its own
process), which answers every request at once with the same short streamed text (12 chunks)
and never parses the request body:

- the long session: one acp-bridge process (`--provider openai|anthropic|gemini --base-url
  <server>`) playing N prompts in one session: what grows from turn to turn is the bridge's
  own work (history rendered, encoded and sent, the journal);
- the fresh reference: a second acp-bridge process on the same provider whose session is
  replaced by a new one every 10 prompts (its samples are its sessions' turns 2-10), so at
  any point of the run it shows what an early turn costs under the load of that moment;
- the SDK reference: benchmarks/_sdk_stream_agent.py, the official Python SDK's agent
  forwarding the same stream shape (OpenAI's; it sends no history): only its tail compares.

Per turn, measured from this process: wall (`session/prompt` written -> its response read);
cpu (the agent process's CPU time during the turn, every thread, /proc/PID/task/*/schedstat);
tail (the read that brought the turn's last `agent_message_chunk` -> the read that brought the
response; 0 when both arrive in one read, as the SDK's often do: hence the tail figures are
trimmed means, the middle 80% of the window, where a median would be 0).

Reported per window of `--window` turns (from turn 10, around turn 100, ending at turn N):
the long session's medians, the fresh reference's over the same stretch of the run, and
- growth: long wall at turn N / long wall at turn 10, both of the long session (the figure
  of earlier runs; turn 10 and turn N are minutes apart, under different load);
- growth vs fresh: long wall at turn N / fresh wall in the same stretch (target <= 1.5);
- tail / SDK: the long session's tail at turn N / the SDK's in the same stretch (target <= 2).

    pip install -e '.[bench]'
    python benchmarks/bench_per_turn.py                    # N=1000, all three providers
    python benchmarks/bench_per_turn.py --turns 300 --providers openai --json
    python benchmarks/bench_per_turn.py --profile-bridge /tmp/prof   # cProfile per provider
    python benchmarks/bench_per_turn.py --tail-only --turns 60 --runs 5   # the tail alone
    git archive <commit> acp_bridge | tar -x -C /tmp/before
    python benchmarks/bench_per_turn.py --tail-only --runs 5 --against /tmp/before

`--tail-only` runs only the long session and the SDK agent, interleaved, and reports the tail
over turns 10..N (trimmed means) and its ratio to the SDK's, per run, with the median of the
`--runs` ratios: the quick way to see the last chunk -> response figure. `--against DIR` adds
a third agent, the bridge of another tree, interleaved with both: before and after in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _bench_processes import StdioAgent, isolated_env

HERE = Path(__file__).resolve().parent
PROVIDERS = ("openai", "anthropic", "gemini")
TARGET_GROWTH = 1.5  # wall at turn N <= 1.5 x wall of an early turn (the fresh session's)
TARGET_TAIL = 2.0  # last chunk -> response <= 2 x the SDK agent's
_BASE = {"openai": "/v1", "anthropic": "", "gemini": "/v1beta"}
_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
INIT = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}},
    "clientInfo": {"name": "bench-per-turn", "version": "1"},
}


@dataclass(frozen=True, slots=True)
class TurnSample:
    wall_ms: float
    cpu_ms: float
    tail_ms: float


def _cpu_ns(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that just ended
    return total


class _Server:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "_turn_server.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.root = f"http://127.0.0.1:{int(self.process.stdout.readline())}"

    def bodies(self) -> list[int]:
        with urllib.request.urlopen(f"{self.root}/stats", timeout=30) as reply:
            return list(json.load(reply)["bodies"])

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


class _Session:
    """A `StdioAgent` in one session, its prompts timed from the raw reads of its stdout."""

    def __init__(self, agent: StdioAgent, cwd: Path) -> None:
        self.agent = agent
        agent.call("initialize", INIT)
        result, _ = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        self.session_id = result["sessionId"]

    def prompt(self, text: str) -> TurnSample:
        agent = self.agent
        pid = agent.process.pid
        cpu_before = _cpu_ns(pid)
        start = time.perf_counter()
        last_chunk = response_at = None
        agent._next_id += 1
        request_id = agent._next_id
        params = {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]}
        agent._write(
            {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}
        )
        deadline = time.monotonic() + 120
        while response_at is None:
            if not agent._selector.select(max(0.0, deadline - time.monotonic())):
                raise RuntimeError(f"no response: {agent.stderr_text()}")
            data = os.read(agent._fd, 1 << 20)
            read_at = time.perf_counter()
            if not data:
                raise RuntimeError(f"agent closed stdout: {agent.stderr_text()}")
            *lines, agent._buffer = (agent._buffer + data).split(b"\n")
            for raw in lines:
                if b'"agent_message_chunk"' in raw:
                    last_chunk = read_at
                    continue
                message = json.loads(raw)
                if "method" in message and "id" in message:
                    error = {"code": -32601, "message": "the benchmark editor offers nothing"}
                    agent._write({"jsonrpc": "2.0", "id": message["id"], "error": error})
                elif message.get("id") == request_id:
                    if "error" in message:
                        raise RuntimeError(f"prompt failed: {message['error']}")
                    response_at = read_at
        cpu = (_cpu_ns(pid) - cpu_before) / 1e6
        if last_chunk is None:
            raise RuntimeError("the turn streamed no agent_message_chunk")
        return TurnSample((response_at - start) * 1000, cpu, (response_at - last_chunk) * 1000)


def _prompt_text(turn: int) -> str:
    return f"turn {turn}: go on with the story, one or two sentences, in the same voice please."


def bridge_agent(
    provider: str, server: _Server, work: Path, profile: Path | None, source: Path | None = None
) -> StdioAgent:
    """`source`: a directory holding another `acp_bridge` package (an older tree, e.g. from
    `git archive`), run instead of this one."""
    env = isolated_env(work)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(source), env.get("PYTHONPATH"))))
    if provider in _KEYS:
        env[_KEYS[provider]] = "bench-key"
    head = [sys.executable, "-m", "acp_bridge"]
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        head = [
            sys.executable,
            "-m",
            "cProfile",
            "-o",
            str(profile / f"{provider}.prof"),
            "-m",
            "acp_bridge",
        ]
    argv = [
        *head,
        "--provider",
        provider,
        "--base-url",
        server.root + _BASE[provider],
        "--model",
        "bench",
        "--state-dir",
        str(work / "state"),
    ]
    return StdioAgent(argv, env=env, cwd=work)


def sdk_agent(server: _Server, work: Path) -> StdioAgent:
    argv = [sys.executable, str(HERE / "_sdk_stream_agent.py"), server.root + "/v1"]
    return StdioAgent(argv, env=isolated_env(work), cwd=work)


FRESH_EVERY = 10  # prompts per session of the fresh reference


@dataclass(slots=True)
class Run:
    """One provider's interleaved run: per long-session turn, its sample and the fresh
    reference's and the SDK's taken right after it (None: a fresh session's first turn)."""

    long: list[TurnSample]
    fresh: list[TurnSample | None]
    sdk: list[TurnSample]


def run_provider(
    provider: str, server: _Server, work: Path, turns: int, profile: Path | None
) -> Run:
    agents: list[StdioAgent] = []
    try:
        agents.append(bridge_agent(provider, server, work / "long", profile))
        agents.append(bridge_agent(provider, server, work / "fresh", None))
        agents.append(sdk_agent(server, work / "sdk"))
        long, fresh, sdk = (
            _Session(a, work / name)
            for a, name in zip(agents, ("long", "fresh", "sdk"), strict=True)
        )
        run = Run([], [], [])
        for n in range(1, turns + 1):
            run.long.append(long.prompt(_prompt_text(n)))
            if n > 1 and (n - 1) % FRESH_EVERY == 0:
                fresh = _Session(fresh.agent, work / "fresh")  # a new session, same process
            sample = fresh.prompt(_prompt_text(n))
            run.fresh.append(None if (n - 1) % FRESH_EVERY == 0 else sample)
            run.sdk.append(sdk.prompt(_prompt_text(n)))
        return run
    finally:
        for agent in agents:
            agent.close()


def run_tail(
    provider: str, server: _Server, work: Path, turns: int, against: Path | None
) -> dict[str, float]:
    """Tails over turns 10..N (trimmed means, ms) of the long session ("bridge"), of the
    same from the `against` tree when given ("against"), and of the SDK ("sdk"), their
    prompts interleaved one by one."""
    agents: dict[str, StdioAgent] = {}
    try:
        agents["bridge"] = bridge_agent(provider, server, work / "bridge", None)
        if against is not None:
            agents["against"] = bridge_agent(provider, server, work / "against", None, against)
        agents["sdk"] = sdk_agent(server, work / "sdk")
        sessions = {name: _Session(agent, work / name) for name, agent in agents.items()}
        tails: dict[str, list[float]] = {name: [] for name in sessions}
        for n in range(1, turns + 1):
            for name, session in sessions.items():
                sample = session.prompt(_prompt_text(n))
                if n >= 10:
                    tails[name].append(sample.tail_ms)
        return {name: trimmed_mean(values) for name, values in tails.items()}
    finally:
        for agent in agents.values():
            agent.close()


def tail_only(
    providers: list[str], turns: int, runs: int, against: Path | None, as_json: bool
) -> int:
    report: dict[str, Any] = {"turns": turns, "runs": runs, "providers": {}}
    names = ("bridge", "against") if against is not None else ("bridge",)
    loads: list[float] = []
    server = _Server()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-tail-") as tmp:
            for run in range(runs):
                for provider in providers:  # interleaved: run 1 of each, then run 2...
                    work = Path(tmp) / f"{provider}-{run}"
                    for name in (*names, "sdk"):
                        (work / name).mkdir(parents=True)
                    tails = run_tail(provider, server, work, turns, against)
                    loads.append(os.getloadavg()[0])
                    entry = report["providers"].setdefault(provider, {"runs": []})
                    entry["runs"].append(
                        {
                            **{f"{name}_ms": tails[name] for name in (*names, "sdk")},
                            **{f"{name}_ratio": tails[name] / tails["sdk"] for name in names},
                        }
                    )
    finally:
        server.close()
    for entry in report["providers"].values():
        for name in names:
            entry[f"{name}_median_ratio"] = statistics.median(
                r[f"{name}_ratio"] for r in entry["runs"]
            )
    report["loadAverage"] = [min(loads), max(loads)]
    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"last chunk -> response, turns 10..{turns}, {runs} run(s) per provider (trimmed"
        f" means, ms; load average {min(loads):.1f}-{max(loads):.1f})"
        + (f"; 'against': {against}" if against is not None else "")
    )
    for provider, entry in report["providers"].items():
        for name in names:
            cells = "  ".join(
                f"{r[f'{name}_ms']:.2f}/{r['sdk_ms']:.2f}={r[f'{name}_ratio']:.2f}"
                for r in entry["runs"]
            )
            median = entry[f"{name}_median_ratio"]
            ok = "met" if median <= TARGET_TAIL else "NOT met"
            print(
                f"{provider:10} {name:8} /sdk per run: {cells}; median {median:.2f}"
                f" (target <= {TARGET_TAIL}: {ok})"
            )
    return 0


def span(turn: int, turns: int, width: int) -> slice:
    """The window of `width` turns for mark `turn` (1-based): from turn 10 on for the first
    mark, ending at the last turn for the last, around the mark otherwise."""
    if turn >= turns:
        return slice(max(0, turns - width), turns)
    begin = max(0, min(turn - 1 - (0 if turn <= 10 else width // 2), turns - width))
    return slice(begin, begin + width)


def trimmed_mean(values: list[float]) -> float:
    """The mean of the middle 80% (a tail of 0, both lines in one read, counts as 0)."""
    ordered = sorted(values)
    cut = len(ordered) // 10
    kept = ordered[cut : len(ordered) - cut] or ordered
    return statistics.fmean(kept)


def figures(samples: list[TurnSample | None]) -> dict[str, float]:
    chosen = [s for s in samples if s is not None]
    return {
        "wall_ms": statistics.median(s.wall_ms for s in chosen),
        "cpu_ms": statistics.median(s.cpu_ms for s in chosen),
        "tail_ms": trimmed_mean([s.tail_ms for s in chosen]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--providers", default=",".join(PROVIDERS))
    parser.add_argument("--window", type=int, default=30, help="turns per window (30)")
    parser.add_argument("--profile-bridge", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--tail-only",
        action="store_true",
        help="only the long session and the SDK: the tail figure",
    )
    parser.add_argument("--runs", type=int, default=1, help="runs with --tail-only (1)")
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        help="with --tail-only: a directory holding another acp_bridge package"
        " (e.g. `git archive <commit> acp_bridge | tar -x -C DIR`), run"
        " interleaved beside this one",
    )
    args = parser.parse_args()
    providers = [p for p in args.providers.split(",") if p]
    if args.tail_only:
        return tail_only(providers, args.turns, args.runs, args.against, args.json)
    width = min(args.window, args.turns)
    marks = sorted({10, 100, args.turns} & set(range(10, args.turns + 1)))
    report: dict[str, Any] = {"turns": args.turns, "window": width, "providers": {}}
    server = _Server()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-per-turn-") as tmp:
            for provider in providers:
                work = Path(tmp) / provider
                for name in ("long", "fresh", "sdk"):
                    (work / name).mkdir(parents=True)
                sent_before = len(server.bodies())
                run = run_provider(provider, server, work, args.turns, args.profile_bridge)
                bodies = server.bodies()[sent_before:]
                entry: dict[str, Any] = {}
                for m in marks:
                    window = span(m, args.turns, width)
                    entry[f"turn{m}"] = {
                        **figures(list(run.long[window])),
                        "fresh": figures(run.fresh[window]),
                        "sdk": figures(list(run.sdk[window])),
                    }
                entry["requestBytesLast"] = max(bodies) if bodies else 0
                first, last = entry[f"turn{marks[0]}"], entry[f"turn{marks[-1]}"]
                entry["growth"] = {
                    "wall": last["wall_ms"] / first["wall_ms"],
                    "cpu": last["cpu_ms"] / first["cpu_ms"],
                    "wallVsFresh": last["wall_ms"] / last["fresh"]["wall_ms"],
                    "cpuVsFresh": last["cpu_ms"] / last["fresh"]["cpu_ms"],
                }
                sdk_tail = last["sdk"]["tail_ms"]
                entry["tailOverSdk"] = last["tail_ms"] / sdk_tail if sdk_tail else float("inf")
                report["providers"][provider] = entry
    finally:
        server.close()
    report["targets"] = {"growth.wallVsFresh": TARGET_GROWTH, "tailOverSdk": TARGET_TAIL}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    _print(report, marks)
    return 0


def _print(report: dict[str, Any], marks: list[int]) -> None:
    turns, width = report["turns"], report["window"]
    print(
        f"per-turn cost, one session of {turns} turns per provider, interleaved with a fresh"
        f" session and the SDK agent (windows of {width} turns: medians; tails: trimmed means)"
    )
    head = "".join(f"{'turn ' + str(m):>12}" for m in marks)
    print(f"{'':30}{head}")
    for provider, entry in report["providers"].items():
        rows = (
            ("wall ms", lambda e: e["wall_ms"]),
            ("wall ms, fresh session", lambda e: e["fresh"]["wall_ms"]),
            ("cpu ms", lambda e: e["cpu_ms"]),
            ("cpu ms, fresh session", lambda e: e["fresh"]["cpu_ms"]),
            ("last chunk->resp ms", lambda e: e["tail_ms"]),
            ("  sdk agent", lambda e: e["sdk"]["tail_ms"]),
        )
        for label, get in rows:
            cells = "".join(f"{get(entry['turn' + str(m)]):12.2f}" for m in marks)
            print(f"{provider + ' ' + label:30}{cells}")
        print(f"{provider + ' request bytes':30}{entry['requestBytesLast']:>12} (largest)")
    for provider, entry in report["providers"].items():
        growth = entry["growth"]
        fresh_ok = "met" if growth["wallVsFresh"] <= TARGET_GROWTH else "NOT met"
        tail_ok = "met" if entry["tailOverSdk"] <= TARGET_TAIL else "NOT met"
        print(
            f"{provider}: wall turn {marks[-1]} / fresh session {growth['wallVsFresh']:.2f}"
            f" (target <= {TARGET_GROWTH}: {fresh_ok}); cpu {growth['cpuVsFresh']:.2f};"
            f" wall turn {marks[-1]} / turn {marks[0]} {growth['wall']:.2f}, cpu"
            f" {growth['cpu']:.2f}; tail / sdk {entry['tailOverSdk']:.2f} (target <="
            f" {TARGET_TAIL}: {tail_ok})"
        )


if __name__ == "__main__":
    raise SystemExit(main())
