"""`edit_file {path, old_text, new_text}`: replace one exact piece of text in a file.

`old_text` must occur exactly once. When it does not occur, the call fails with a message
telling the model to re-read and quote exactly; when it occurs N times, the message says N
and asks for more surrounding lines (TOOLS-008).

Idempotent on its own (TOOLS-009), so a replay after a crash never applies an edit twice:
- `old_text` absent and `new_text` present exactly once: the edit is already applied; the
  call succeeds ("already applied") and changes nothing;
- an edit that keeps `old_text` inside `new_text` (an insertion around it): when `new_text`
  is present exactly once and every occurrence of `old_text` lies inside it, it is already
  applied too (replacing again would insert twice);
- a deletion (empty `new_text`) leaves nothing to recognise: replayed, it fails as not found.
The file's line endings are kept: when the file uses CRLF and the texts do not match as
given, their CRLF form is tried. The preview computes the whole-file diff before approval
(TOOLS-007), and the run writes exactly that diff, only while the file is still what the
preview read (WS-STALE-001: a stat on the local disk, a re-read through the editor); a file
changed or deleted while the permission was asked is left as it is and the call fails,
telling the model to read it again. So the preview's texts are reused and a big file's edit
holds one old and one new text, not two of each (issue 15.5, PERF-BIG-005).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from dataclasses import dataclass, field

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.tools._args import required_str
from acp_bridge.tools._base import (
    DiffContent,
    Location,
    TextContent,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolPreview,
)
from acp_bridge.tools._fs import check_unchanged, read_stamped, write_text
from acp_bridge.tools._paths import WorkspacePath, resolve_path
from acp_bridge.tools._stale import ReadStamp, fresh_check
from acp_bridge.tools._text import ToolLimits

__all__ = ["EditFile", "EditPlan", "plan_edit"]

logger = logging.getLogger(__name__)

_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File path, relative to the working directory or absolute inside "
            "the workspace.",
        },
        "old_text": {
            "type": "string",
            "description": "The exact text to replace, including whitespace and indentation. "
            "It must occur exactly once in the file: include enough surrounding lines.",
        },
        "new_text": {"type": "string", "description": "The text to put in its place."},
    },
    "required": ["path", "old_text", "new_text"],
}


@dataclass(frozen=True, slots=True)
class EditPlan:
    """What an edit does to a file's text.

    Attributes:
        text: the whole file after the edit (unchanged when `already_applied`).
        line: 1-based line where the replaced (or already present) text starts.
        already_applied: the file already holds the result; nothing is written.
    """

    text: str
    line: int
    already_applied: bool


def _positions(text: str, part: str) -> list[int]:
    found: list[int] = []
    index = text.find(part)
    while index != -1:
        found.append(index)
        index = text.find(part, index + 1)
    return found


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _plan_exact(text: str, old_text: str, new_text: str) -> EditPlan | int:
    """The plan, or how many times `old_text` occurs when it cannot be applied (0 or >1)."""
    olds = _positions(text, old_text)
    news = _positions(text, new_text) if new_text else []
    if len(news) == 1 and old_text in new_text:
        start, end = news[0], news[0] + len(new_text)
        if all(start <= at and at + len(old_text) <= end for at in olds):
            return EditPlan(text, _line_of(text, start), already_applied=True)
    if len(olds) == 1:
        at = olds[0]
        # The one occurrence, replaced in a single copy (slices joined would make two more).
        edited = text.replace(old_text, new_text, 1)
        return EditPlan(edited, _line_of(text, at), already_applied=False)
    if not olds and len(news) == 1:
        return EditPlan(text, _line_of(text, news[0]), already_applied=True)
    return len(olds)


def plan_edit(text: str, old_text: str, new_text: str, *, display: str) -> EditPlan:
    """Apply the edit rule to `text`; raise `ToolError` when `old_text` is absent or ambiguous."""
    if not old_text:
        raise ToolError("old_text must not be empty; use write_file to create or replace a file")
    if old_text == new_text:
        raise ToolError("old_text and new_text are the same; there is nothing to change")
    plan = _plan_exact(text, old_text, new_text)
    if isinstance(plan, int) and "\r\n" in text and "\r" not in old_text + new_text:
        crlf = _plan_exact(text, old_text.replace("\n", "\r\n"), new_text.replace("\n", "\r\n"))
        if isinstance(crlf, EditPlan) or crlf > 1:
            plan = crlf
    if isinstance(plan, EditPlan):
        return plan
    if plan == 0:
        raise ToolError(
            f"old_text was not found in {display}; read the file again and copy the exact "
            "text, including whitespace and indentation"
        )
    raise ToolError(
        f"old_text appears {plan} times in {display}; include more surrounding lines in "
        "old_text so that it matches exactly once"
    )


@dataclass(frozen=True, slots=True)
class _Previewed:
    """What a call's preview computed, left in `ToolContext.memo` for its run."""

    path: str
    old_text: str
    new_text: str
    current: str
    plan: EditPlan
    stamp: ReadStamp | None


