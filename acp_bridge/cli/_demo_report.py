"""What the demo prints: three editors' views of each scenario, its tools, effects and billing.

A pure function of a `DemoRun` (`_demo_play`): `print_run` writes the text report through one
`write` function, `summary` is the machine-readable one (`--json`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from acp_bridge.cli._demo_play import DemoRun, Played
from acp_bridge.client import EditorView, PromptOutcome, ReduceMode, ToolCallEntry, reduce
from acp_bridge.providers.scripted import builtin_scripts
from acp_bridge.turn import EffectRecord

__all__ = ["Style", "Write", "print_run", "run_ok", "summary"]

_VIEWS = (
    (ReduceMode.APPEND_ONLY, "append-only editor (ignores messageId and _meta)"),
    (ReduceMode.NAIVE, "messageId-aware editor that ignores the reset flag"),
    (ReduceMode.RESET_AWARE, "reset-aware editor (spec/reset-extension.md)"),
)
_WIDTH = 96

Write = Callable[[str], None]


# -- what to say about a scenario ----------------------------------------------------------


def _views(outcome: PromptOutcome) -> dict[ReduceMode, EditorView]:
    # The prompt is printed in the heading; the views show the agent's side only.
    return {mode: reduce(outcome.events[1:], mode) for mode, _ in _VIEWS}


def _shown(view: EditorView) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return view.messages, view.thoughts


def _effect_key(entry: ToolCallEntry, records: Sequence[EffectRecord]) -> EffectRecord | str | None:
    """The call's effect key: from the update's `_meta` when the bridge sends it, else the
    ledger record with the same tool arguments."""
    meta = entry.meta
    nested = meta.get("acpBridge")
    key = meta.get("effectKey") or (nested.get("effectKey") if isinstance(nested, dict) else None)
    for record in records:
        if record.key == key:
            return record
        if key is None and entry.raw_input is not None:
            try:
                same = json.loads(record.arguments) == entry.raw_input
            except ValueError:
                same = False
            if same:
                return record
    return str(key) if key else None


def _workspace_files(workspace: Path) -> list[tuple[str, int, str]]:
    files = []
    for path in sorted(workspace.rglob("*")):
        if path.is_file() and path.name != "README.md":
            text = path.read_text(encoding="utf-8", errors="replace")
            files.append((path.relative_to(workspace).as_posix(), path.stat().st_size, text))
    return files


def _attempt_line(attempts: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for a in attempts:
        reason = f" ({a['reason']})" if a.get("reason") else ""
        parts.append(
            f"call {a.get('modelCall')}/attempt {a.get('attempt')} {a.get('state')}{reason}"
        )
    return "; ".join(parts) or "none reported"


# -- printing -------------------------------------------------------------------------------


class Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def good(self, text: str) -> str:
        return self._wrap("32", text)

    def bad(self, text: str) -> str:
        return self._wrap("31", text)

    def head(self, text: str) -> str:
        return self._wrap("1;36", text)


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line else line for line in text.splitlines())


def _print_scenario(
    index: int, total: int, item: Played, effects: Sequence[EffectRecord], write: Write, s: Style
) -> None:
    outcome = item.outcome
    title = f"{index}/{total}  {outcome.prompt}"
    write(s.head("━━ " + title + " " + "━" * max(3, _WIDTH - len(title) - 4)))
    write(s.dim("  " + builtin_scripts()[item.name].description))
    write("")
    if outcome.error is not None:
        error = outcome.error
        write(s.bad(f"  the turn failed: {error.get('message')} {error.get('data') or ''}"))
    views = _views(outcome)
    reference = views[ReduceMode.RESET_AWARE]
    # Paths in tool calls are absolute on the wire; relative ones read better here.
    prefix = str(item.workspace.resolve()) + "/"
    renders = {mode: views[mode].render(width=_WIDTH - 4).replace(prefix, "") for mode in views}
    if len(set(renders.values())) == 1:
        write(s.bold("  ▌ every editor shows the same (no retry, so no reset marker)"))
        write(_indent(renders[ReduceMode.RESET_AWARE]))
        write("")
    else:
        for mode, label in _VIEWS:
            if mode is ReduceMode.RESET_AWARE:
                verdict = s.good("✓ exactly the completed attempt's answer")
            elif _shown(views[mode]) == _shown(reference):
                verdict = s.good("✓ same text")
            else:
                verdict = s.bad("✗ shows the abandoned attempt's output")
            write(f"  {s.bold('▌ ' + label)}  {verdict}")
            write(_indent(renders[mode]))
            write("")
    mine = [r for r in effects if r.session_id == outcome.session_id]
    calls = reference.tool_calls
    write(f"  {s.bold('tools')}")
    if not calls:
        write("    none called")
    for call in calls:
        record = _effect_key(call, mine)
        key = record.key if isinstance(record, EffectRecord) else record
        ledger = (
            f", ledger: {record.tool} {record.state.value}"
            if isinstance(record, EffectRecord)
            else ""
        )
        effect = f"effect key {key[:12]}…{key[-6:]}{ledger}" if key else "no side effect, no key"
        write(f"    {call.title} [{call.kind}, {call.status}] · {effect}")
    for path, size, text in _workspace_files(item.workspace):
        first = text.splitlines()[0] if text else ""
        write(f"    workspace now has {path} ({size} bytes): {s.dim(repr(first))}")
    if mine:
        runs = ", ".join(f"{r.tool} {r.state.value}" for r in mine)
        write(f"    effect ledger for this session: {len(mine)} effect(s): {runs}")
    prompts = outcome.permission_prompts
    answers = ", ".join(f"{p.title}: {p.chosen_kind or 'cancelled'}" for p in prompts)
    write(
        f"  {s.bold('permission prompts')}  {len(prompts)}" + (f" ({answers})" if answers else "")
    )
    billed = outcome.billed_attempts
    write(f"  {s.bold('attempts billed')}  {billed}  {s.dim(_attempt_line(outcome.attempts))}")
    write(
        f"  {s.bold('stop reason')}  {outcome.stop_reason}  {s.dim(f'in {outcome.seconds:.2f} s')}"
    )
    write("")


def print_run(run: DemoRun, write: Write, s: Style) -> None:
    write(
        s.bold("acp-bridge-agent demo")
        + " · what editors show when a model stream breaks and is retried"
    )
    write(s.dim(f"spawned like an editor does: {' '.join(run.argv)}"))
    write(s.dim("scripted model: no API key, no network; temporary workspace and state directory"))
    write("")
    for index, item in enumerate(run.played, 1):
        _print_scenario(index, len(run.played), item, run.effects, write, s)
    write(
        s.dim(
            f"acp-bridge exited with status {run.returncode}; its log: "
            f"{len(run.stderr.splitlines())} stderr lines"
        )
    )


def summary(run: DemoRun) -> dict[str, Any]:
    scenarios = []
    for item in run.played:
        outcome = item.outcome
        views = _views(outcome)
        reference = views[ReduceMode.RESET_AWARE]
        mine = [r for r in run.effects if r.session_id == outcome.session_id]
        calls = []
        for call in reference.tool_calls:
            record = _effect_key(call, mine)
            calls.append(
                {
                    "toolCallId": call.tool_call_id,
                    "title": call.title,
                    "kind": call.kind,
                    "status": call.status,
                    "effectKey": record.key if isinstance(record, EffectRecord) else record,
                }
            )
        scenarios.append(
            {
                "name": item.name,
                "prompt": outcome.prompt,
                "stopReason": outcome.stop_reason,
                "error": outcome.error,
                "seconds": round(outcome.seconds, 3),
                "views": {
                    mode.value: {
                        "messages": list(views[mode].messages),
                        "thoughts": list(views[mode].thoughts),
                        "text": views[mode].text(),
                    }
                    for mode, _ in _VIEWS
                },
                "resets": [{"attempt": r.attempt, "reason": r.reason} for r in reference.retries],
                "toolCalls": calls,
                "permissionPrompts": [
                    {"toolCallId": p.tool_call_id, "title": p.title, "answer": p.chosen_kind}
                    for p in outcome.permission_prompts
                ],
                "attempts": [dict(a) for a in outcome.attempts],
                "billedAttempts": outcome.billed_attempts,
                "effects": [
                    {"key": r.key, "tool": r.tool, "state": r.state.value, "step": r.step}
                    for r in mine
                ],
                "workspaceFiles": [
                    {"path": path, "bytes": size}
                    for path, size, _ in _workspace_files(item.workspace)
                ],
            }
        )
    return {
        "bridge": {
            "argv": list(run.argv),
            "exitCode": run.returncode,
            "agentInfo": dict(run.agent),
        },
        "scenarios": scenarios,
        "ok": run_ok(run),
    }


def run_ok(run: DemoRun) -> bool:
    return run.returncode == 0 and all(p.outcome.error is None for p in run.played)
