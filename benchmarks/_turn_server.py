"""A model server for the per-turn benchmark: one short streamed answer per request, any provider.

Run as its own process; it prints its port on the first line of stdout and serves until stdin
closes:

    python benchmarks/_turn_server.py [--chunks 12]     # -> "41237"

HTTP/1.1 with keep-alive (as the providers' APIs), one thread per connection. Every POST is
answered with the same streamed text of `--chunks` chunks, in the format its path names:

    .../chat/completions                  OpenAI Chat Completions SSE
    .../v1/messages                       Anthropic Messages SSE
    ...:streamGenerateContent?alt=sse     Gemini SSE

The request body is read (by its Content-Length) and never parsed: the server's work per
request does not grow with the conversation, so what grows per turn is the agent's. Each
answer is written with one `sendall` once the body is in, so the agent's time to its
response is the agent's own. Per request, the body's size is kept; `GET /stats` answers
them as JSON (`{"bodies": [...]}`).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
from typing import Any

__all__ = ["answer_text", "serve"]

_TEXT = (
    "The answer streams in short pieces, as a model writes it: a sentence or two per turn,"
    " long enough that history grows the way a real conversation's does."
)
_WORDS = _TEXT.split()


def answer_text(chunks: int) -> list[str]:
    """The chunks of the answer (about 30 bytes each)."""
    words = [_WORDS[i % len(_WORDS)] for i in range(chunks * 5)]
    return [" ".join(words[i * 5 : i * 5 + 5]) + " " for i in range(chunks)]


def _sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()


def _openai(parts: list[str]) -> bytes:
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "b"}

    def choice(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return _sse(body)

    events = [choice({"role": "assistant", "content": ""})]
    events += [choice({"content": part}) for part in parts]
    events.append(choice({}, "stop"))
    usage = {"prompt_tokens": 12, "completion_tokens": len(parts), "total_tokens": 12}
    events.append(_sse({**base, "choices": [], "usage": usage}))
    events.append(b"data: [DONE]\n\n")
    return b"".join(events)


def _anthropic(parts: list[str]) -> bytes:
    def ev(kind: str, **fields: Any) -> bytes:
        return _sse({"type": kind, **fields}, event=kind)

    message = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "bench",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 12, "output_tokens": 1},
    }
    events = [ev("message_start", message=message)]
    events.append(ev("content_block_start", index=0, content_block={"type": "text", "text": ""}))
    events += [
        ev("content_block_delta", index=0, delta={"type": "text_delta", "text": part})
        for part in parts
    ]
    events.append(ev("content_block_stop", index=0))
    events.append(
        ev(
            "message_delta",
            delta={"stop_reason": "end_turn", "stop_sequence": None},
            usage={"output_tokens": len(parts)},
        )
    )
    events.append(ev("message_stop"))
    return b"".join(events)


def _gemini(parts: list[str]) -> bytes:
    def response(text: str, finish: str | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}}
        if finish:
            candidate["finishReason"] = finish
        body: dict[str, Any] = {"candidates": [candidate], "responseId": "resp-bench"}
        if finish:
            body["usageMetadata"] = {"promptTokenCount": 12, "candidatesTokenCount": len(parts)}
        return _sse(body)

    events = [response(part) for part in parts[:-1]]
    events.append(response(parts[-1], "STOP"))
    return b"".join(events)


def _chunked(body: bytes) -> bytes:
    return b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)


_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)


class _Server:
    def __init__(self, chunks: int) -> None:
        parts = answer_text(chunks)
        self.answers = {
            "openai": _HEAD + _chunked(_openai(parts)),
            "anthropic": _HEAD + _chunked(_anthropic(parts)),
            "gemini": _HEAD + _chunked(_gemini(parts)),
        }
        self.bodies: list[int] = []
        self.lock = threading.Lock()

    def connection(self, sock: socket.socket) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = sock.makefile("rb")
        try:
            while True:
                request_line = reader.readline()
                if not request_line:
                    return
                length = 0
                while (line := reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = reader.read(length)
                target = request_line.split(b" ")[1] if b" " in request_line else b""
                if target == b"/stats":
                    with self.lock:
                        payload = json.dumps({"bodies": self.bodies}).encode()
                    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    sock.sendall(head + b"content-length: %d\r\n\r\n%b" % (len(payload), payload))
                    continue
                with self.lock:
                    self.bodies.append(len(body))
                if b"/chat/completions" in target:
                    sock.sendall(self.answers["openai"])
                elif b"/v1/messages" in target:
                    sock.sendall(self.answers["anthropic"])
                elif b":streamGenerateContent" in target:
                    sock.sendall(self.answers["gemini"])
                else:
                    sock.sendall(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
        except (ConnectionError, OSError):
            return
        finally:
            reader.close()
            sock.close()


def serve(chunks: int) -> None:
    server = _Server(chunks)
    listener = socket.create_server(("127.0.0.1", 0))
    sys.stdout.write(f"{listener.getsockname()[1]}\n")
    sys.stdout.flush()

    def accept() -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=server.connection, args=(sock,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()  # the benchmark closes our stdin when it is done
    listener.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=12)
    serve(parser.parse_args().chunks)
