"""Big files through the bridge (issue 15.5): a 10 MB edit_file and a 50 MB read through the editor.

Each run spawns the bridge (`--provider scripted`, a fresh state dir) and drives it over stdio
as an editor would, answering `session/request_permission` with allow-once and, for the read,
`fs/read_text_file` from the disk (honouring `line`/`limit`). It measures:

- edit (10 MB, local disk): the tool's time (in_progress -> completed update), the turn's
  (prompt -> response), bytes on the bridge's stdout during the turn and how many of them
  carry the diff, state-dir growth (SQLite + WAL), and the bridge's peak RSS during the turn
  (VmHWM, reset before the prompt) over its RSS before it, as a multiple of the file size;
  beside `sed -i` on the same file (wall time, its peak RSS);
- read (50 MB, through the editor): the turn's time, the bytes the editor sent, the bridge's
  peak RSS growth, and the range line the model was given.

    python benchmarks/bench_big_files.py                 # a table, 3 runs each (medians)
    python benchmarks/bench_big_files.py --json --runs 5
    python benchmarks/bench_big_files.py --edit-mb 10 --read-mb 50
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_processes import isolated_env

WAIT = 300.0
MB = 1_000_000


def _status(pid: int, field: str) -> int:
    """A /proc/PID/status field in bytes (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def _dir_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def write_big(path: Path, size: int) -> None:
    """`size` bytes of numbered lines, one line `NEEDLE_LINE` in the middle."""
    line = "this is line {:08d} of a big file, ordinary source text here\n"
    count = size // len(line.format(0))
    with path.open("w") as out:
        for n in range(count):
            out.write("NEEDLE_LINE\n" if n == count // 2 else line.format(n))


class Bridge:
    """The bridge over stdio, read as an editor reads it; every wait bounded."""

    def __init__(self, work: Path, script: Path, *, read_fs: bool) -> None:
        self.work = work
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "acp_bridge",
                "--provider",
                "scripted",
                "--script",
                str(script),
                "--state-dir",
                str(work / "state"),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=isolated_env(work),
            cwd=work,
        )
        self.read_fs = read_fs
        self.buffer = b""
        self.stdout_bytes = 0
        self.sent_bytes = 0
        self.selector = selectors.DefaultSelector()
        assert self.process.stdout is not None
        os.set_blocking(self.process.stdout.fileno(), False)
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        self.sent_bytes += len(data)
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def line(self) -> tuple[bytes, float]:
        deadline = time.monotonic() + WAIT
        parts = [self.buffer]
        while b"\n" not in parts[-1]:  # a 20 MB line comes 64 KiB at a time: no re-scans
            if time.monotonic() > deadline or not self.selector.select(deadline - time.monotonic()):
                raise TimeoutError("the bridge did not answer in time")
            assert self.process.stdout is not None
            chunk = os.read(self.process.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError("the bridge closed its stdout")
            parts.append(chunk)
        raw, self.buffer = b"".join(parts).split(b"\n", 1)
        self.stdout_bytes += len(raw) + 1
        return raw, time.perf_counter()

    def until_answer(self, request_id: int, on_message: Any = None) -> dict[str, Any]:
        while True:
            raw, at = self.line()
            message = json.loads(raw)
            if message.get("id") == request_id and "method" not in message:
                return message
            if on_message is not None:
                on_message(message, raw, at)
            if message.get("method") == "session/request_permission":
                options = message["params"]["options"]
                allow = next(o["optionId"] for o in options if o["kind"] == "allow_once")
                self.send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"outcome": {"outcome": "selected", "optionId": allow}},
                    }
                )
            elif message.get("method") == "fs/read_text_file":
                self.send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"content": _read(message["params"])},
                    }
                )

    def start(self, cwd: Path) -> str:
        fs = {"readTextFile": self.read_fs, "writeTextFile": False}
        self.until_answer(
            self.request(
                "initialize",
                {"protocolVersion": 1, "clientCapabilities": {"fs": fs, "terminal": False}},
            )
        )
        answer = self.until_answer(self.request("session/new", {"cwd": str(cwd), "mcpServers": []}))
        return str(answer["result"]["sessionId"])

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _read(params: dict[str, Any]) -> str:
    """What an editor answers to fs/read_text_file: the lines asked for."""
    line, limit = params.get("line"), params.get("limit")
    with open(params["path"], encoding="utf-8") as source:
        if line is None and limit is None:
            return source.read()
        start = (line or 1) - 1
        picked = []
        for number, text in enumerate(source):
            if number >= start + (limit if limit is not None else 1 << 62):
                break
            if number >= start:
                picked.append(text)
        return "".join(picked)


def _script(path: Path, call: dict[str, Any]) -> Path:
    path.write_text(
        json.dumps(
            {
                "name": "big-file",
                "description": "one big-file tool call",
                "calls": [
                    {"attempts": [[call, {"finish": "auto"}]]},
                    {"attempts": [[{"text": "done"}, {"finish": "stop"}]]},
                ],
            }
        )
    )
    return path


def _turn(bridge: Bridge, session_id: str, seen: Any) -> dict[str, Any]:
    pid = bridge.process.pid
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    before_rss = _status(pid, "VmRSS")
    before_out, before_in = bridge.stdout_bytes, bridge.sent_bytes
    state_before = _dir_bytes(bridge.work / "state")
    start = time.perf_counter()
    answer = bridge.until_answer(
        bridge.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        ),
        seen,
    )
    turn = time.perf_counter() - start
    assert answer["result"]["stopReason"] == "end_turn", answer
    return {
        "turn_s": turn,
        "stdout_bytes": bridge.stdout_bytes - before_out,
        "editor_sent_bytes": bridge.sent_bytes - before_in,
        "peak_rss_growth": _status(pid, "VmHWM") - before_rss,
        "rss_before": before_rss,
        "state_growth": _dir_bytes(bridge.work / "state") - state_before,
    }