@dataclass(frozen=True, slots=True)
class _Planned:
    """A call's plan, and the stamp of the read it was computed from (None: nothing to check)."""

    where: WorkspacePath
    current: str
    plan: EditPlan
    stamp: ReadStamp | None


@dataclass(frozen=True, slots=True)
class EditFile:
    """Replace one exact piece of text in an existing file."""

    limits: ToolLimits = field(default_factory=ToolLimits)

    name = "edit_file"
    ignores_unknown_arguments = True  # EFFECT-CANON-001: other keys cannot matter
    kind = ToolKind.EDIT
    side_effect = True
    description = (
        "Edit a file by replacing one exact piece of text (old_text) with new_text. old_text "
        "must match the file exactly, whitespace included, and occur exactly once."
    )

    @property
    def parameters(self) -> JsonObject:
        return copy.deepcopy(_PARAMETERS)

    async def _plan(self, arguments: JsonObject, ctx: ToolContext) -> _Planned:
        where = resolve_path(required_str(arguments, "path"), ctx)
        old_text = required_str(arguments, "old_text", allow_empty=True)
        new_text = required_str(arguments, "new_text", allow_empty=True)
        current, stamp = await read_stamped(ctx, where, max_bytes=self.limits.max_file_bytes)
        if current is None:
            raise ToolError(f"{where.display}: no such file; use write_file to create it")
        plan = plan_edit(current, old_text, new_text, display=where.display)
        return _Planned(where, current, plan, stamp)

    async def _replan(self, arguments: JsonObject, ctx: ToolContext) -> _Planned:
        """The preview's plan for this very call (its run writes the diff the user approved,
        WS-STALE-001), else (a run with no preview) a fresh one."""
        previewed = ctx.memo.pop(self.name, None)
        if isinstance(previewed, _Previewed):
            where = resolve_path(required_str(arguments, "path"), ctx)
            same_call = (str(where.path), previewed.old_text, previewed.new_text) == (
                previewed.path,
                required_str(arguments, "old_text", allow_empty=True),
                required_str(arguments, "new_text", allow_empty=True),
            )
            if same_call:
                return _Planned(where, previewed.current, previewed.plan, previewed.stamp)
            del previewed  # another call: its texts are not kept beside the new ones
        planned = await self._plan(arguments, ctx)
        return dataclasses.replace(planned, stamp=fresh_check(planned.stamp))

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        planned = await self._plan(arguments, ctx)
        where, current, plan = planned.where, planned.current, planned.plan
        path = str(where.path)
        ctx.memo[self.name] = _Previewed(
            path,
            required_str(arguments, "old_text", allow_empty=True),
            required_str(arguments, "new_text", allow_empty=True),
            current,
            plan,
            planned.stamp,
        )
        if plan.already_applied:
            shown: tuple[DiffContent | TextContent, ...] = (
                TextContent(f"This edit is already applied to {where.display}."),
            )
        else:
            shown = (DiffContent(path=path, new_text=plan.text, old_text=current),)
        return ToolPreview(
            title=f"Edit {where.display}",
            kind=self.kind,
            locations=(Location(path, plan.line),),
            content=shown,
            permission_scope=self.name,
            scope_label="editing files",
        )

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        planned = await self._replan(arguments, ctx)
        where, current, plan = planned.where, planned.current, planned.plan
        path = str(where.path)
        limit = self.limits.max_file_bytes
        if plan.already_applied and planned.stamp is not None:
            # Said only of the file as it was read: one changed since may no longer hold it.
            await check_unchanged(ctx, where, planned.stamp, max_bytes=limit)
            return ToolOutcome(
                ok=True,
                for_model=(
                    f"The edit is already applied to {where.display} (new_text is present at "
                    f"line {plan.line}); nothing was changed."
                ),
                raw_output={"path": path, "status": "already_applied", "line": plan.line},
            )
        logger.debug("edit_file %s (effect %s)", where.path, ctx.effect_key)
        await write_text(ctx, where, plan.text, unchanged=planned.stamp, max_bytes=limit)
        return ToolOutcome(
            ok=True,
            for_model=f"Edited {where.display}: replaced 1 occurrence at line {plan.line}.",
            content=(DiffContent(path=path, new_text=plan.text, old_text=current),),
            raw_output={"path": path, "status": "applied", "line": plan.line},
        )
