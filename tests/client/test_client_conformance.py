"""The conformance kit, executed: every built-in script through the real agent and the
reference client, compared with the expectations in spec/editor-conformance.md section 4.
Every message the bridge writes is validated against the official ACP v1 schema."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from client.wirekit import bridge_in_process, workspace

from acp_bridge.client import PromptOutcome
from acp_bridge.providers.scripted import builtin_scripts

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "spec" / "editor-conformance.md"
_SECTION = re.compile(r"^### `/?([a-z0-9-]+)`\n(.*?)^```json\n(.*?)^```", re.M | re.S)


def expectations() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for match in _SECTION.finditer(KIT.read_text(encoding="utf-8")):
        found[match.group(1)] = json.loads(match.group(3))
    return found


def observed(outcome: PromptOutcome) -> dict[str, Any]:
    view = outcome.view()
    return {
        "prompt": outcome.prompt,
        "messages": list(view.messages),
        "thoughts": list(view.thoughts),
        "toolCalls": [[t.title, t.status] for t in view.tool_calls],
        "permissionPrompts": len(outcome.permission_prompts),
        "retries": [[r.attempt, r.reason] for r in view.retries],
    }


@pytest.mark.requirement("EDITOR-010")
def test_the_kit_covers_every_built_in_script() -> None:
    assert set(expectations()) == set(builtin_scripts())


@pytest.mark.anyio
@pytest.mark.requirement("EDITOR-010")
@pytest.mark.requirement("RESET-005")
@pytest.mark.parametrize("name", sorted(builtin_scripts()))
async def test_each_script_shows_exactly_what_the_kit_says(name: str, tmp_path: Path) -> None:
    expected = expectations()[name]
    async with bridge_in_process(tmp_path / "state") as client:
        session_id = await client.new_session(workspace(tmp_path))
        outcome = await client.prompt(session_id, expected["prompt"])
    assert outcome.error is None, outcome.error
    assert outcome.stop_reason == "end_turn"
    assert observed(outcome) == expected, outcome.view().render()


@pytest.mark.anyio
@pytest.mark.requirement("RESET-006")
@pytest.mark.requirement("EDITOR-001")
async def test_a_flag_ignorant_editor_shows_the_abandoned_text_as_its_own_message(
    tmp_path: Path,
) -> None:
    async with bridge_in_process(tmp_path / "state") as client:
        session_id = await client.new_session(workspace(tmp_path))
        outcome = await client.prompt(session_id, "/broken-mid-word")
    answer = (
        "The stream broke in the middle of a word and the bridge retried it. "
        "You should read this sentence exactly once."
    )
    assert outcome.view("naive").messages == ("The stream broke in the middle of a wo", answer)
    assert outcome.view("append_only").messages == (
        "The stream broke in the middle of a wo" + answer,
    )
    assert outcome.view().messages == (answer,)
