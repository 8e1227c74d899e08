"""The spec documents, the requirement registry, the public surface, and the wire shape.

The engine emits `TurnUpdate`s; the agent layer renders them as ACP messages. `to_wire` below is
a test-only rendering that follows the ACP v1 shapes, so the updates of real engine runs (and
the examples in spec/reset-extension.md) can be validated against the official v1 schema.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from acp_schema import AgentWireValidator
from turn.turnkit import (
    FakeProvider,
    IssueRefund,
    PromptSeen,
    ReadFile,
    RecordingSink,
    WriteFile,
    broken,
    finish,
    make_request,
    start,
    text,
    thought,
    tool_call,
)

import acp_bridge.turn as turn_package
from acp_bridge.client import EditorEvent, MessageEntry, PermissionAsked, PromptSent, reduce
from acp_bridge.providers import FinishReason
from acp_bridge.tools._base import DiffContent, TerminalContent, TextContent, ToolContent
from acp_bridge.turn import (
    AgentText,
    AgentThought,
    PermissionOption,
    PlanShown,
    ToolCallShown,
    TurnUpdate,
    UsageReport,
    UserNotice,
    run_turn,
)

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "spec" / "requirements" / "turn.toml"


def requirements() -> list[dict[str, str]]:
    with REQUIREMENTS.open("rb") as file:
        return list(tomllib.load(file)["requirement"])


def test_every_requirement_points_at_its_heading_and_back() -> None:
    listed = requirements()
    ids = [r["id"] for r in listed]
    assert len(ids) == len(set(ids))
    documented: set[str] = set()
    for doc in ("reset-extension.md", "effect-keys.md"):
        body = (ROOT / "spec" / doc).read_text(encoding="utf-8")
        documented |= set(re.findall(r"^### ((?:RESET|TURN|EFFECT)-\d{3})$", body, re.M))
    assert set(ids) == documented
    for requirement in listed:
        assert requirement["level"] in {"MUST", "SHOULD", "MAY"}
        path, anchor = requirement["spec"].split("#")
        body = (ROOT / path).read_text(encoding="utf-8")
        assert anchor == requirement["id"].lower()
        assert f"\n### {requirement['id']}\n" in body


def test_every_requirement_is_checked_by_a_test() -> None:
    marked: set[str] = set()
    for test_file in Path(__file__).parent.glob("test_turn_*.py"):
        marked |= set(re.findall(r'requirement\("([A-Z]+-\d{3})"\)', test_file.read_text()))
    ids = {r["id"] for r in requirements()}
    assert marked <= ids, marked - ids
    assert ids == marked


def test_the_public_surface_is_exact() -> None:
    names = turn_package.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    for name in names:
        assert getattr(turn_package, name) is not None
    public = {n for n in vars(turn_package) if not n.startswith("_")}
    assert public - set(names) <= {"annotations", "TYPE_CHECKING"}  # lazy exports


# -- wire rendering (test-only) ------------------------------------------------------------


def content_to_wire(content: ToolContent) -> dict[str, Any]:
    if isinstance(content, TextContent):
        return {"type": "content", "content": {"type": "text", "text": content.text}}
    if isinstance(content, DiffContent):
        return {
            "type": "diff",
            "path": content.path,
            "oldText": content.old_text,
            "newText": content.new_text,
        }
    assert isinstance(content, TerminalContent)
    return {"type": "terminal", "terminalId": content.terminal_id}


def tool_call_fields(update: ToolCallShown) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "toolCallId": update.tool_call_id,
        "title": update.title,
        "kind": update.kind.value,
        "status": update.status.value,
    }
    if update.content:
        fields["content"] = [content_to_wire(c) for c in update.content]
    if update.locations:
        fields["locations"] = [
            {"path": loc.path, **({"line": loc.line} if loc.line else {})}
            for loc in update.locations
        ]
    if update.raw_input is not None:
        fields["rawInput"] = update.raw_input
    return fields


def update_to_wire(update: TurnUpdate) -> dict[str, Any]:
    if isinstance(update, AgentText | AgentThought):
        kind = "agent_message_chunk" if isinstance(update, AgentText) else "agent_thought_chunk"
        chunk: dict[str, Any] = {
            "sessionUpdate": kind,
            "content": {"type": "text", "text": update.text},
            "messageId": update.message_id,
        }
        if isinstance(update, AgentText) and update.reset is not None:
            chunk["_meta"] = update.reset.to_meta()
        return chunk
    if isinstance(update, ToolCallShown):
        return {"sessionUpdate": "tool_call", **tool_call_fields(update)}
    changed: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": update.tool_call_id,
    }
    if update.status is not None:
        changed["status"] = update.status.value
    if update.title is not None:
        changed["title"] = update.title
    if update.content is not None:
        changed["content"] = [content_to_wire(c) for c in update.content]
    if update.locations is not None:
        changed["locations"] = [{"path": loc.path} for loc in update.locations]
    if update.raw_output is not None:
        changed["rawOutput"] = update.raw_output
    return changed


def to_wire(session_id: str, timeline: Sequence[TurnUpdate | PromptSeen]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    request_id = 0
    for item in timeline:
        if isinstance(item, UserNotice | UsageReport | PlanShown):
            continue  # live updates beyond the reset flag (spec/usage-and-compaction.md)
        if isinstance(item, PromptSeen):
            messages.append(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "session/request_permission",
                    "params": {
                        "sessionId": session_id,
                        "toolCall": tool_call_fields(item.call),
                        "options": [option_to_wire(o) for o in item.options],
                    },
                }
            )
            request_id += 1
        else:
            messages.append(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": session_id, "update": update_to_wire(item)},
                }
            )
    return messages


def option_to_wire(option: PermissionOption) -> dict[str, Any]:
    return {"optionId": option.option_id, "name": option.name, "kind": option.kind.value}


@pytest.fixture
def validator() -> AgentWireValidator:
    """The project's oracle: the official v1 schema, strict about undeclared root keys."""
    return AgentWireValidator(strict_roots=True)


