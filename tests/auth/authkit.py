"""Helpers of the authentication and configuration tests: a loopback model-list server and a
pseudo-terminal driver for `acp-bridge-agent login`."""

from __future__ import annotations

import json
import os
import pty
import select
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WAIT = 60.0


@dataclass
class ModelServer:
    """Answers GET .../models with a model list when the key matches, 401 when it does not,
    404 anywhere else; also a chat-completions 404/401 for stream tests."""

    key: str | None = "sk-test-good-0000000000"
    models: tuple[str, ...] = ("gpt-test", "gpt-other")
    prefix: str = "/v1"
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def answer(self, path: str, headers: Mapping[str, str]) -> tuple[int, Any]:
        self.requests.append((path, dict(headers)))
        sent = headers.get("authorization", "").removeprefix("Bearer ") or headers.get(
            "x-api-key", headers.get("x-goog-api-key", "")
        )
        if not path.startswith(self.prefix + "/") and self.prefix:
            return 404, {"error": {"message": f"no route {path}", "type": "not_found"}}
        if self.key is not None and sent != self.key:
            return 401, {
                "error": {"message": "Incorrect API key provided", "type": "invalid_api_key"}
            }
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": m} for m in self.models]}
        return 404, {"error": {"message": f"no route {path}"}}


@contextmanager
def model_server(**options: Any) -> Iterator[ModelServer]:
    """A real loopback HTTP server (a thread: the bridge under test runs in a subprocess)."""
    server = ModelServer(**options)

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            status, body = server.answer(self.path, {k.lower(): v for k, v in self.headers.items()})
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = _reply
        do_POST = _reply

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(WAIT)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PtyProcess:
    """A command whose controlling terminal is a real pseudo-terminal, driven like a user."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        self.output = b""
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec at once
            try:
                os.execve(argv[0], list(argv), dict(env))
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.status: int | None = None

    def expect(self, text: str, wait: float = WAIT) -> str:
        """Reads until `text` has appeared; returns everything read so far."""
        deadline = time.monotonic() + wait
        while text.encode() not in self.output:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"{text!r} never appeared; the terminal showed:\n{self.text}")
        return self.text

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        self.output += chunk
        return bool(chunk)

    def send(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace")

    def wait(self, wait: float = WAIT) -> int:
        deadline = time.monotonic() + wait
        while self._read(max(0.0, min(1.0, deadline - time.monotonic()))):
            pass
        while self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                os.kill(self.pid, 9)
                raise AssertionError(f"the command did not exit; the terminal showed:\n{self.text}")
            else:
                self._read(0.2)
        os.close(self.fd)
        return self.status
