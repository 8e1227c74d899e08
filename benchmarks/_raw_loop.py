"""The stream benchmark's practical limit: parse the SSE, write the notifications, nothing else.

A stdio process that answers just enough ACP (`initialize`, `session/new`, `session/prompt`)
for the benchmark's reader, and for each prompt reads the OpenAI Chat Completions stream over a
plain blocking socket (HTTP/1.1 chunked framing and SSE parsed by hand, `json.loads` per event)
and writes one `session/update` `agent_message_chunk` line per text delta with one `os.write`,
the same notification the bridge writes. No validation, no retries, no event loop.

    python benchmarks/_raw_loop.py http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_loads = json.loads


def _body_chunks(sock: socket.socket) -> Iterator[bytes]:
    """The decoded body of a chunked HTTP/1.1 response, as it arrives."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed before the response head")
        buffer += data
    head, buffer = buffer.split(b"\r\n\r\n", 1)
    if not head.startswith(b"HTTP/1.1 200"):
        raise ConnectionError(head.decode("latin-1"))
    while True:
        while b"\r\n" not in buffer:
            buffer += _receive(sock)
        size_line, rest = buffer.split(b"\r\n", 1)
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return
        while len(rest) < size + 2:
            rest += _receive(sock)
        yield rest[:size]
        buffer = rest[size + 2 :]


def _receive(sock: socket.socket) -> bytes:
    data = sock.recv(65536)
    if not data:
        raise ConnectionError("the stream broke")
    return data


def _stream(base_url: str, prompt: str, session_id: str, message_id: str) -> None:
    url = urlsplit(base_url)
    body = _dumps(
        {"model": "bench", "messages": [{"role": "user", "content": prompt}], "stream": True}
    ).encode()
    head = (
        f"POST {url.path}/chat/completions HTTP/1.1\r\nhost: {url.netloc}\r\n"
        f"content-type: application/json\r\naccept: text/event-stream\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    write = os.write
    prefix = {"sessionId": session_id}
    with socket.create_connection((url.hostname, url.port)) as sock:
        sock.sendall(head + body)
        pending = b""
        for data in _body_chunks(sock):
            pending += data
            *events, pending = pending.split(b"\n\n")
            for event in events:
                for line in event.split(b"\n"):
                    if not line.startswith(b"data:"):
                        continue
                    payload = line[5:].strip()
                    if payload == b"[DONE]":
                        return
                    for choice in _loads(payload).get("choices") or ():
                        text = choice.get("delta", {}).get("content")
                        if text:
                            update = {
                                "sessionUpdate": "agent_message_chunk",
                                "content": {"type": "text", "text": text},
                                "messageId": message_id,
                            }
                            params = {**prefix, "update": update}
                            line_out = _dumps(
                                {"jsonrpc": "2.0", "method": "session/update", "params": params}
                            )
                            write(1, line_out.encode() + b"\n")


def main(base_url: str) -> None:
    sessions = 0
    turns = 0
    for raw in sys.stdin.buffer:
        message = _loads(raw)
        method = message.get("method")
        result: object
        if method == "initialize":
            result = {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "agentInfo": {"name": "raw-loop", "version": "0"},
            }
        elif method == "session/new":
            sessions += 1
            result = {"sessionId": f"sess_raw_{sessions}"}
        elif method == "session/prompt":
            turns += 1
            params = message["params"]
            session_id = params["sessionId"]
            prompt = " ".join(p.get("text", "") for p in params["prompt"])
            _stream(base_url, prompt, session_id, f"{session_id}-turn{turns}-m1-a1")
            result = {"stopReason": "end_turn"}
        else:
            continue
        reply = _dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        os.write(1, reply.encode() + b"\n")


if __name__ == "__main__":
    main(sys.argv[1])
