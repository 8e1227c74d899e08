"""`session/load` of long sessions: first replayed update, time per turn, memory (issue 15.3).

Sessions of N turns are recorded first by driving acp-bridge (scripted provider, default
script) through N prompts. Then, per run, a fresh acp-bridge process is started, `initialize`d
and warmed with `session/list` (so the agent is loaded), and `session/load` is sent; measured:

- first update: from writing `session/load` to reading its first `session/update`;
- first update, cold: the same in a process that had only `initialize` before (what an
  editor that reopens a conversation at start sees: nothing of the load path warmed);
- total: from writing it to reading its response (every turn replayed);
- memory: the process's peak RSS growth during the load (VmHWM after minus before);
- CPU: the bridge process's user + system time during the load (what a loaded machine
  moves least; its per-turn figure is computed like the wall-clock one).

Sizes are measured interleaved; the per-turn figure is (total(N_max) - total(N_min)) divided by
the difference in turns. Targets: first update <= 50 ms at every size, <= 0.3 ms per turn, and
memory that does not grow with the session (bounded by a page of turns).

`--tools` loads sessions whose every turn ran a tool (a `write_file` with its diff, then the
answer) and kept its usage, written through the session store's API (driving the agent
through its permission prompts would take far longer than the loads).

    python benchmarks/bench_session_load.py --sizes 100,1000 --runs 5 [--tools]
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

INIT = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}},
    "clientInfo": {"name": "bench-session-load", "version": "1"},
}


class Agent:
    def __init__(self, state: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "acp_bridge", "--state-dir", str(state)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdout is not None
        self.fd = self.process.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)
        self.buffer = b""
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any]) -> int:
        assert self.process.stdin is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        return self.next_id

    def read(self, timeout: float = 120.0) -> dict[str, Any]:
        deadline = time.perf_counter() + timeout
        while b"\n" not in self.buffer:
            if not self.selector.select(max(0.0, deadline - time.perf_counter())):
                raise RuntimeError("no message in time")
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                raise RuntimeError("agent closed stdout")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request = self.send(method, params)
        while True:
            message = self.read()
            if message.get("id") == request:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"]  # type: ignore[no-any-return]

    def peak_rss_kb(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0

    def cpu_ms(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def record(state: Path, cwd: str, turns: int) -> str:
    agent = Agent(state)
    agent.call("initialize", INIT)
    session = agent.call("session/new", {"cwd": cwd, "mcpServers": []})["sessionId"]
    for n in range(turns):
        prompt = [{"type": "text", "text": f"hello, turn {n}"}]
        agent.call("session/prompt", {"sessionId": session, "prompt": prompt})
    agent.close()
    return str(session)


def record_tools(state: Path, cwd: str, turns: int) -> str:
    """A session of `turns` turns, each a tool call with a diff between two texts, written
    through the store (the bridge under test's own `acp_bridge`)."""
    from acp_bridge.providers import AssistantTurn, ToolCall, ToolResult, ToolResults, UserTurn
    from acp_bridge.sessions import (
        DisplaySegment,
        Owner,
        SessionRecord,
        SessionStore,
        StoredModelCall,
        StoredToolCall,
        TurnState,
    )
    from acp_bridge.tools import DiffContent, Location, ToolKind
    from acp_bridge.turn import ToolStatus

    session, owner, path = f"sess_tools{turns}", Owner(), f"{cwd}/notes.txt"
    with SessionStore(state) as store:
        store.create(SessionRecord(session, cwd, (), "ask", "scripted", None, 1.0, 1.0), owner)
        for n in range(turns):
            prompt = [{"type": "text", "text": f"write the notes, turn {n}"}]
            start = store.begin_turn(session, owner, prompt, UserTurn((prompt[0]["text"],)))
            prefix, content = start.id_prefix, f"notes of turn {n}\n" * 5
            call = ToolCall(f"c{n}", "write_file", {"path": "notes.txt", "content": content}, {})
            asked = AssistantTurn(text="Writing the notes.", tool_calls=(call,))
            shown = (DisplaySegment("text", f"{prefix}-m1-a1", "Writing the notes."),)
            store.add_message(
                session, start.seq, asked, model_call=StoredModelCall(1, 1, asked, shown)
            )
            store.save_tool_call(
                session,
                start.seq,
                StoredToolCall(
                    f"{prefix}-t1",
                    1,
                    1,
                    "Write notes.txt",
                    ToolKind.EDIT,
                    ToolStatus.COMPLETED,
                    (DiffContent(path, content, f"notes of turn {n - 1}\n" * 5),),
                    (Location(path),),
                    dict(call.arguments),
                    {"path": path, "bytes": len(content)},
                ),
            )
            result = ToolResult(f"c{n}", "write_file", "Wrote notes.txt.", False)
            store.add_message(session, start.seq, ToolResults((result,)))
            answer = AssistantTurn(text=f"Done, turn {n}.")
            segments = (DisplaySegment("text", f"{prefix}-m2-a1", answer.text),)
            store.add_message(
                session, start.seq, answer, model_call=StoredModelCall(2, 1, answer, segments)
            )
            usage = {"used": 500 + n, "size": 128_000, "sizeSource": "default"}
            store.end_turn(
                session, start.seq, TurnState.COMPLETED, stop_reason="end_turn", usage=usage
            )
        store.release(session, owner)
    return session


def load_once(state: Path, cwd: str, session: str, *, warm: bool = True) -> dict[str, float]:
    agent = Agent(state)
    agent.call("initialize", INIT)
    if warm:
        agent.call("session/list", {})
    before, cpu = agent.peak_rss_kb(), agent.cpu_ms()
    start = time.perf_counter()
    request = agent.send("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []})
    first = None
    updates = 0
    while True:
        message = agent.read()
        if message.get("method") == "session/update":
            updates += 1
            if first is None:
                first = time.perf_counter() - start
        elif message.get("id") == request:
            total = time.perf_counter() - start
            break
    grown, cpu = agent.peak_rss_kb() - before, agent.cpu_ms() - cpu
    agent.close()
    assert first is not None
    return {
        "firstMs": first * 1000,
        "totalMs": total * 1000,
        "rssGrowthKb": grown,
        "updates": updates,
        "cpuMs": cpu,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--tools", action="store_true", help="turns that ran a tool")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-session-load-") as tmp:
        state, cwd = Path(tmp) / "state", tmp
        recorder = record_tools if args.tools else record
        sessions = {n: recorder(state, cwd, n) for n in sizes}
        samples: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
        for n in sizes:  # warm-up
            load_once(state, cwd, sessions[n])
        for run in range(args.runs):
            for n in sizes[run % len(sizes) :] + sizes[: run % len(sizes)]:
                sample = load_once(state, cwd, sessions[n])
                sample["coldFirstMs"] = load_once(state, cwd, sessions[n], warm=False)["firstMs"]
                samples[n].append(sample)
    medians = {
        n: {key: statistics.median(s[key] for s in runs) for key in runs[0]}
        for n, runs in samples.items()
    }
    low, high = min(sizes), max(sizes)
    per_turn = (medians[high]["totalMs"] - medians[low]["totalMs"]) / (high - low)
    cpu_per_turn = (medians[high]["cpuMs"] - medians[low]["cpuMs"]) / (high - low)
    report = {
        "runs": args.runs,
        "medians": medians,
        "perTurnMs": per_turn,
        "cpuPerTurnMs": cpu_per_turn,
        "targets": {"firstMs": 50, "perTurnMs": 0.3},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    kind = "tool-call" if args.tools else "text"
    print(f"session/load of {kind} sessions, {args.runs} interleaved runs per size (medians)")
    for n in sizes:
        m = medians[n]
        print(
            f"  {n:6} turns: first update {m['firstMs']:7.1f} ms (cold {m['coldFirstMs']:6.1f}),"
            f" total {m['totalMs']:8.1f} ms, {m['updates']:.0f} updates,"
            f" peak RSS +{m['rssGrowthKb'] / 1024:.1f} MiB, bridge CPU {m['cpuMs']:.0f} ms"
        )
    print(
        f"per replayed turn: {per_turn:.3f} ms (target <= 0.3), bridge CPU {cpu_per_turn:.3f} ms;"
        " first update target <= 50 ms"
    )
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
