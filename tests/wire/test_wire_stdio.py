"""The stdio transport owns fd 1: stray output of any kind lands on stderr (real subprocesses)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.requirement("WIRE-STDOUT-001"), pytest.mark.subprocess]

CHILD = textwrap.dedent(
    """
    import logging, os, sys, anyio
    from acp_bridge.wire import open_stdio

    async def main():
        print("noise before serving")
        async with open_stdio() as transport:
            print("print noise")
            sys.stdout.write("sys.stdout noise\\n")
            os.write(1, b"fd 1 noise\\n")
            logging.basicConfig(stream=sys.stdout)
            logging.warning("logging noise")
            os.system("echo child process noise")
            data = await transport.receive()
            await transport.send(b'{"echo":' + data.strip() + b'}\\n')
        print("noise after serving", file=sys.stderr)

    anyio.run(main)
    """
)


def _run(stdout: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", CHILD],
        input=b"[1,2]\n",
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        timeout=30,
        check=True,
    )


def test_pipe_carries_only_protocol_lines() -> None:
    done = _run(subprocess.PIPE)
    lines = done.stdout.splitlines()
    # The only line before serving is the one printed before stdio was claimed.
    assert lines == [b"noise before serving", b'{"echo":[1,2]}']
    for noise in (
        b"print noise",
        b"sys.stdout noise",
        b"fd 1 noise",
        b"logging noise",
        b"child process noise",
    ):
        assert noise in done.stderr


def test_regular_file_as_stdout(tmp_path: Path) -> None:
    out = tmp_path / "out.ndjson"
    with out.open("wb") as handle:
        done = _run(handle)
    assert out.read_bytes().splitlines() == [b"noise before serving", b'{"echo":[1,2]}']
    assert b"fd 1 noise" in done.stderr