def run_edit(size: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "ws").mkdir()
        big = work / "ws" / "big.txt"
        write_big(big, size)
        size = big.stat().st_size
        call = {
            "tool_call": "edit_file",
            "arguments": {"path": "big.txt", "old_text": "NEEDLE_LINE", "new_text": "EDITED_LINE"},
        }
        bridge = Bridge(work, _script(work / "script.json", call), read_fs=False)
        marks: dict[str, float] = {}
        diff_lines = [0]

        def seen(message: dict[str, Any], raw: bytes, at: float) -> None:
            update = message.get("params", {}).get("update") or {}
            if update.get("status") in ("in_progress", "completed", "failed"):
                marks[update["status"]] = at
            carrier = message.get("params", {}).get("toolCall") or update
            content = carrier.get("content")
            if isinstance(content, list) and any(c.get("type") == "diff" for c in content):
                diff_lines[0] += 1

        try:
            figures = _turn(bridge, bridge.start(work / "ws"), seen)
        finally:
            bridge.close()
        assert "EDITED_LINE" in big.read_text()
        figures.update(
            file_bytes=size,
            tool_s=marks["completed"] - marks["in_progress"],
            diff_sent=diff_lines[0],
            state_after_exit=_dir_bytes(work / "state"),
        )
        figures["rss_over_file"] = figures["peak_rss_growth"] / size
        write_big(big, size)
        start = time.perf_counter()
        # /usr/bin/time reports sed's own peak (a child forked from this process would count
        # this process's pages until its exec).
        sed = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "sed", "-i", "s/^NEEDLE_LINE$/EDITED_LINE/", str(big)],
            capture_output=True,
            text=True,
            check=True,
        )
        figures["sed_s"] = time.perf_counter() - start
        figures["sed_peak_rss"] = int(sed.stderr.split()[-1]) * 1024
        return figures


def run_read(size: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "ws").mkdir()
        huge = work / "ws" / "huge.txt"
        write_big(huge, size)
        size = huge.stat().st_size
        bridge = Bridge(
            work,
            _script(
                work / "script.json", {"tool_call": "read_file", "arguments": {"path": "huge.txt"}}
            ),
            read_fs=True,
        )
        told: list[str] = []

        def seen(message: dict[str, Any], raw: bytes, at: float) -> None:
            output = (message.get("params", {}).get("update") or {}).get("rawOutput")
            if output is not None:
                told.append(json.dumps(output))

        try:
            figures = _turn(bridge, bridge.start(work / "ws"), seen)
        finally:
            bridge.close()
        figures.update(file_bytes=size, raw_output=told[-1] if told else None)
        figures["rss_over_file"] = figures["peak_rss_growth"] / size
        return figures


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in runs[0].items():
        values = [run[key] for run in runs]
        out[key] = statistics.median(values) if isinstance(value, int | float) else value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--edit-mb", type=float, default=10)
    parser.add_argument("--read-mb", type=float, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    edits, reads = [], []
    for _ in range(args.runs):  # interleaved
        edits.append(run_edit(int(args.edit_mb * MB)))
        reads.append(run_read(int(args.read_mb * MB)))
    edit, read = _median(edits), _median(reads)
    if args.json:
        print(json.dumps({"edit": edit, "read": read, "runs": args.runs}, indent=2))
        return
    mb = 1 / MB
    print(f"edit_file on a {edit['file_bytes'] * mb:.1f} MB file (medians of {args.runs} runs)")
    print(
        f"  tool time            {edit['tool_s'] * 1000:8.0f} ms   "
        f"sed -i {edit['sed_s'] * 1000:.0f} ms   ratio {edit['tool_s'] / edit['sed_s']:.1f}"
    )
    print(f"  turn time            {edit['turn_s'] * 1000:8.0f} ms")
    print(
        f"  stdout during turn   {edit['stdout_bytes'] * mb:8.1f} MB   messages carrying the diff: "
        f"{edit['diff_sent']}   stdout/file {edit['stdout_bytes'] / edit['file_bytes']:.2f}"
    )
    print(
        f"  state growth         {edit['state_growth'] * mb:8.2f} MB   (after exit: "
        f"{edit['state_after_exit'] * mb:.2f} MB total)"
    )
    print(
        f"  peak RSS growth      {edit['peak_rss_growth'] * mb:8.1f} MB   "
        f"{edit['rss_over_file']:.2f}x the file (target <= 4x); sed -i peak RSS "
        f"{edit['sed_peak_rss'] * mb:.1f} MB"
    )
    print(f"read_file through the editor, {read['file_bytes'] * mb:.1f} MB file")
    print(f"  turn time            {read['turn_s'] * 1000:8.0f} ms")
    print(
        f"  editor sent          {read['editor_sent_bytes'] * mb:8.2f} MB   "
        f"({read['editor_sent_bytes'] / read['file_bytes']:.4f} of the file)"
    )
    print(
        f"  peak RSS growth      {read['peak_rss_growth'] * mb:8.1f} MB   "
        f"{read['rss_over_file']:.2f}x the file"
    )
    print(f"  rawOutput            {read['raw_output']}")


if __name__ == "__main__":
    main()
