"""Per-turn cost in one long session, per provider, and last chunk -> response (issue 15.2).

One acp-bridge process per provider (`--provider openai|anthropic|gemini --base-url <server>`)
plays N prompts in one session against benchmarks/_turn_server.py (its own process), which
answers every request at once with the same short streamed text (12 chunks) and never parses
the request body: what grows from turn to turn is the bridge's own work (history rendered,
encoded and sent, the journal). Per turn, measured from this process:

- wall: `session/prompt` written -> its response read;
- cpu: the bridge process's CPU time during the turn (every thread, /proc/PID/task/*/schedstat);
- tail: the read that brought the turn's last `agent_message_chunk` -> the read that brought
  the response (what the journal does after the stream ends). When both arrive in one read
  it is 0.

Reported: medians over a window of 10 turns around turn 10, turn 100 and turn N, and the ratio
turn N / turn 10 (target: wall <= 1.5). The reference for the tail is benchmarks/
_sdk_stream_agent.py, the official Python SDK's agent forwarding the same OpenAI stream (it sends
no history: only its tail is compared; target bridge tail <= 2 x the SDK's), run in the same
process order right after the bridge's OpenAI session.

    pip install -e '.[bench]'
    python benchmarks/bench_per_turn.py                    # N=1000, all three providers
    python benchmarks/bench_per_turn.py --turns 300 --providers openai --json
    python benchmarks/bench_per_turn.py --profile-bridge /tmp/prof   # cProfile per provider
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
TARGET_GROWTH = 1.5  # wall at turn N <= 1.5 x wall at turn 10
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
        agent._write({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt",
                      "params": params})
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


def run_bridge(provider: str, server: _Server, work: Path, turns: int,
               profile: Path | None) -> list[TurnSample]:
    env = isolated_env(work)
    if provider in _KEYS:
        env[_KEYS[provider]] = "bench-key"
    head = [sys.executable, "-m", "acp_bridge"]
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        head = [sys.executable, "-m", "cProfile", "-o", str(profile / f"{provider}.prof"),
                "-m", "acp_bridge"]
    argv = [*head, "--provider", provider, "--base-url", server.root + _BASE[provider],
            "--model", "bench", "--state-dir", str(work / "state")]
    agent = StdioAgent(argv, env=env, cwd=work)
    try:
        session = _Session(agent, work)
        return [session.prompt(_prompt_text(n)) for n in range(1, turns + 1)]
    finally:
        agent.close()


def run_sdk(server: _Server, work: Path, turns: int) -> list[TurnSample]:
    argv = [sys.executable, str(HERE / "_sdk_stream_agent.py"), server.root + "/v1"]
    agent = StdioAgent(argv, env=isolated_env(work), cwd=work)
    try:
        session = _Session(agent, work)
        return [session.prompt(_prompt_text(n)) for n in range(1, turns + 1)]
    finally:
        agent.close()


def window(samples: list[TurnSample], turn: int, field: str) -> float:
    """The median of `field` over the 10 turns ending at `turn` (1-based)."""
    chosen = samples[max(0, turn - 10) : turn]
    return statistics.median(getattr(s, field) for s in chosen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--providers", default=",".join(PROVIDERS))
    parser.add_argument("--sdk-turns", type=int, default=100)
    parser.add_argument("--profile-bridge", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    providers = [p for p in args.providers.split(",") if p]
    marks = sorted({10, 100, args.turns} & set(range(10, args.turns + 1)))
    report: dict[str, Any] = {"turns": args.turns, "providers": {}}
    server = _Server()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-per-turn-") as tmp:
            for provider in providers:
                work = Path(tmp) / provider
                work.mkdir()
                sent_before = len(server.bodies())
                samples = run_bridge(provider, server, work, args.turns, args.profile_bridge)
                bodies = server.bodies()[sent_before:]
                entry = {
                    f"turn{m}": {f: window(samples, m, f) for f in ("wall_ms", "cpu_ms",
                                                                    "tail_ms")}
                    for m in marks
                }
                entry["requestBytesLast"] = bodies[-1] if bodies else 0
                first, last = entry[f"turn{marks[0]}"], entry[f"turn{marks[-1]}"]
                entry["growth"] = {
                    "wall": last["wall_ms"] / first["wall_ms"],
                    "cpu": last["cpu_ms"] / first["cpu_ms"],
                }
                report["providers"][provider] = entry
            sdk_work = Path(tmp) / "sdk"
            sdk_work.mkdir()
            sdk = run_sdk(server, sdk_work, args.sdk_turns)
            sdk_tail = statistics.median(s.tail_ms for s in sdk[10:] or sdk)
            report["sdk"] = {"tail_ms": sdk_tail,
                             "wall_ms": statistics.median(s.wall_ms for s in sdk[10:] or sdk)}
            if "openai" in report["providers"]:
                tail = report["providers"]["openai"][f"turn{marks[-1]}"]["tail_ms"]
                report["tailOverSdk"] = tail / sdk_tail if sdk_tail else float("inf")
    finally:
        server.close()
    report["targets"] = {"growth.wall": TARGET_GROWTH, "tailOverSdk": TARGET_TAIL}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"per-turn cost, one session of {args.turns} turns per provider (medians of 10 turns)")
    head = "".join(f"{'turn ' + str(m):>16}" for m in marks)
    print(f"{'':22}{head}{'growth':>9}")
    for provider, entry in report["providers"].items():
        for field, label in (("wall_ms", "wall ms"), ("cpu_ms", "cpu ms"),
                             ("tail_ms", "last chunk->resp")):
            cells = "".join(f"{entry['turn' + str(m)][field]:16.2f}" for m in marks)
            growth = entry["growth"].get(field.split("_")[0], None)
            tail = f"{growth:9.2f}" if growth is not None else ""
            print(f"{provider + ' ' + label:22}{cells}{tail}")
        print(f"{provider + ' request bytes':22}{entry['requestBytesLast']:>16} (turn {args.turns})")
    print(f"sdk-stream-agent: last chunk -> response {report['sdk']['tail_ms']:.2f} ms, "
          f"turn {report['sdk']['wall_ms']:.2f} ms")
    if "tailOverSdk" in report:
        verdict = "met" if report["tailOverSdk"] <= TARGET_TAIL else "NOT met"
        print(f"openai tail / sdk tail: {report['tailOverSdk']:.2f} (target <= {TARGET_TAIL}: "
              f"{verdict})")
    for provider, entry in report["providers"].items():
        verdict = "met" if entry["growth"]["wall"] <= TARGET_GROWTH else "NOT met"
        print(f"{provider}: wall turn {marks[-1]} / turn {marks[0]} = "
              f"{entry['growth']['wall']:.2f} (target <= {TARGET_GROWTH}: {verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
