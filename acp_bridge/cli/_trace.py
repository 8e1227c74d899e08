"""`--trace FILE`: every JSON-RPC message both ways and every provider event, as NDJSON.

Secrets are redacted before anything is written: values under keys that name credentials
(api keys, tokens, authorization headers, passwords), strings shaped like API keys, and the
values of MCP servers' `env` and `headers` entries (MCP-SECRET-001).
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import IO

from acp_bridge._json import JsonValue

__all__ = ["TraceWriter", "redact"]

_SECRET_KEY = re.compile(r"(api[-_]?key|token|secret|authorization|password|x-goog-api-key)", re.I)
_SECRET_VALUE = re.compile(
    r"\b(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,})"
)
_REDACTED = "[redacted]"
_NAMED_SECRETS = frozenset({"env", "headers"})  # [{name, value}] of MCP servers


def _named_values(items: list[JsonValue]) -> JsonValue:
    return [
        {**item, "value": _REDACTED} if isinstance(item, dict) and "value" in item else item
        for item in items
    ]


def redact(value: JsonValue, secrets: tuple[str, ...] = ()) -> JsonValue:
    """A copy of `value` with credentials replaced by ``[redacted]``."""
    if isinstance(value, dict):
        return {
            k: _REDACTED
            if _SECRET_KEY.search(k) and v
            else _named_values(v)
            if k in _NAMED_SECRETS and isinstance(v, list)
            else redact(v, secrets)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v, secrets) for v in value]
    if isinstance(value, str):
        for secret in secrets:
            if secret:
                value = value.replace(secret, _REDACTED)
        return _SECRET_VALUE.sub(_REDACTED, value)
    return value


class TraceWriter:
    """Appends one JSON object per line; safe to call from any task."""

    def __init__(self, path: str | Path, secrets: tuple[str, ...] = ()) -> None:
        # A lone surrogate (legal in a JSON string, not in UTF-8) is written back as the JSON
        # escape it came from: `backslashreplace` yields exactly ``\ud800``.
        self._file: IO[str] = Path(path).open(  # noqa: SIM115
            "a", encoding="utf-8", errors="backslashreplace"
        )
        self._secrets = tuple(s for s in secrets if s)
        self._lock = threading.Lock()
        self._t0 = time.monotonic()

    def _write(self, record: dict[str, JsonValue]) -> None:
        record = {"t": round(time.monotonic() - self._t0, 6), **record}
        try:
            line = json.dumps(redact(record, self._secrets), ensure_ascii=False)
        except (RecursionError, ValueError):  # never ends the connection (ROBUST-WIRE-001)
            kept = {k: v for k, v in record.items() if k in ("t", "kind", "dir")}
            line = json.dumps({**kept, "unrecorded": "too deeply nested to record"})
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def jsonrpc(self, direction: str, message: JsonValue) -> None:
        """The JSON-RPC peer's tracer: "in" is editor -> bridge, "out" bridge -> editor."""
        arrow = "editor->bridge" if direction == "in" else "bridge->editor"
        self._write({"kind": "jsonrpc", "dir": arrow, "message": message})

    def provider(self, event: dict[str, JsonValue]) -> None:
        """The providers' tracer (requests with redacted headers, events with attempts)."""
        self._write({"kind": "provider", **event})

    def close(self) -> None:
        self._file.close()
