"""Spawning real processes for black-box tests: the bridge as an editor launches it, and others.

No project code runs on the client side: a `LineProcess` is a plain subprocess whose stdout is
read line by line. Every wait is bounded (a `deadline` in seconds), and a process is always
killed when its `with` block ends, also when the test failed half-way.

    with LineProcess(bridge_argv("--state-dir", str(tmp_path))) as bridge:
        bridge.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", ...})
        line = bridge.read_line()           # raw bytes of one line, newline included

stderr goes to a temporary file (never a pipe nobody reads, which could fill up and stall the
child); `stderr_text()` returns it for failure messages.

For acpx (npm, pinned in tests/npm): `acpx_executable()` finds it or fails saying to run
`npm ci`, and `split_transcript` tells which side sent each message of its `--format json`
transcript, which holds both directions.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import pytest
from npm_oracles import NPM_DIR, installed

__all__ = [
    "NPM_DIR",
    "WAIT_SECONDS",
    "LineProcess",
    "WireMessage",
    "acpx_executable",
    "bridge_argv",
    "console_script",
    "isolated_env",
    "require_mount_namespace",
    "run_bounded",
    "split_transcript",
    "start_session",
]

# Generous: CI runs on 2 shared cores, and a cold Python start there can take a second.
WAIT_SECONDS = 30.0

# Variables that would change which provider or settings the bridge picks up from its
# environment; a black-box test starts from none of them.
_BRIDGE_ENV_PREFIXES = ("ACP_BRIDGE_",)
_PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def require_mount_namespace(what: str) -> None:
    """Tests that give the bridge a mount of its own (`unshare -rm`: tmpfs, bind mounts; no
    root needed) need user and mount namespaces: skipped without them, failed under CI."""
    works = shutil.which("unshare") is not None and (
        subprocess.run(
            ["unshare", "-rm", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs tmpfs $d"],
            capture_output=True,
            check=False,
            timeout=60,
        ).returncode
        == 0
    )
    if works:
        return
    if os.environ.get("CI"):
        pytest.fail(f"unshare -rm with {what} must work under CI (util-linux)")
    pytest.skip(f"needs `unshare -rm` and {what} (util-linux, user namespaces)")


def bridge_argv(*args: str) -> list[str]:
    """`python -m acp_bridge ARGS` with this interpreter, so the same environment is used."""
    return [sys.executable, "-m", "acp_bridge", *args]


def console_script(name: str = "acp-bridge-agent") -> Path:
    """The installed console script beside this interpreter (the venv's bin folder)."""
    return Path(sys.executable).parent / name


def isolated_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment with a private HOME and XDG folders, and no bridge or provider settings.

    acpx keeps its sessions in ~/.acpx and the bridge its state under XDG_STATE_HOME, so each
    test gets its own. PATH keeps this interpreter's bin folder first, as an activated venv does.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_BRIDGE_ENV_PREFIXES) and key not in _PROVIDER_KEYS
    }
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    for var, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_DATA_HOME", ".local/share"),
    ):
        env[var] = str(home / sub)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", os.defpath)])
    env["PYTHONUNBUFFERED"] = "1"
    if extra:
        env.update(extra)
    return env


