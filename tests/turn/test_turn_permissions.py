"""The permission gate, session modes, and calls that must not crash the turn."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from turn.turnkit import (
    WORKSPACE,
    FakeProvider,
    FakeTool,
    IssueRefund,
    ReadFile,
    RecordingSink,
    RunCommand,
    ScriptItem,
    WriteFile,
    finish,
    make_request,
    start,
    text,
    tool_call,
)

from acp_bridge.providers import FinishReason, ToolResults
from acp_bridge.tools._base import DiffContent, TextContent
from acp_bridge.turn import (
    PermissionMemory,
    SessionMode,
    StopReason,
    ToolCallChanged,
    ToolCallShown,
    ToolStatus,
    TurnResult,
    run_turn,
)


def loop(*calls: tuple[str, str, dict[str, object]]) -> list[list[ScriptItem]]:
    """One model call making `calls`, then a closing answer."""
    first: list[ScriptItem] = [start()]
    for index, (call_id, name, arguments) in enumerate(calls):
        first += tool_call(call_id, name, arguments, index)  # type: ignore[arg-type]
    first.append(finish(FinishReason.TOOL_CALLS))
    return [first, [start(), *text("Done."), finish()]]


async def play(
    scripts: Sequence[Sequence[ScriptItem]],
    tools: Sequence[FakeTool],
    answers: Sequence[str | None] = (),
    *,
    mode: SessionMode = SessionMode.ASK,
    memory: PermissionMemory | None = None,
    turn_id: str = "s1-turn1",
) -> tuple[TurnResult, RecordingSink, FakeProvider, list[object]]:
    sink = RecordingSink(answers)
    provider = FakeProvider(*scripts)
    request = make_request(provider, sink, tools, mode=mode, memory=memory, turn_id=turn_id)
    result = await run_turn(request)
    return result, sink, provider, list(request.history)


def statuses(sink: RecordingSink) -> dict[str, str]:
    out: dict[str, str] = {}
    for update in sink.updates:
        if isinstance(update, ToolCallShown | ToolCallChanged) and update.status:
            out[update.tool_call_id] = update.status.value
    return out


def results_of(history: list[object]) -> list[tuple[str, str, bool]]:
    found = [m for m in history if isinstance(m, ToolResults)]
    return [(r.call_id, r.output, r.is_error) for m in found for r in m.results]


@pytest.mark.anyio
@pytest.mark.requirement("TURN-004")
@pytest.mark.requirement("TURN-003")
async def test_reads_run_and_edits_ask_with_four_named_options() -> None:
    read, write = ReadFile(), WriteFile()
    args = {"path": "a.txt", "content": "x"}
    result, sink, _, _ = await play(
        loop(("r1", "read_file", {"path": "a.txt"}), ("w1", "write_file", args)), [read, write]
    )
    (prompt,) = sink.prompts
    assert [(o.option_id, o.name, o.kind.value) for o in prompt.options] == [
        ("allow-once", "Allow once", "allow_once"),
        ("allow-always", "Allow always for write_file", "allow_always"),
        ("reject-once", "Reject", "reject_once"),
        ("reject-always", "Reject always for write_file", "reject_always"),
    ]
    # The tool_call came first, pending, with the bridge's id, the diff, locations, rawInput.
    shown = [u for u in sink.timeline if isinstance(u, ToolCallShown)]
    assert [s.tool_call_id for s in shown] == ["s1-turn1-t1", "s1-turn1-t2"]
    write_shown = shown[1]
    assert sink.timeline.index(write_shown) < sink.timeline.index(prompt)
    assert prompt.call == write_shown
    assert write_shown.status is ToolStatus.PENDING
    assert write_shown.raw_input == args
    assert write_shown.content == (DiffContent(str(WORKSPACE / "a.txt"), "x", None),)
    assert write_shown.locations[0].path == str(WORKSPACE / "a.txt")
    assert len(read.executions) == 1
    assert len(write.executions) == 1
    assert [r.asked for r in result.tool_runs] == [False, True]


@pytest.mark.anyio
@pytest.mark.requirement("TURN-004")
async def test_commands_are_remembered_per_prefix() -> None:
    run = RunCommand()
    memory = PermissionMemory()
    _, sink, _, _ = await play(
        loop(("c1", "run_command", {"command": "git status --short"})),
        [run],
        ["allow-always"],
        memory=memory,
    )
    assert sink.prompts[0].options[1].name == "Always allow `git status`"
    # A later turn: the same prefix runs without asking, another prefix asks.
    _, sink2, _, _ = await play(
        loop(
            ("c2", "run_command", {"command": "git status"}),
            ("c3", "run_command", {"command": "git push origin"}),
        ),
        [run],
        ["allow-once"],
        memory=memory,
        turn_id="s1-turn2",
    )
    assert [p.call.raw_input for p in sink2.prompts] == [{"command": "git push origin"}]
    assert [e.arguments["command"] for e in run.executions] == [
        "git status --short",
        "git status",
        "git push origin",
    ]


@pytest.mark.anyio
@pytest.mark.requirement("TURN-004")
async def test_reject_once_and_reject_always() -> None:
    refund = IssueRefund()
    memory = PermissionMemory()
    _, sink, provider, history = await play(
        loop(("c1", "issue_refund", {"order_id": "A"})), [refund], ["reject-once"], memory=memory
    )
    assert refund.executions == []
    assert statuses(sink) == {"s1-turn1-t1": "failed"}
    ((call_id, output, is_error),) = results_of(history)
    assert call_id == "c1"
    assert is_error
    assert "rejected" in output
    # The model read the rejection in its next request.
    assert isinstance(provider.requests[1].messages[-1], ToolResults)

    _, sink, _, history = await play(
        loop(("c1", "issue_refund", {"order_id": "B"})),
        [refund],
        ["reject-always"],
        memory=memory,
        turn_id="s1-turn2",
    )
    _, sink, _, history = await play(
        loop(("c1", "issue_refund", {"order_id": "C"})),
        [refund],
        memory=memory,
        turn_id="s1-turn3",
    )
    assert sink.prompts == []  # answered from memory
    assert refund.executions == []
    assert "always reject" in results_of(history)[0][1]


@pytest.mark.anyio
@pytest.mark.requirement("TURN-004")
@pytest.mark.requirement("TURN-014")
async def test_a_cancelled_prompt_ends_the_turn_cancelled_and_pairs_history() -> None:
    refund, write = IssueRefund(), WriteFile()
    result, sink, provider, history = await play(
        loop(
            ("c1", "issue_refund", {"order_id": "A"}),
            ("w1", "write_file", {"path": "b", "content": "c"}),
        ),
        [refund, write],
        [None],
    )
    assert result.stop_reason is StopReason.CANCELLED
    assert refund.executions == []
    assert write.executions == []
    assert statuses(sink) == {"s1-turn1-t1": "failed"}  # the second call was never shown
    assert [(c, e) for c, _, e in results_of(history)] == [("c1", True), ("w1", True)]
    assert len(provider.requests) == 1


@pytest.mark.anyio
@pytest.mark.requirement("TURN-005")
async def test_auto_edit_runs_workspace_edits_and_still_asks_for_commands() -> None:
    write, run = WriteFile(), RunCommand()
    _, sink, _, _ = await play(
        loop(
            ("w1", "write_file", {"path": "in.txt", "content": "x"}),
            ("w2", "write_file", {"path": "/etc/out.txt", "content": "x"}),
            ("c1", "run_command", {"command": "make"}),
        ),
        [write, run],
        mode=SessionMode.AUTO_EDIT,
    )
    assert [p.call.raw_input for p in sink.prompts] == [
        {"path": "/etc/out.txt", "content": "x"},
        {"command": "make"},
    ]
    assert len(write.executions) == 2
    assert len(run.executions) == 1


@pytest.mark.anyio
@pytest.mark.requirement("TURN-005")
async def test_read_only_offers_no_side_effects_and_refuses_a_call() -> None:
    read, write = ReadFile(), WriteFile()
    _, sink, provider, history = await play(
        loop(("w1", "write_file", {"path": "a", "content": "x"})),
        [read, write],
        mode=SessionMode.READ_ONLY,
    )
    assert [s.name for s in provider.requests[0].tools] == ["read_file"]
    assert write.executions == []
    assert sink.prompts == []
    assert statuses(sink) == {"s1-turn1-t1": "failed"}
    assert "read-only" in results_of(history)[0][1]
    assert SessionMode("read-only") is SessionMode.READ_ONLY
    assert SessionMode.AUTO_EDIT.value == "auto-edit"
    assert SessionMode.AUTO_EDIT.label


@pytest.mark.anyio
@pytest.mark.requirement("TURN-008")
async def test_unknown_tools_invalid_arguments_and_failures_never_crash() -> None:
    refund = IssueRefund()
    broken_tool = FakeTool("explode", side_effect=False, fail_with=RuntimeError("bug"))
    result, sink, provider, history = await play(
        loop(
            ("u1", "no_such_tool", {}),
            ("c1", "issue_refund", {"wrong": 1}),
            ("x1", "explode", {}),
            ("c2", "issue_refund", {"order_id": "A"}),
        ),
        [refund, broken_tool],
    )
    assert result.stop_reason is StopReason.END_TURN
    assert statuses(sink) == {
        "s1-turn1-t1": "failed",
        "s1-turn1-t2": "failed",
        "s1-turn1-t3": "failed",
        "s1-turn1-t4": "completed",
    }
    outputs = results_of(history)
    assert [c for c, _, _ in outputs] == ["u1", "c1", "x1", "c2"]
    assert "Unknown tool 'no_such_tool'" in outputs[0][1]
    assert "issue_refund" in outputs[0][1]
    assert outputs[1][1] == "Invalid arguments for issue_refund: missing order_id"
    assert "failed unexpectedly" in outputs[2][1]
    assert [e for _, _, e in outputs] == [True, True, True, False]
    unknown = next(u for u in sink.updates if isinstance(u, ToolCallShown))
    assert unknown.title == "Unknown tool: no_such_tool"
    assert len(provider.requests) == 2


@pytest.mark.anyio
@pytest.mark.requirement("TURN-003")
async def test_progress_reports_and_completion_carry_content() -> None:
    refund = IssueRefund()
    _, sink, _, _ = await play(loop(("c1", "issue_refund", {"order_id": "A"})), [refund])
    changes = [u for u in sink.updates if isinstance(u, ToolCallChanged)]
    assert [c.status for c in changes] == [ToolStatus.IN_PROGRESS, None, ToolStatus.COMPLETED]
    assert changes[1].content == (TextContent("running issue_refund"),)
    assert changes[2].raw_output == {"n": 1}


@pytest.mark.anyio
async def test_an_unknown_option_id_is_a_rejection() -> None:
    refund = IssueRefund()
    _, sink, _, _ = await play(
        loop(("c1", "issue_refund", {"order_id": "A"})), [refund], ["maybe-later"]
    )
    assert refund.executions == []
    assert statuses(sink) == {"s1-turn1-t1": "failed"}