def spec_wire_lines() -> list[dict[str, Any]]:
    body = (ROOT / "spec" / "reset-extension.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", body, re.S)
    return [json.loads(line) for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.requirement("RESET-002")
def test_the_spec_examples_are_valid_acp_v1(validator: AgentWireValidator) -> None:
    lines = spec_wire_lines()
    assert len(lines) >= 7
    for message in lines:
        validator.check(message)


@pytest.mark.anyio
@pytest.mark.requirement("RESET-001")
@pytest.mark.requirement("TURN-003")
async def test_the_spec_example_is_what_the_engine_sends(
    validator: AgentWireValidator,
) -> None:
    refund = {"order_id": "ORD-7781"}
    provider = FakeProvider(
        [
            start(),
            *text("Checking order ORD-7781. "),
            *tool_call("c1", "issue_refund", refund),
            *text("Refunding the dam"),
            broken(),
        ],
        [
            start(),
            *text("Checking order ORD-7781. "),
            *tool_call("c7", "issue_refund", refund),
            *text("The book arrived damaged, so I have started a full refund."),
            finish(FinishReason.TOOL_CALLS),
        ],
        [start(), *text("Done."), finish()],
    )
    sink = RecordingSink()
    await run_turn(make_request(provider, sink, [IssueRefund()], turn_id="sess_7f3a-turn1"))
    wire = to_wire("sess_7f3a", sink.timeline)
    assert wire[: len(spec_wire_lines())] == spec_wire_lines()
    for message in wire:
        validator.check(message)
    # The package's reference editor shows what the spec says.
    view = reduce(editor_events("Refund my damaged book", wire))
    assert [e.text for e in view.entries if isinstance(e, MessageEntry)] == [
        "Refund my damaged book",
        "Checking order ORD-7781. The book arrived damaged, so I have started a full refund.",
        "Done.",
    ]
    assert [(n.attempt, n.reason) for n in view.retries] == [(2, "stream_interrupted")]


def editor_events(prompt: str, wire: Sequence[dict[str, Any]]) -> list[EditorEvent]:
    events: list[EditorEvent] = [PromptSent(prompt)]
    for message in wire:
        if message["method"] == "session/update":
            events.append(message["params"])
        else:
            events.append(PermissionAsked(message["params"], "allow-once"))
    return events


@pytest.mark.requirement("RESET-009")
@pytest.mark.requirement("RESET-005")
def test_the_reference_editor_accepts_unknown_reasons_and_keys() -> None:
    def chunk(text: str, message_id: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        update: dict[str, Any] = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
            "messageId": message_id,
        }
        if meta is not None:
            update["_meta"] = meta
        return {"sessionId": "s", "update": update}

    marker = {"reset": True, "attempt": 7, "reason": "gremlins", "vendor.example/x": [1]}
    view = reduce(
        [PromptSent("q"), chunk("Hal", "m-a6"), chunk("", "m-a7", marker), chunk("Hello.", "m-a7")]
    )
    assert [e.text for e in view.entries if isinstance(e, MessageEntry)] == ["q", "Hello."]
    assert [(n.attempt, n.reason) for n in view.retries] == [(7, "gremlins")]


@pytest.mark.anyio
async def test_a_busy_turn_renders_to_valid_acp_v1(
    validator: AgentWireValidator,
) -> None:
    provider = FakeProvider(
        [
            start(),
            *thought("Let me look", signature="s"),
            *text("Looking."),
            *tool_call("r1", "read_file", {"path": "a.py"}, 0),
            *tool_call("w1", "write_file", {"path": "b.py", "content": "x = 1\n"}, 1),
            *tool_call("u1", "nope", {}, 2),
            broken(),
        ],
        [
            start(),
            *thought("Again"),
            *text("Looking again."),
            *tool_call("r2", "read_file", {"path": "a.py"}, 0),
            *tool_call("w2", "write_file", {"path": "b.py", "content": "x = 1\n"}, 1),
            *tool_call("u2", "nope", {}, 2),
            finish(FinishReason.TOOL_CALLS),
        ],
        [start(), *text("Done."), finish()],
    )
    sink = RecordingSink(["allow-always"])
    await run_turn(make_request(provider, sink, [ReadFile(), WriteFile()]))
    wire = to_wire("s1", sink.timeline)
    kinds = {m["params"].get("update", {}).get("sessionUpdate") or m["method"] for m in wire}
    assert kinds == {
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "session/request_permission",
    }
    for message in wire:
        validator.check(message)
    view = reduce(editor_events("look", wire))
    assert [(e.role, e.text) for e in view.entries if isinstance(e, MessageEntry)] == [
        ("user", "look"),
        ("thought", "Again"),
        ("agent", "Looking again."),
        ("agent", "Done."),
    ]
    assert len(view.permission_prompts) == 1
