"""The reference MCP servers, for real: mcp-server-time (PyPI), server-everything over stdio,
streamable HTTP and SSE, and server-filesystem (npm, pinned in tests/mcp_tests/npm). All five
start together in one session's group (concurrently, MCP-LIFE-001), shared by the module.
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_tests.mcpkit import npm_servers

from acp_bridge.mcp import McpLimits, McpTool, ServerSpec, SessionServers
from acp_bridge.tools import ToolContext

pytestmark = [pytest.mark.anyio, pytest.mark.npm, pytest.mark.requirement("MCP-REAL-001")]

CTX = ToolContext("s", Path("/"), (Path("/"),))
SECRET = "everything-env-secret-31"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _listening(process: subprocess.Popen[bytes], needle: bytes, timeout: float = 60) -> None:
    """Reads the server's stderr until it says it listens (bounded)."""
    assert process.stderr is not None
    seen = b""
    while needle not in seen:
        ready, _, _ = select.select([process.stderr], [], [], timeout)
        chunk = os.read(process.stderr.fileno(), 4096) if ready else b""
        if not chunk:
            raise AssertionError(f"the server did not start: {seen[-2000:]!r}")
        seen += chunk


@pytest.fixture(scope="module")
def remote_everything() -> Iterator[tuple[str, str]]:
    """server-everything in its streamableHttp and sse modes, each on a free loopback port."""
    modules = npm_servers()
    node = shutil.which("node")
    assert node is not None
    entry = str(modules / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js")
    http_port, sse_port = _free_port(), _free_port()
    procs = []
    try:
        for mode, port, needle in (
            ("streamableHttp", http_port, b"listening on port"),
            ("sse", sse_port, b"running on port"),
        ):
            proc = subprocess.Popen(
                [node, entry, mode],
                env={**os.environ, "PORT": str(port)},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            procs.append(proc)
            _listening(proc, needle)
        yield f"http://127.0.0.1:{http_port}/mcp", f"http://127.0.0.1:{sse_port}/sse"
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=30)
            if proc.stderr is not None:
                proc.stderr.close()


class Group:
    def __init__(self, group: SessionServers) -> None:
        self.group = group
        self.notices: list[tuple[str, str]] = []

    def tool(self, server: str, name: str) -> McpTool:
        for tool in self.group.tools():
            if (tool.info.server, tool.info.tool) == (server, name):
                return tool
        offered = sorted((t.info.server, t.info.tool) for t in self.group.tools())
        raise AssertionError(f"no {name} on {server}: {offered}")


@pytest.fixture(scope="module")
async def servers(
    remote_everything: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Group]:
    modules = npm_servers()
    node = shutil.which("node")
    assert node is not None
    root = tmp_path_factory.mktemp("fs-root")
    (root / "hello.txt").write_text("hello from the filesystem server\n")
    everything = str(modules / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js")
    filesystem = str(modules / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js")
    http_url, sse_url = remote_everything
    specs = [
        ServerSpec("time", "stdio", command=sys.executable, args=("-m", "mcp_server_time")),
        ServerSpec(
            "everything",
            "stdio",
            command=node,
            args=(everything, "stdio"),
            env=(("EVERYTHING_SECRET", SECRET),),
        ),
        ServerSpec("files", "stdio", command=node, args=(filesystem, str(root))),
        ServerSpec("everything-http", "http", url=http_url, headers=(("X-Token", SECRET),)),
        ServerSpec("everything-sse", "sse", url=sse_url, headers=(("X-Token", SECRET),)),
    ]
    holder: list[Group] = []

    async def report(severity: str, message: str) -> None:
        holder[0].notices.append((severity, message))

    group = SessionServers(specs, report, McpLimits(connect_timeout=90, ready_timeout=90))
    holder.append(Group(group))
    async with anyio.create_task_group() as tg:
        tg.start_soon(group.run)
        with anyio.fail_after(120):
            await group.wait_ready()
        holder[0].root = root  # type: ignore[attr-defined]
        yield holder[0]
        group.stop()
        with anyio.fail_after(60):
            await group.stopped.wait()


async def test_all_five_servers_connect_and_offer_their_tools(servers: Group) -> None:
    states = {c.spec.name: (c.state, c.problem) for c in servers.group.connections}
    assert {name: state for name, (state, _) in states.items()} == dict.fromkeys(
        ("time", "everything", "files", "everything-http", "everything-sse"), "ready"
    ), states
    assert servers.notices == []
    names = {t.name for t in servers.group.tools()}
    assert {
        "mcp__time__get_current_time",
        "mcp__everything__echo",
        "mcp__files__read_text_file",
        "mcp__everything-http__echo",
        "mcp__everything-sse__echo",
    } <= names


async def test_time_answers_for_a_timezone(servers: Group) -> None:
    outcome = await servers.tool("time", "get_current_time").run({"timezone": "Europe/Paris"}, CTX)
    assert outcome.ok
    assert '"timezone": "Europe/Paris"' in outcome.for_model


@pytest.mark.parametrize("server", ["everything", "everything-http", "everything-sse"])
async def test_everything_echoes_over_each_transport(servers: Group, server: str) -> None:
    tool = servers.tool(server, "echo")
    assert not tool.side_effect  # annotated readOnlyHint
    outcome = await tool.run({"message": f"via {server}"}, CTX)
    assert outcome.for_model == f"Echo: via {server}"


@pytest.mark.requirement("MCP-RESULT-001")
async def test_everything_image_content_is_described(servers: Group) -> None:
    outcome = await servers.tool("everything", "get-tiny-image").run({}, CTX)
    assert "[image image/png, " in outcome.for_model


@pytest.mark.requirement("MCP-SECRET-001")
async def test_a_stdio_servers_env_reaches_it_and_nothing_else(servers: Group) -> None:
    outcome = await servers.tool("everything", "get-env").run({}, CTX)
    assert SECRET in outcome.for_model  # the server got it, as the editor asked
    for connection in servers.group.connections:
        assert SECRET not in repr(connection.spec)


async def test_filesystem_reads_inside_its_root_and_refuses_outside(servers: Group) -> None:
    root: Path = servers.root  # type: ignore[attr-defined]
    read = servers.tool("files", "read_text_file")
    outcome = await read.run({"path": str(root / "hello.txt")}, CTX)
    assert outcome.for_model.strip() == "hello from the filesystem server"
    refused: Any = await read.run({"path": "/etc/hostname"}, CTX)
    assert not refused.ok
    assert "outside allowed directories" in refused.for_model.lower() or "denied" in (
        refused.for_model.lower()
    )
