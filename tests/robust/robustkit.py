"""The real bridge in-process over a memory pair, driven with raw lines (robustness tests)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from bridge import scripted_config
from rawpeer import MemoryLink, RawPeer

from acp_bridge.agent import serve
from acp_bridge.cli._trace import TraceWriter

INIT = {"protocolVersion": 1, "clientCapabilities": {}}


@contextlib.asynccontextmanager
async def raw_bridge(state: Path, trace: Path | None = None) -> AsyncIterator[RawPeer]:
    """The bridge (scripted provider, state in `state`) and a raw peer; `trace` turns on
    `--trace` into that file."""
    writer = TraceWriter(trace) if trace is not None else None
    try:
        async with MemoryLink() as link, anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: serve(
                    link.agent_side,
                    scripted_config(state),
                    trace=writer.jsonrpc if writer else None,
                )
            )
            yield RawPeer(link.client_side)
            tg.cancel_scope.cancel()
    finally:
        if writer is not None:
            writer.close()


def line(message_id: Any, method: str, params_json: str) -> bytes:
    """One request line whose params are given as raw JSON text (possibly not JSON at all)."""
    head = json.dumps({"jsonrpc": "2.0", "id": message_id, "method": method})[:-1]
    return f'{head},"params":{params_json}}}\n'.encode()


async def responses(peer: RawPeer, count: int) -> list[dict[str, Any]]:
    """The next `count` responses (notifications are skipped), in arrival order."""
    found: list[dict[str, Any]] = []
    while len(found) < count:
        message = await peer.receive()
        if "method" not in message:
            found.append(message)
    return found


def trace_lines(path: Path) -> list[dict[str, Any]]:
    """Every record of a trace file: each line must be strict UTF-8 JSON."""
    records = []
    for raw in path.read_bytes().splitlines():
        records.append(json.loads(raw.decode("utf-8")))
    return records