def run_bounded(
    argv: Sequence[str],
    *,
    timeout: float = WAIT_SECONDS,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Runs a command to completion, capturing stdout and stderr; killed after `timeout`.

    `subprocess.run` kills the child when the timeout passes; the AssertionError then says
    which command hung and what it printed so far.
    """
    try:
        return subprocess.run(
            list(argv),
            input=input if input is not None else b"",
            capture_output=True,
            timeout=timeout,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(
            f"{argv[0]} did not finish within {timeout} s: {' '.join(argv)}\n"
            f"stdout so far: {_tail(exc.stdout)}\nstderr so far: {_tail(exc.stderr)}"
        ) from None


def _tail(data: bytes | str | None, limit: int = 4000) -> str:
    if not data:
        return "(nothing)"
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return text if len(text) <= limit else "..." + text[-limit:]


class LineProcess:
    """A subprocess driven through stdin and read line by line from stdout, within deadlines.

    `stdout` may be given (an open file) to send the child's stdout somewhere else than a pipe.
    Then lines are read from `reader` (a file descriptor this object then owns and closes, such
    as a pseudo-terminal's master side), or not at all (read the file after the process ends).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stdout: IO[bytes] | None = None,
        reader: int | None = None,
        wait: float = WAIT_SECONDS,
    ) -> None:
        self.argv = list(argv)
        self.wait = wait
        self.lines: list[bytes] = []
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by kill())
        self._buffer = b""
        self._eof = False
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=stdout if stdout is not None else subprocess.PIPE,
            stderr=self._stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        self._owned_reader = reader
        self._read_fd = self.process.stdout.fileno() if self.process.stdout else reader
        self._selector: selectors.BaseSelector | None = None
        if self._read_fd is not None:
            os.set_blocking(self._read_fd, False)
            self._selector = selectors.DefaultSelector()
            self._selector.register(self._read_fd, selectors.EVENT_READ)

    # -- context management: always kill --

    def __enter__(self) -> LineProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=self.wait)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        if self._owned_reader is not None:
            os.close(self._owned_reader)
            self._owned_reader = None
        if not self._stderr.closed:
            self._stderr.close()

    # -- writing --

    def send_bytes(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def send(self, message: Any) -> None:
        """One JSON value as one line."""
        self.send_bytes(json.dumps(message).encode("utf-8") + b"\n")

    def close_stdin(self) -> None:
        """End of input, as an editor closing the pipe."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            stdin.close()

    # -- reading --

    def read_line(self, wait: float | None = None) -> bytes:
        """The next line of stdout, `\\n` included (a last line without one at EOF as is).

        Raises AssertionError when nothing complete arrives in time or stdout ended.
        """
        line = self._next_line(wait)
        if line is None:
            raise AssertionError(
                f"{self.argv[0]} closed stdout before a complete line "
                f"(exit {self.process.poll()}); stderr: {self.stderr_text()}"
            )
        return line

    def read_message(self, wait: float | None = None) -> Any:
        line = self.read_line(wait)
        try:
            return json.loads(line)
        except ValueError:
            raise AssertionError(f"stdout line is not JSON: {line!r}") from None

    def read_to_eof(self, wait: float | None = None) -> list[bytes]:
        """Every remaining line until stdout closes."""
        remaining: list[bytes] = []
        deadline = time.monotonic() + (self.wait if wait is None else wait)
        while (line := self._next_line(max(deadline - time.monotonic(), 0.0))) is not None:
            remaining.append(line)
        return remaining

    def iter_lines(self, wait: float | None = None) -> Iterator[bytes]:
        """Lines as they come, until stdout closes; each within `wait` of the previous one."""
        while (line := self._next_line(wait)) is not None:
            yield line

    def _next_line(self, wait: float | None) -> bytes | None:
        if self._selector is None or self._read_fd is None:
            raise AssertionError("this process's stdout is not read by the test")
        deadline = time.monotonic() + (self.wait if wait is None else wait)
        while b"\n" not in self._buffer and not self._eof:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                raise AssertionError(
                    f"no complete line from {' '.join(self.argv)} within "
                    f"{self.wait if wait is None else wait} s; partial: {self._buffer[:500]!r}; "
                    f"stderr: {self.stderr_text()}"
                )
            try:
                chunk = os.read(self._read_fd, 65536)
            except OSError:  # EIO: a pseudo-terminal whose other side closed
                chunk = b""
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True
        if b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            line += b"\n"
        elif self._buffer:
            line, self._buffer = self._buffer, b""
        else:
            return None
        self.lines.append(line)
        return line

    # -- ending --

    def wait_exit(self, wait: float | None = None) -> int:
        """The exit status; AssertionError if the process is still running after `wait`."""
        try:
            return self.process.wait(timeout=self.wait if wait is None else wait)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"{' '.join(self.argv)} did not exit; stderr: {self.stderr_text()}"
            ) from None

    def stderr_text(self, limit: int | None = 4000) -> str:
        """What the process wrote to stderr so far (its last `limit` characters)."""
        if self._stderr.closed:
            return "(closed)"
        self._stderr.flush()
        self._stderr.seek(0)
        data = self._stderr.read()
        return _tail(data, limit) if limit is not None else data.decode("utf-8", "replace")


# --- acpx (npm), the headless ACP client -----------------------------------------------------


def acpx_executable() -> Path:
    """acpx from tests/npm, installed with `npm ci` on first use when it is not there yet.

    acpx is an oracle from the npm registry, so it needs Node.js. On a machine with only
    Python the acpx tests are skipped saying what to install (the README's test command still
    works there); under CI (`CI` set) a missing Node.js fails them (tests/npm_oracles.py).
    """
    return installed(NPM_DIR / "node_modules" / ".bin" / "acpx", "acpx (the headless ACP client)")


@dataclass(frozen=True, slots=True)
class WireMessage:
    """One JSON-RPC message of an acpx transcript, with the side that sent it."""

    sender: str  # "client" (acpx) or "agent" (the bridge)
    message: dict[str, Any]


def split_transcript(
    lines: Sequence[bytes | str], agent_methods: frozenset[str], client_methods: frozenset[str]
) -> list[WireMessage]:
    """Tells who sent each message of a raw transcript holding both directions.

    Requests and notifications are told apart by method (the ACP schema says which side sends
    which). Both sides number their requests independently, so a response's id may match a
    pending request of either side; then it answers the most recent one, since a request the
    agent sends while a client request is in flight (a permission or a file write during a
    prompt) is answered before that client request finishes.
    """
    pending: dict[str, list[tuple[str, int]]] = {}  # id -> [(requester, position)]
    out: list[WireMessage] = []
    for position, raw in enumerate(lines):
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        if not text.strip():
            continue
        message = json.loads(text)
        assert isinstance(message, dict), text
        assert message.get("jsonrpc") == "2.0", text
        key = json.dumps(message.get("id"))
        if "method" in message:
            method = message["method"]
            in_agent, in_client = method in agent_methods, method in client_methods
            assert in_agent != in_client, f"cannot tell who sent {method!r}: {text}"
            sender = "agent" if in_agent else "client"
            if "id" in message:
                pending.setdefault(key, []).append((sender, position))
        else:
            waiting = pending.get(key)
            assert waiting, f"a response to no pending request: {text}"
            requester, _ = max(waiting, key=lambda entry: entry[1])
            waiting.remove((requester, _))
            sender = "client" if requester == "agent" else "agent"
        out.append(WireMessage(sender, message))
    return out


def start_session(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """A bridge started with `argv`: its answers to `initialize` and to a `session/new` at
    `cwd` (no MCP servers), and all it wrote on stderr, once it exited cleanly when its stdin
    closed."""
    with LineProcess(argv, env=env) as bridge:
        bridge.send(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
        )
        init = json.loads(bridge.read_line())
        params = {"cwd": str(cwd), "mcpServers": []}
        bridge.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params})
        new = json.loads(bridge.read_line())
        bridge.close_stdin()
        assert bridge.wait_exit() == 0
        stderr = bridge.stderr_text(None)
    return init, new, stderr
