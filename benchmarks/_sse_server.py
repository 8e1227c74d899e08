"""An OpenAI Chat Completions SSE server for the stream benchmark, stamping each chunk's write.

Run as its own process (so it competes with nobody's event loop); it prints its port on the
first line of stdout and serves until stdin closes:

    python benchmarks/_sse_server.py          # -> "41237"

Every `POST .../chat/completions` streams one answer, chosen by the last user message:

    burst N            N text chunks, written as fast as the socket takes them
    paced N GAP_US     N text chunks, GAP_US microseconds apart (an idle pipeline)
    endless PAD        text chunks as fast as the socket takes them, never finishing (a
                       runaway model); each chunk's text is its marker plus PAD bytes of "x"

`GET /stats` answers `{"bytesSent": B, "streams": S}`: the body bytes all streams have written
so far and how many streams started (a benchmark watches whether a stalled client stopped the
server). A stream waits up to 10 minutes for a client that stopped reading.

Each chunk is one SSE event in one HTTP chunk, sent with one `sendall` (TCP_NODELAY), as a
real server streams tokens. Its text is ` c<i>@<ns>`: the chunk's index and the
CLOCK_MONOTONIC time (ns) taken just before it is written. CLOCK_MONOTONIC is one system-wide
clock on Linux, so the benchmark reader in another process can subtract it from its own reading
time. The stream ends with `finish_reason: "stop"`, a usage chunk and `data: [DONE]`.
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import sys
import threading
import time

__all__ = ["MARKER_PATTERN", "chunk_text", "serve"]

# What the reader looks for in each stdout line: b" c<index>@<ns>".
MARKER_PATTERN = rb" c(\d+)@(\d+)"

_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"connection: close\r\ntransfer-encoding: chunked\r\n\r\n"
)
_PREFIX = (
    b'{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1753357673,'
    b'"model":"bench","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":'
)
_TEXT_EVENT = (
    b"data: " + _PREFIX + b'{"content":" c%d@%d"},"logprobs":null,"finish_reason":null}]}\n\n'
)
_ROLE_EVENT = (
    b"data: " + _PREFIX + b'{"role":"assistant","content":""},"logprobs":null,'
    b'"finish_reason":null}]}\n\n'
)
_STOP_EVENT = b"data: " + _PREFIX + b'{},"logprobs":null,"finish_reason":"stop"}]}\n\n'
_USAGE_EVENT = (
    b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1753357673,'
    b'"model":"bench","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":1,'
    b'"total_tokens":13}}\n\n'
)
_DONE_EVENT = b"data: [DONE]\n\n"
_clock = time.clock_gettime_ns
_MONOTONIC = time.CLOCK_MONOTONIC
_STALL_LIMIT = 600.0
_ENDLESS = -1


class _Stats:
    """What every stream wrote so far (a reader only needs a recent value)."""

    bytes_sent = 0
    streams = 0


_stats = _Stats()


def chunk_text(index: int, stamp_ns: int) -> str:
    """The text of chunk `index` written at `stamp_ns` (what the reader's pattern matches)."""
    return f" c{index}@{stamp_ns}"


def _framed(event: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(event), event)


def _command(body: bytes) -> tuple[str, int, int]:
    """("burst"|"paced"|"endless", chunks, gap_us or pad) from the last user message."""
    messages = json.loads(body)["messages"]
    content = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    if isinstance(content, list):
        content = " ".join(part.get("text", "") for part in content)
    words = str(content).split()
    mode = words[0]
    if mode == "endless":
        return mode, _ENDLESS, int(words[1]) if len(words) > 1 else 0
    if mode not in ("burst", "paced"):
        raise ValueError(f"unknown benchmark command {content!r}")
    gap_us = int(words[2]) if mode == "paced" else 0
    return mode, int(words[1]), gap_us


class _StreamHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(_STALL_LIMIT)
        reader = sock.makefile("rb")
        request_line = reader.readline()
        length = 0
        while (line := reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = reader.read(length)
        if request_line.startswith(b"GET ") and b"/stats" in request_line:
            stats = json.dumps({"bytesSent": _stats.bytes_sent, "streams": _stats.streams})
            sock.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(stats), stats.encode())
            )
            return
        if b"/chat/completions" not in request_line:
            sock.sendall(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            return
        mode, count, extra = _command(body)
        _stats.streams += 1
        # A client that goes away early is no error of ours.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if mode == "endless":
                self._endless(sock, b"x" * extra)
            else:
                self._stream(sock, count, extra / 1e6 if mode == "paced" else 0.0)

    @staticmethod
    def _endless(sock: socket.socket, pad: bytes) -> None:
        """Text chunks until the client hangs up (it sees no end: a runaway model)."""
        send = sock.sendall
        send(_HEAD + _framed(_ROLE_EVENT))
        template = _TEXT_EVENT.replace(b"@%d", b"@%d" + pad)
        index = 0
        while True:
            event = template % (index, _clock(_MONOTONIC))
            frame = b"%x\r\n%b\r\n" % (len(event), event)
            send(frame)
            _stats.bytes_sent += len(frame)
            index += 1

    @staticmethod
    def _stream(sock: socket.socket, count: int, gap: float) -> None:
        send = sock.sendall
        send(_HEAD + _framed(_ROLE_EVENT))
        for index in range(count):
            event = _TEXT_EVENT % (index, _clock(_MONOTONIC))
            frame = b"%x\r\n%b\r\n" % (len(event), event)
            send(frame)
            _stats.bytes_sent += len(frame)
            if gap:
                time.sleep(gap)
        send(_framed(_STOP_EVENT) + _framed(_USAGE_EVENT) + _framed(_DONE_EVENT) + b"0\r\n\r\n")
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(65536):  # wait for the client to hang up, then close
            pass


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve() -> None:
    """Serves on 127.0.0.1 and an ephemeral port until stdin closes."""
    with _Server(("127.0.0.1", 0), _StreamHandler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        sys.stdout.write(f"{server.server_address[1]}\n")
        sys.stdout.flush()
        sys.stdin.read()  # the benchmark closes our stdin when it is done
        server.shutdown()


if __name__ == "__main__":
    serve()
