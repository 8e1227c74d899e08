"""Peak RSS of the bridge under a runaway provider stream and under an editor that stops reading.

    python benchmarks/rss_runaway.py                   # both scenarios, a report
    python benchmarks/rss_runaway.py --json            # the same as JSON, with the samples
    python benchmarks/rss_runaway.py --only runaway --pad 0,16384

The bridge is `python -m acp_bridge --provider openai` at the loopback SSE server
(benchmarks/_sse_server.py, its own process), with the default settings (max_output_bytes
64 MiB). Its peak RSS is the kernel's VmHWM from /proc, read after the scenario; VmRSS is
sampled on the way for the curve.

runaway   The server streams text chunks as fast as the socket takes them and never finishes
          (`endless PAD`: each chunk is one SSE event, its text a marker plus PAD bytes). The
          editor reads everything. The run ends when the prompt's response arrives: the
          max_output_bytes cap stops the model call with an error naming the setting. Run
          once per PAD (token-sized deltas, and large deltas that make the reply's text
          itself approach the cap).
stalled   The server streams `burst N` (1,000,000 chunks by default, ~70 MiB of SSE: the
          cap is raised to 1 GiB for this run) and the editor stops reading stdout right after
          sending the prompt. The benchmark watches the server's
          bytes sent and the bridge's RSS until the bytes stop advancing for `--settle`
          seconds (backpressure reached the server's socket), then the editor reads again and
          every chunk must arrive, in order, before the response.

A benchmark: figures are reported, never asserted (the bounds are proven by
tests/robust/test_robust_bounds.py without timing).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from _bench_processes import SseServer, agent_argv, isolated_env

_MARKER = re.compile(rb" c(\d+)@")
_MIB = 1024 * 1024
_WAIT = 900.0  # a loaded machine: bounded, but generous


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return 0


def _server_stats(base_url: str) -> dict[str, int]:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/stats", timeout=30) as reply:
        stats: dict[str, int] = json.load(reply)
    return stats


class _Bridge:
    """The bridge process with its stdout non-blocking; lines are scanned, not kept."""

    def __init__(self, base_url: str, work: Path, env: dict[str, str] | None = None) -> None:
        (work / "config.toml").write_text("")
        self.proc = subprocess.Popen(
            agent_argv("bridge", base_url, work),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**isolated_env(work), **(env or {})},
            cwd=work,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdin is not None
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._out, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._out, selectors.EVENT_READ)
        self._tail = b""
        self.markers = 0  # chunk markers read so far
        self.next_index = 0  # the marker index expected next (order check)
        self.stdout_bytes = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def read_until_response(self, request_id: int, deadline: float) -> dict[str, Any]:
        """Reads stdout until the response to `request_id`, counting chunk markers."""
        tag = b'"id":%d' % request_id
        while time.monotonic() < deadline:
            if not self._selector.select(1.0):
                continue
            data = os.read(self._out, 1 << 20)
            if not data:
                raise RuntimeError("the bridge closed stdout")
            self.stdout_bytes += len(data)
            *lines, self._tail = (self._tail + data).split(b"\n")
            for line in lines:
                if line.startswith(b'{"jsonrpc":"2.0","method":"session/update"'):
                    for found in _MARKER.finditer(line):
                        if int(found[1]) != self.next_index:
                            raise RuntimeError(f"chunk {found[1]!r} out of order")
                        self.next_index += 1
                        self.markers += 1
                elif tag in line:
                    message: dict[str, Any] = json.loads(line)
                    if message.get("id") == request_id and "method" not in message:
                        return message
        raise TimeoutError(f"no response to request {request_id}")

    def open_session(self, work: Path, deadline: float) -> str:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            }
        )
        self.read_until_response(1, deadline)
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(work), "mcpServers": []},
            }
        )
        session: str = self.read_until_response(2, deadline)["result"]["sessionId"]
        return session

    def prompt(self, session: str, text: str) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
            }
        )

    def rss_kib(self) -> int:
        return _status_kib(self.proc.pid, "VmRSS:")

    def hwm_kib(self) -> int:
        return _status_kib(self.proc.pid, "VmHWM:")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self._selector.close()


def runaway(pad: int) -> dict[str, Any]:
    """A never-ending stream at full speed until the cap stops it; the editor reads."""
    server = SseServer()
    try:
        with tempfile.TemporaryDirectory(prefix="rss-runaway-") as tmp:
            work = Path(tmp)
            bridge = _Bridge(server.base_url, work)
            try:
                deadline = time.monotonic() + _WAIT
                session = bridge.open_session(work, deadline)
                baseline = bridge.rss_kib()
                started = time.monotonic()
                bridge.prompt(session, f"endless {pad}")
                response = bridge.read_until_response(3, deadline)
                elapsed = time.monotonic() - started
                hwm = bridge.hwm_kib()
            finally:
                bridge.close()
            sent = _server_stats(server.base_url)["bytesSent"]
    finally:
        server.close()
    error = response.get("error") or {}
    return {
        "scenario": "runaway",
        "padBytes": pad,
        "seconds": round(elapsed, 1),
        "serverBytesSent": sent,
        "chunksShown": bridge.markers,
        "stdoutBytes": bridge.stdout_bytes,
        "baselineRssMiB": round(baseline / 1024, 1),
        "peakRssMiB": round(hwm / 1024, 1),
        "response": error.get("message", response.get("result")),
        "capFired": "max_output_bytes" in str(error.get("message", "")),
    }


def stalled(chunks: int, settle: float, limit: float) -> dict[str, Any]:
    """The editor stops reading while the server streams `chunks`; then it reads again."""
    server = SseServer()
    try:
        with tempfile.TemporaryDirectory(prefix="rss-stalled-") as tmp:
            work = Path(tmp)
            # A 1,000,000-chunk burst is ~70 MiB of SSE: past the default cap, which is not
            # what this scenario measures.
            cap = {"ACP_BRIDGE_MAX_OUTPUT_BYTES": str(1 << 30)}
            bridge = _Bridge(server.base_url, work, cap)
            try:
                deadline = time.monotonic() + _WAIT
                session = bridge.open_session(work, deadline)
                baseline = bridge.rss_kib()
                before = _server_stats(server.base_url)["bytesSent"]
                started = time.monotonic()
                bridge.prompt(session, f"burst {chunks}")
                samples: list[tuple[float, int, int]] = []  # (s, bytes sent, VmRSS KiB)
                last_change, last_sent = time.monotonic(), -1
                while time.monotonic() - started < limit:  # the editor does not read
                    time.sleep(0.5)
                    sent = _server_stats(server.base_url)["bytesSent"] - before
                    now = time.monotonic()
                    samples.append((round(now - started, 1), sent, bridge.rss_kib()))
                    if sent != last_sent:
                        last_change, last_sent = now, sent
                    elif now - last_change >= settle:
                        break
                stall_hwm = bridge.hwm_kib()
                stalled_at = last_sent
                response = bridge.read_until_response(3, deadline)  # the editor reads again
                total_sent = _server_stats(server.base_url)["bytesSent"] - before
                hwm = bridge.hwm_kib()
            finally:
                bridge.close()
    finally:
        server.close()
    plateau = [rss for _, sent, rss in samples if sent == stalled_at]
    return {
        "scenario": "stalled",
        "chunks": chunks,
        "serverBytesWhenStalled": stalled_at,
        "serverBytesTotal": total_sent,
        "stalledForSeconds": settle,
        "plateauRssMiB": [round(min(plateau) / 1024, 1), round(max(plateau) / 1024, 1)]
        if plateau
        else None,
        "baselineRssMiB": round(baseline / 1024, 1),
        "peakRssWhileStalledMiB": round(stall_hwm / 1024, 1),
        "peakRssMiB": round(hwm / 1024, 1),
        "chunksShown": bridge.markers,
        "allChunksInOrder": bridge.markers == chunks,
        "response": response.get("result", response.get("error")),
        "samples": samples,
    }


def _print(result: dict[str, Any]) -> None:
    if result["scenario"] == "runaway":
        print(
            f"runaway stream, {result['padBytes']} pad bytes/chunk: cap fired "
            f"{result['capFired']} after {result['serverBytesSent'] / _MIB:.0f} MiB sent by the "
            f"server in {result['seconds']} s ({result['chunksShown']:,} chunks shown); bridge "
            f"RSS {result['baselineRssMiB']} MiB before, peak {result['peakRssMiB']} MiB"
        )
        print(f"  response: {str(result['response'])[:160]}")
    else:
        low_high = result["plateauRssMiB"]
        print(
            f"stalled editor, burst of {result['chunks']:,} chunks: the server stopped at "
            f"{result['serverBytesWhenStalled'] / _MIB:.1f} MiB sent (of "
            f"{result['serverBytesTotal'] / _MIB:.0f} MiB), no progress for "
            f"{result['stalledForSeconds']:g} s; bridge RSS {result['baselineRssMiB']} MiB "
            f"before, plateau {low_high} MiB, peak while stalled "
            f"{result['peakRssWhileStalledMiB']} MiB"
        )
        print(
            f"  after the editor read again: {result['chunksShown']:,} chunks in order "
            f"({result['allChunksInOrder']}), response {result['response']}, peak over the "
            f"whole run {result['peakRssMiB']} MiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("runaway", "stalled"))
    parser.add_argument(
        "--pad", default="0,16384", help="runaway: pad bytes per chunk, comma-separated"
    )
    parser.add_argument("--chunks", type=int, default=1_000_000, help="stalled: burst size")
    parser.add_argument(
        "--settle",
        type=float,
        default=10.0,
        help="stalled: seconds without server progress that count as stopped",
    )
    parser.add_argument(
        "--limit", type=float, default=300.0, help="stalled: most seconds the editor stays away"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    if args.only in (None, "runaway"):
        for pad in (int(p) for p in args.pad.split(",")):
            results.append(runaway(pad))
            if not args.json:
                _print(results[-1])
    if args.only in (None, "stalled"):
        results.append(stalled(args.chunks, args.settle, args.limit))
        if not args.json:
            _print(results[-1])
    if args.json:
        print(json.dumps({"loadAverage": os.getloadavg(), "results": results}, indent=2))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
