"""Where the turn's tail goes: one bridge, its functions timestamped, step by step (issue 15.2).

bench_per_turn.py gives the tail's figure (the read of the last `agent_message_chunk` -> the
read of the prompt response) against the SDK's; this script says what fills it. It plays
`--turns` prompts in one session of one bridge on `--provider` against benchmarks/_turn_server.py,
the bridge run by benchmarks/_tail_stamps.py, which records every call of the stamped functions
and every write to stdout. Then, per turn from turn 10 on (a turn starts at
`SessionStore.begin_turn`, stamped always), the tail is the span from the end of the write that
carried the turn's last chunk to the start of the write that carried its response, and every
stamped call inside it is a step. Printed: the median tail, each step's median duration and start
(us from the chunk's write), and with `--show N` the first N analysed turns in full.

    python benchmarks/trace_tail.py                                  # openai, 80 turns
    python benchmarks/trace_tail.py --provider gemini --turns 120 --show 2
    python benchmarks/trace_tail.py --stamp acp_bridge.turn._usage:usage_report

Stamps cost a microsecond or two per call, so the tail here is a little longer than the
benchmark's; compare runs made with the same stamps, one tree against another by running this
script from each (the bridge is the `acp_bridge` that `python` imports).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import bench_per_turn as per_turn
from _bench_processes import StdioAgent, isolated_env

HERE = Path(__file__).resolve().parent
TURN_START = "SessionStore.begin_turn"
STAMPS = (
    f"acp_bridge.sessions._store:{TURN_START}",
    "acp_bridge.sessions._store:SessionStore.end_turn",
    "acp_bridge.sessions._store:SessionStore.mark_answered",
    "acp_bridge.sessions._journal:TurnRecorder.model_call_kept",
    "acp_bridge.sessions._journal:TurnRecorder.send_update",
    "acp_bridge.turn._runner:Turn.run",
    "acp_bridge.turn._model_call:ModelCaller.call",
    "acp_bridge.turn._model_call:ModelCaller.report_usage",
    "acp_bridge.agent._prompting:record_end",
    "acp_bridge.agent._prompting:prompt_response",
    "acp_bridge.agent._prompting:marks_answered",
    "acp_bridge.jsonrpc._peer:JsonRpcPeer.respond",
)
Record = tuple[str, int, int]


def play(provider: str, turns: int, stamps: list[str], out: Path) -> list[float]:
    """The benchmark's tails (ms) of the last 10 turns; the records are in `out`."""
    server = per_turn._Server()
    try:
        with tempfile.TemporaryDirectory(prefix="trace-tail-") as tmp:
            work = Path(tmp)
            env = isolated_env(work)
            env["TAIL_STAMPS"] = ",".join(stamps)
            env["TAIL_STAMPS_OUT"] = str(out)
            if provider in per_turn._KEYS:
                env[per_turn._KEYS[provider]] = "bench-key"
            argv = [
                sys.executable,
                str(HERE / "_tail_stamps.py"),
                "--provider",
                provider,
                "--base-url",
                server.root + per_turn._BASE[provider],
                "--model",
                "bench",
                "--state-dir",
                str(work / "state"),
            ]
            agent = StdioAgent(argv, env=env, cwd=work)
            try:
                session = per_turn._Session(agent, work)
                tails = [session.prompt(per_turn._prompt_text(n)).tail_ms for n in range(turns)]
            finally:
                agent.close()
    finally:
        server.close()
    return tails[-10:]


def read_records(path: Path) -> list[Record]:
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        name, start, end = line.split("\t")
        records.append((name, int(start), int(end)))
    return sorted(records, key=lambda r: r[1])


def by_turn(records: list[Record]) -> list[list[Record]]:
    turns: list[list[Record]] = []
    for record in records:
        if record[0] == TURN_START or not turns:
            turns.append([])
        turns[-1].append(record)
    return turns


def tail_of(turn: list[Record]) -> tuple[int, int] | None:
    """(end of the last chunk's write, start of the response's write), in ns."""
    chunks = [r for r in turn if r[0].startswith("WRITE") and "agent_message" in r[0]]
    responses = [r for r in turn if r[0].startswith("WRITE") and "response" in r[0]]
    if not chunks or not responses:
        return None
    return chunks[-1][2], responses[-1][1]


def report(records: list[Record], show: int) -> None:
    tails: list[float] = []
    steps: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for index, turn in enumerate(by_turn(records)[10:]):
        span = tail_of(turn)
        if span is None:
            continue
        begin, end = span
        tails.append((end - begin) / 1000)
        inside = [r for r in turn if r[2] > begin and r[1] < end]
        for name, start, stop in inside:
            steps[name].append(((start - begin) / 1000, (stop - start) / 1000))
        if index < show:
            print(f"-- turn {index + 10}: tail {(end - begin) / 1000:.1f} us")
            for name, start, stop in turn:
                if stop >= begin - 50_000:
                    print(f"{(start - begin) / 1000:10.1f} {(stop - start) / 1000:9.1f}  {name}")
    if not tails:
        raise SystemExit("no turn with both a chunk's write and the response's write")
    print(
        f"tail (end of the last chunk's write -> start of the response's write): median"
        f" {statistics.median(tails):.1f} us over {len(tails)} turns"
    )
    print(f"{'step':52} {'calls':>6} {'starts at':>10} {'takes':>9}  (medians, us)")
    ordered = sorted(steps.items(), key=lambda item: statistics.median(s for s, _ in item[1]))
    for name, spans in ordered:
        starts = statistics.median(s for s, _ in spans)
        takes = statistics.median(t for _, t in spans)
        print(f"{name:52} {len(spans):6} {starts:10.1f} {takes:9.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=per_turn.PROVIDERS, default="openai")
    parser.add_argument("--turns", type=int, default=80)
    parser.add_argument(
        "--stamp",
        action="append",
        default=[],
        metavar="MODULE:NAME",
        help="another function to stamp, patched where its caller looks it up (repeatable)",
    )
    parser.add_argument("--show", type=int, default=0, help="print the first N turns in full")
    parser.add_argument("--events", type=Path, help="keep the records in this file")
    args = parser.parse_args()
    if args.turns <= 10:
        parser.error("--turns must be over 10: turns 1-10 are not analysed")
    with tempfile.TemporaryDirectory(prefix="trace-tail-out-") as tmp:
        out = args.events or Path(tmp) / "records.tsv"
        tails = play(args.provider, args.turns, [*STAMPS, *args.stamp], out)
        print(f"{args.provider}, {args.turns} turns; the benchmark's tails of the last 10 (ms):")
        print("  " + " ".join(f"{t:.2f}" for t in tails))
        report(read_records(out), args.show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
