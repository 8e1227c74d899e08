"""Peak RSS of the bridge under a runaway provider stream and under an editor that stops reading.

    python benchmarks/rss_runaway.py [--chunks N] [--window S]

Scenario `stream`: the loopback SSE server (benchmarks/_sse_server.py) bursts N text chunks
(default 2,000,000, about 350 MB) into one model call while the editor reads everything; the
bridge's cap (max_output_bytes, 64 MiB) stops the call. Scenario `stalled`: the server bursts
1,000,000 chunks and the editor never reads the bridge's stdout after sending the prompt.
Each run reports the bridge's VmHWM (peak RSS) from /proc, sampled for at most `window`
seconds (a benchmark: its figures are reported, not asserted).
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench_processes import SseServer, agent_argv, isolated_env


def _hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _send(proc: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _read_until(proc: subprocess.Popen[bytes], request_id: int, deadline: float) -> dict:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the bridge closed stdout")
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            return message
    raise TimeoutError(request_id)


def run(scenario: str, chunks: int, window: float) -> int:
    server = SseServer()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "config.toml").write_text("")
        argv = agent_argv("bridge", server.base_url, work)
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=isolated_env(work),
            cwd=work,
        )
        try:
            deadline = time.monotonic() + window + 60
            _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": 1, "clientCapabilities": {}}})
            _read_until(proc, 1, deadline)
            _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "session/new",
                         "params": {"cwd": str(work), "mcpServers": []}})
            session = _read_until(proc, 2, deadline)["result"]["sessionId"]
            _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                         "params": {"sessionId": session,
                                    "prompt": [{"type": "text", "text": f"burst {chunks}"}]}})
            peak, end = 0, time.monotonic() + window
            assert proc.stdout is not None
            selector = selectors.DefaultSelector()
            selector.register(proc.stdout, selectors.EVENT_READ)
            os.set_blocking(proc.stdout.fileno(), False)
            done = False
            while time.monotonic() < end and not done:
                peak = max(peak, _hwm_kib(proc.pid))
                if scenario == "stream":  # the editor reads everything
                    for _ in selector.select(0.2):
                        data = proc.stdout.read(1 << 20) or b""
                        done = b'"id":3' in data or not data
                else:  # the editor stopped reading
                    time.sleep(0.2)
                    done = proc.poll() is not None
            return max(peak, _hwm_kib(proc.pid))
        finally:
            proc.kill()
            proc.wait()
            server.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=2_000_000)
    parser.add_argument("--stalled-chunks", type=int, default=1_000_000)
    parser.add_argument("--window", type=float, default=60.0)
    args = parser.parse_args()
    stream = run("stream", args.chunks, args.window)
    stalled = run("stalled", args.stalled_chunks, args.window)
    print(f"never-ending stream ({args.chunks} chunks): peak RSS {stream / 1024:.0f} MiB")
    print(f"stalled editor ({args.stalled_chunks} chunks): peak RSS {stalled / 1024:.0f} MiB")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
