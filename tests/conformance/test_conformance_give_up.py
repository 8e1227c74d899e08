"""RESET-010: when the bridge gives up, a last marker lets the editor discard the failed
attempt's partial text before the error; the kit checks reducers for it (EDITOR-011)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge import scripted_config
from client.wirekit import bridge_in_process, workspace

from acp_bridge.conformance import grade_view, load_fixtures, view_of_wire
from acp_bridge.providers.scripted import ScriptedProvider, loads_script

_REFUSED = """{"name": "refused-always", "description": "Every connection is refused",
"calls": [{"attempts": [[{"refuse_connection": true}], [{"refuse_connection": true}],
[{"refuse_connection": true}], [{"refuse_connection": true}]]}]}"""
_NOT_RETRYABLE = """{"name": "bad-request-after-text", "description": "Text, then a 400",
"calls": [{"attempts": [[{"text": ["Half a sent"]}, {"break": "provider_error"}]]}]}"""


def _fixture(name: str):
    return next(f for f in load_fixtures() if f.name == name)


@pytest.mark.requirement("RESET-010")
def test_the_give_up_marker_is_the_last_update_before_the_error() -> None:
    wire = _fixture("gives-up").wire
    response = next(i for i, item in enumerate(wire) if "error" in item["message"])
    marker = wire[response - 1]["message"]["params"]["update"]
    assert marker["content"] == {"type": "text", "text": ""}
    assert marker["messageId"].endswith("-m1-a4")
    assert marker["_meta"] == {
        "reset": True,
        "attempt": 4,
        "reason": "gave_up",
        "fault": "stream_interrupted",
        "giveUp": "attempts_exhausted",
    }
    assert wire[response]["message"]["error"]["data"]["giveUp"] == "attempts_exhausted"


@pytest.mark.requirement("EDITOR-011")
def test_a_reset_aware_reducer_discards_the_last_attempt_and_a_naive_one_does_not() -> None:
    fixture = _fixture("gives-up")
    assert [m["role"] for m in view_of_wire(fixture.wire)["messages"]] == ["user"]
    naive = grade_view(fixture, view_of_wire(fixture.wire, "naive"))
    failed = {r for result in naive if not result.passed for r in result.check.requirements}
    assert "EDITOR-011" in failed


@pytest.mark.anyio
@pytest.mark.requirement("RESET-010")
@pytest.mark.parametrize(
    ("source", "markers"), [(_REFUSED, []), (_NOT_RETRYABLE, [(1, "gave_up", "not_retryable")])]
)
async def test_a_marker_only_when_the_last_attempt_showed_something(
    tmp_path: Path, source: str, markers: list[tuple[int, str, str]]
) -> None:
    provider = ScriptedProvider(loads_script(source, source="<test>"))
    config = scripted_config(tmp_path / "state", provider)
    async with bridge_in_process(tmp_path / "state", config=config) as client:
        session = await client.new_session(workspace(tmp_path))
        outcome = await client.prompt(session, "go")
    assert outcome.error is not None
    seen = [
        (u["_meta"]["attempt"], u["_meta"]["reason"], u["_meta"].get("giveUp"))
        for u in (p["update"] for p in outcome.updates)
        if isinstance(u.get("_meta"), dict) and u["_meta"].get("reset")
    ]
    assert seen == markers
    assert outcome.view().messages == ()
