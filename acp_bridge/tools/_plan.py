"""`update_plan`: the model's todo list, shown to the user as an ACP `plan`.

The model sends the whole list each time (ACP replaces the plan on every update). The tool
changes nothing outside the conversation, so it needs no permission and has no effect key;
its outcome carries the entries, which the turn engine sends as a `plan` update and the
session store keeps with the tool call, so `session/load` shows the plan again
(spec/daily-use.md#plan-001).
"""

from __future__ import annotations

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.tools._base import PlanEntry, ToolContext, ToolKind, ToolOutcome, ToolPreview

__all__ = ["PLAN_OUTPUT_KEY", "UpdatePlan", "plan_entries", "stored_plan"]

PLAN_OUTPUT_KEY = "acpBridgePlan"
"""The key of the plan in the tool call's `rawOutput` (what replay reads back)."""

_PRIORITIES = ("high", "medium", "low")
_STATUSES = ("pending", "in_progress", "completed")
_MAX_ENTRIES = 50
_MAX_CONTENT = 500

_DESCRIPTION = (
    "Keep a plan for multi-step work, shown to the user as a todo list. Call it when a task "
    "takes three or more steps: first with every step pending, then again whenever a step "
    "starts (in_progress, one at a time) or is done (completed). Always send the whole list; "
    "it replaces the previous one. Not needed for a simple question."
)


def plan_entries(value: object) -> tuple[PlanEntry, ...]:
    """The entries of an `update_plan` call; `ToolError` naming what to fix otherwise."""
    if not isinstance(value, list) or not value:
        raise ToolError("entries must be a non-empty list of {content, priority, status}")
    if len(value) > _MAX_ENTRIES:
        raise ToolError(f"a plan has at most {_MAX_ENTRIES} entries; merge some steps")
    entries: list[PlanEntry] = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise ToolError(f"entries[{index}] must be an object")
        content = item.get("content")
        if not isinstance(content, str) or not content.strip():
            raise ToolError(f"entries[{index}].content must be a non-empty string")
        priority = item.get("priority", "medium")
        if priority not in _PRIORITIES:
            raise ToolError(f"entries[{index}].priority must be one of {', '.join(_PRIORITIES)}")
        status = item.get("status", "pending")
        if status not in _STATUSES:
            raise ToolError(f"entries[{index}].status must be one of {', '.join(_STATUSES)}")
        entries.append(PlanEntry(content.strip()[:_MAX_CONTENT], str(priority), str(status)))
    return tuple(entries)


def stored_plan(raw_output: object) -> tuple[PlanEntry, ...] | None:
    """The plan kept in a finished `update_plan` call's rawOutput, or None (PLAN-002)."""
    if not isinstance(raw_output, dict) or PLAN_OUTPUT_KEY not in raw_output:
        return None
    try:
        return plan_entries(raw_output[PLAN_OUTPUT_KEY])
    except ToolError:  # not a plan after all: the call is replayed alone
        return None


class UpdatePlan:
    """The planning tool (see the module docstring)."""

    name = "update_plan"
    description = _DESCRIPTION
    kind = ToolKind.THINK
    side_effect = False

    @property
    def parameters(self) -> JsonObject:
        return {
            "type": "object",
            "properties": {
                "entries": {
                    "type": "array",
                    "description": "The whole plan, in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "What the step does."},
                            "priority": {"type": "string", "enum": list(_PRIORITIES)},
                            "status": {"type": "string", "enum": list(_STATUSES)},
                        },
                        "required": ["content", "priority", "status"],
                    },
                }
            },
            "required": ["entries"],
        }

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        entries = plan_entries(arguments.get("entries"))
        done = sum(1 for e in entries if e.status == "completed")
        return ToolPreview(
            title=f"Update plan ({done} of {len(entries)} done)",
            kind=ToolKind.THINK,
            permission_scope=self.name,
            scope_label="updating the plan",
        )

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        entries = plan_entries(arguments.get("entries"))
        current = next((e.content for e in entries if e.status == "in_progress"), None)
        note = f" Now: {current}." if current else ""
        return ToolOutcome(
            ok=True,
            for_model=f"Plan updated: {len(entries)} entries.{note}",
            raw_output={
                PLAN_OUTPUT_KEY: [
                    {"content": e.content, "priority": e.priority, "status": e.status}
                    for e in entries
                ]
            },
            plan=entries,
        )
