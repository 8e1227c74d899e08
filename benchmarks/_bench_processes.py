"""The processes of the stream benchmark: the SSE server, and the agents read as an editor would.

`SseServer` runs benchmarks/_sse_server.py; `StdioAgent` spawns one agent (the bridge with chunk
merging on or off, the raw loop or the SDK agent, see `agent_argv`), writes JSON-RPC lines to its
stdin and reads its stdout in raw batches, stamping each read with CLOCK_MONOTONIC (the clock
the server stamps each chunk's text with). Chunk lines are recognised by their marker, not
parsed, so the reader costs every agent the same few microseconds per line. Every wait is
bounded.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["AGENTS", "Sample", "SseServer", "StdioAgent", "agent_argv", "isolated_env", "now_ns"]

HERE = Path(__file__).resolve().parent
AGENTS = ("bridge", "bridge-unmerged", "raw", "sdk")
WAIT = 120.0
# (chunk index, ns when the server wrote it, ns when this process read it)
Sample = tuple[int, int, int]

_MARKER = re.compile(rb" c(\d+)@(\d+)")  # benchmarks/_sse_server.py MARKER_PATTERN
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_ISOLATE_PREFIXES = ("ACP_BRIDGE_",)
_PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def now_ns() -> int:
    # The server stamps with the same clock; CLOCK_MONOTONIC is system-wide on Linux.
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def agent_argv(
    agent: str,
    base_url: str,
    work: Path,
    *,
    profile_dir: Path | None = None,
    prefix: str = "",
    run: int = 0,
) -> list[str]:
    """The command line of one agent. The bridge may run under cProfile or a `prefix` command
    (e.g. py-spy); `{run}` in the prefix becomes the run number."""
    python = sys.executable
    if agent == "raw":
        return [python, str(HERE / "_raw_loop.py"), base_url]
    if agent == "sdk":
        return [python, str(HERE / "_sdk_stream_agent.py"), base_url]
    if agent not in ("bridge", "bridge-unmerged"):
        raise ValueError(f"unknown agent {agent!r}")
    merge = "no" if agent == "bridge-unmerged" else "yes"
    head = [python, "-m", "acp_bridge"]
    if profile_dir is not None:
        prof = profile_dir / f"{agent}-run{run}.prof"
        head = [python, "-m", "cProfile", "-o", str(prof), "-m", "acp_bridge"]
    if prefix:
        head = [*shlex.split(prefix.replace("{run}", str(run))), *head]
    return [
        *head,
        *("--provider", "openai", "--base-url", base_url, "--model", "bench"),
        *("--merge-chunks", merge),
        # The SDK agent lists no models; the benchmark compares the streams alone.
        *("--fetch-models", "no"),
        *("--state-dir", str(work / "state"), "--config", str(work / "config.toml")),
    ]


def isolated_env(work: Path) -> dict[str, str]:
    """This environment without bridge settings or API keys, config and state under `work`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(_ISOLATE_PREFIXES) and k not in _PROVIDER_KEYS
    }
    env["XDG_CONFIG_HOME"] = str(work / "config")
    env["XDG_STATE_HOME"] = str(work / "state-home")
    return env


class SseServer:
    """benchmarks/_sse_server.py in its own process; it stops when its stdin closes."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "_sse_server.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.base_url = f"http://127.0.0.1:{int(self.process.stdout.readline())}/v1"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


class StdioAgent:
    """A spawned agent, driven with JSON lines on stdin, its stdout read in raw batches.

    `tolerate_noise` skips stdout lines that are not JSON objects: a profiler wrapping the
    agent (py-spy) prints its own. Requests from the agent are refused: the benchmark's
    editor offers no capability, and a plain text stream asks for nothing.
    """

    def __init__(
        self, argv: Sequence[str], *, env: dict[str, str], cwd: Path, tolerate_noise: bool = False
    ) -> None:
        self.argv = list(argv)
        self._tolerate_noise = tolerate_noise
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=cwd,
            bufsize=0,
        )
        assert self.process.stdout is not None
        self._fd = self.process.stdout.fileno()
        os.set_blocking(self._fd, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)
        self._buffer = b""
        self._next_id = 0
        self.chunk_lines = 0
        """Lines with chunk markers the last `call` read (fewer than chunks when merged)."""

    def cpu_ns(self) -> int:
        """CPU time (user + system) the agent process has used so far, in ns, from
        /proc/<pid>/stat (clock ticks, 10 ms): unlike wall time, hardly touched by other
        load on the machine. Under a `prefix` command (py-spy) it is that command's time."""
        stat = Path(f"/proc/{self.process.pid}/stat").read_text()
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // _CLOCK_TICKS

    def close(self) -> None:
        """Closes stdin as an editor does and waits for the exit (killed after 30 s)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._selector.close()
        self._stderr.close()

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-3000:]

    def call(
        self, method: str, params: Any, samples: list[Sample] | None = None
    ) -> tuple[Any, int]:
        """Sends a request and reads until its response: (result, stdout reads it took).

        The chunk markers read on the way go into `samples`, stamped with their read's time.
        """
        self._next_id += 1
        request_id = self._next_id
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + WAIT
        reads = 0
        self.chunk_lines = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                raise RuntimeError(f"{method}: no answer from {self.argv}: {self.stderr_text()}")
            data = os.read(self._fd, 1 << 20)
            read_ns = now_ns()
            reads += 1
            if not data:
                raise RuntimeError(f"{self.argv} closed stdout: {self.stderr_text()}")
            *lines, self._buffer = (self._buffer + data).split(b"\n")
            response = None
            for raw in lines:
                markers = _MARKER.findall(raw)
                if markers:
                    self.chunk_lines += 1
                    if samples is not None:
                        samples.extend((int(i), int(ts), read_ns) for i, ts in markers)
                elif not self._tolerate_noise or raw.startswith(b"{"):
                    message = json.loads(raw)
                    if "method" in message and "id" in message:
                        error = {"code": -32601, "message": "the benchmark editor offers nothing"}
                        self._write({"jsonrpc": "2.0", "id": message["id"], "error": error})
                    elif "method" not in message and message.get("id") == request_id:
                        response = message
            if response is not None:
                if "error" in response:
                    raise RuntimeError(f"{method} failed: {response['error']}")
                return response["result"], reads

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
