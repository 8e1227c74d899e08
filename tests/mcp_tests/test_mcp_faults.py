"""Failures are contained: our SDK fault server crashes, hangs, answers malformed data, changes
its tools; a server that cannot start. One server process is shared by the tests that leave it
running (module scope); the crash gets its own.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
from mcp_tests.mcpkit import FAULT_SERVER, calls

from acp_bridge.errors import ToolError
from acp_bridge.mcp import McpLimits, OutcomeUnknown, ServerSpec, SessionServers
from acp_bridge.tools import ToolContext

pytestmark = pytest.mark.anyio

CTX = ToolContext("s", Path("/"), (Path("/"),))


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class Servers:
    def __init__(self, group: SessionServers, log: Path) -> None:
        self.group = group
        self.log = log
        self.notices: list[tuple[str, str]] = []

    def tool(self, name: str):  # type: ignore[no-untyped-def]
        for tool in self.group.tools():
            if tool.info.tool == name:
                return tool
        raise AssertionError(f"no tool {name}: {[t.info.tool for t in self.group.tools()]}")


def _spec(log: Path, name: str = "faults") -> ServerSpec:
    return ServerSpec(
        name,
        "stdio",
        command=sys.executable,
        args=(str(FAULT_SERVER),),
        env=(("FAULT_SERVER_LOG", str(log)),),
    )


async def _started(specs: list[ServerSpec], log: Path) -> AsyncIterator[Servers]:
    holder: list[Servers] = []

    async def report(severity: str, message: str) -> None:
        holder[0].notices.append((severity, message))

    limits = McpLimits(connect_timeout=60, ready_timeout=60, call_timeout=3)
    group = SessionServers(specs, report, limits)
    servers = Servers(group, log)
    holder.append(servers)
    async with anyio.create_task_group() as tg:
        tg.start_soon(group.run)
        with anyio.fail_after(90):
            await group.wait_ready()
        yield servers
        group.stop()
        with anyio.fail_after(30):
            await group.stopped.wait()


@pytest.fixture(scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Servers]:
    log = tmp_path_factory.mktemp("faults") / "calls.jsonl"
    missing = ServerSpec("missing", "stdio", command="/nonexistent/mcp-server")
    async for servers in _started([_spec(log), missing], log):
        yield servers


@pytest.mark.requirement("MCP-FAIL-001")
async def test_a_server_that_cannot_start_is_reported_and_the_others_carry_on(
    shared: Servers,
) -> None:
    states = {c.spec.name: c.state for c in shared.group.connections}
    assert states == {"faults": "ready", "missing": "failed"}
    assert [s for s, m in shared.notices if "'missing'" in m] == ["error"]
    assert all(t.info.server == "faults" for t in shared.group.tools())


@pytest.mark.requirement("MCP-FAIL-002")
async def test_a_hung_call_times_out_and_the_server_stays_usable(shared: Servers) -> None:
    with pytest.raises(OutcomeUnknown, match="did not answer within 3 s"):
        await shared.tool("hang").run({}, CTX)
    outcome = await shared.tool("echo").run({"text": "still here"}, CTX)
    assert outcome.for_model == "still here"


@pytest.mark.requirement("MCP-FAIL-002")
@pytest.mark.requirement("MCP-MALFORMED-001")
async def test_a_malformed_result_is_a_readable_tool_error(shared: Servers) -> None:
    with pytest.raises(ToolError, match="malformed result") as raised:
        await shared.tool("malformed").run({}, CTX)
    # It answered, so it may have acted: the outcome is final (EFFECT-FINAL-001).
    assert raised.value.may_have_changed is True
    outcome = await shared.tool("echo").run({"text": "still here"}, CTX)  # it carries on
    assert outcome.for_model == "still here"


@pytest.mark.requirement("MCP-RESULT-002")
async def test_an_is_error_result_carries_the_servers_message(shared: Servers) -> None:
    outcome = await shared.tool("fail").run({"reason": "no such order"}, CTX)
    assert not outcome.ok
    assert outcome.for_model.startswith("faults: fail failed: ")
    assert outcome.for_model.endswith("refused: no such order")


@pytest.mark.requirement("MCP-LIFE-006")
async def test_a_tools_list_change_is_picked_up(shared: Servers) -> None:
    assert "late" not in {t.info.tool for t in shared.group.tools()}
    await shared.tool("add_tool").run({}, CTX)
    with anyio.fail_after(30):
        while "late" not in {t.info.tool for t in shared.group.tools()}:
            await anyio.wait_all_tasks_blocked()
    outcome = await shared.tool("late").run({"text": "x"}, CTX)
    assert outcome.for_model == "late: x"


@pytest.mark.requirement("MCP-FAIL-002")
async def test_a_crash_mid_call_is_an_unknown_outcome_and_the_server_is_dropped(
    tmp_path: Path,
) -> None:
    log = tmp_path / "calls.jsonl"
    async for servers in _started([_spec(log, "crashy")], log):
        with pytest.raises(OutcomeUnknown, match="went away"):
            await servers.tool("crash").run({}, CTX)
        assert servers.group.tools() == []
        assert servers.notices == [
            ("error", "MCP server 'crashy' stopped during a call (it crashed or exited)")
        ]
    assert [c["tool"] for c in calls(log)] == ["started", "crash"]


@pytest.mark.requirement("MCP-SERVER-REQ-001")
@pytest.mark.parametrize(
    ("request_kind", "answer"),
    [
        ("sampling", "error -32600: Sampling not supported"),
        ("elicitation", "error -32600: Elicitation not supported"),
        ("roots", "error -32600: List roots not supported"),  # no roots given: refused too
    ],
)
async def test_server_requests_the_bridge_does_not_take_get_mcp_errors(
    shared: Servers, request_kind: str, answer: str
) -> None:
    outcome = await shared.tool("ask_client").run({"request": request_kind}, CTX)
    assert outcome.for_model == answer  # the exact error the server received
    outcome = await shared.tool("echo").run({"text": "still here"}, CTX)  # it carries on
    assert outcome.for_model == "still here"


@pytest.mark.requirement("MCP-ROOTS-001")
async def test_roots_list_is_answered_with_the_sessions_directories(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    work, extra = tmp_path / "work space", tmp_path / "docs"
    spec = replace(_spec(log, "rooted"), cwd=str(work), roots=(str(work), str(extra)))
    work.mkdir()
    async for servers in _started([spec], log):
        outcome = await servers.tool("ask_client").run({"request": "roots"}, CTX)
        sampling = await servers.tool("ask_client").run({"request": "sampling"}, CTX)
    assert json.loads(outcome.for_model) == [
        {"uri": work.as_uri(), "name": "work space"},
        {"uri": extra.as_uri(), "name": "docs"},
    ]
    assert sampling.for_model == "error -32600: Sampling not supported"
