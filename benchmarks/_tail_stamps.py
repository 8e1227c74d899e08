"""acp-bridge with timestamps: run by benchmarks/trace_tail.py in place of `python -m acp_bridge`.

Before the bridge starts, each function named in TAIL_STAMPS (comma-separated
`module:qualified.name`, patched where the caller looks it up) is wrapped so that every call
records (name, start, end) in `time.perf_counter_ns` units, and every write to the protocol's
stdout is recorded as `WRITE<bytes>:<kinds>` (`agent_message` for a line batch holding a chunk,
`response` for one holding a prompt response). At exit the records go to TAIL_STAMPS_OUT, one
tab-separated line each. A wrapper costs a microsecond or two per call: compare runs made with
the same stamps, never these figures with unstamped ones.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import inspect
import os
import runpy
import sys
import time
from collections.abc import Callable
from typing import Any

_RECORDS: list[tuple[str, int, int]] = []
_KINDS = (("agent_message", b"agent_message_chunk"), ("response", b"stopReason"))
_now = time.perf_counter_ns


def _wrapped(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def stamped_async(*args: Any, **kwargs: Any) -> Any:
            start = _now()
            try:
                return await function(*args, **kwargs)
            finally:
                _RECORDS.append((name, start, _now()))

        return stamped_async

    @functools.wraps(function)
    def stamped(*args: Any, **kwargs: Any) -> Any:
        start = _now()
        try:
            return function(*args, **kwargs)
        finally:
            _RECORDS.append((name, start, _now()))

    return stamped


def stamp(spec: str) -> None:
    """Wraps `module:qualified.name`; says on stderr why not when it cannot."""
    module_name, _, qualified = spec.partition(":")
    try:
        owner: Any = importlib.import_module(module_name)
        *path, last = qualified.split(".")
        for part in path:
            owner = getattr(owner, part)
        function = getattr(owner, last)
    except (ImportError, AttributeError, ValueError) as error:
        print(f"_tail_stamps: not stamped {spec}: {error}", file=sys.stderr)
        return
    if inspect.isasyncgenfunction(inspect.unwrap(function)):
        print(f"_tail_stamps: not stamped {spec}: an async generator", file=sys.stderr)
        return
    setattr(owner, last, _wrapped(qualified, function))


def _stamp_writes() -> None:
    from acp_bridge.wire import _stdio

    write_some = _stdio.StdioTransport._write_some

    def stamped(self: Any, data: bytes | memoryview) -> int:
        start = _now()
        written = write_some(self, data)
        raw = bytes(data)
        kinds = [kind for kind, marker in _KINDS if marker in raw]
        _RECORDS.append((f"WRITE{len(raw)}:{'+'.join(kinds)}", start, _now()))
        return written

    _stdio.StdioTransport._write_some = stamped  # type: ignore[method-assign]


def _dump() -> None:
    with open(os.environ["TAIL_STAMPS_OUT"], "w", encoding="utf-8") as out:
        out.writelines(f"{name}\t{start}\t{end}\n" for name, start, end in _RECORDS)


def main() -> None:
    atexit.register(_dump)
    _stamp_writes()
    for spec in filter(None, os.environ.get("TAIL_STAMPS", "").split(",")):
        stamp(spec.strip())
    sys.argv = ["acp_bridge", *sys.argv[1:]]
    runpy.run_module("acp_bridge", run_name="__main__")


if __name__ == "__main__":
    main()
