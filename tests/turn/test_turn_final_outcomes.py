"""Which outcomes are final (EFFECT-FINAL-001): only those where the effect happened, or may have,
are reused when the same turn runs again; a failure that changed nothing runs again."""

from __future__ import annotations

import pytest
from turn.turnkit import (
    FakeProvider,
    IssueRefund,
    RecordingSink,
    finish,
    make_request,
    start,
    text,
    tool_call,
)

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.providers import FinishReason
from acp_bridge.tools import ToolContext, ToolOutcome
from acp_bridge.turn import EffectKey, EffectLedger, EffectState, Turn

pytestmark = pytest.mark.anyio

REFUND = {"order_id": "A"}


class FailingRefund(IssueRefund):
    """Fails its first run the given way, then succeeds."""

    def __init__(self, failure: BaseException | ToolOutcome) -> None:
        super().__init__()
        self.failure: BaseException | ToolOutcome | None = failure

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        outcome = await super().run(arguments, ctx)
        failure, self.failure = self.failure, None
        if isinstance(failure, BaseException):
            raise failure
        return outcome if failure is None else failure


def refund_script() -> list[list[object]]:
    return [
        [start(), *tool_call("c1", "issue_refund", REFUND), finish(FinishReason.TOOL_CALLS)],
        [start(), *text("Done."), finish()],
    ]


async def run_twice(tool: FailingRefund) -> EffectLedger:
    """The same turn (same turn id, same ledger) run twice, as after an interruption."""
    ledger = EffectLedger.in_memory()
    for _ in range(2):
        request = make_request(
            FakeProvider(*refund_script()), RecordingSink(), [tool], ledger=ledger
        )
        await Turn(request).run()
    return ledger


@pytest.mark.requirement("EFFECT-FINAL-001")
async def test_a_tool_error_that_changed_nothing_runs_again_on_a_rerun() -> None:
    tool = FailingRefund(ToolError("the editor could not write refunds/A.txt: disk full"))
    ledger = await run_twice(tool)
    assert len(tool.executions) == 2  # not reused: the user can retry the effect
    record = ledger.lookup(EffectKey.derive("s1-turn1", "issue_refund", REFUND))
    assert record is not None
    assert record.state is EffectState.DONE
    assert record.outcome is not None
    assert record.outcome.ok  # the second run's outcome, final


@pytest.mark.requirement("EFFECT-FINAL-001")
@pytest.mark.parametrize(
    "failure",
    [
        ToolError("the editor's terminal failed: gone", may_have_changed=True),
        ToolOutcome(ok=False, for_model="exit code 1"),
    ],
    ids=["tool-error-after-the-effect-began", "failed-outcome"],
)
async def test_an_outcome_where_the_effect_may_have_happened_is_final(
    failure: BaseException | ToolOutcome,
) -> None:
    tool = FailingRefund(failure)
    ledger = await run_twice(tool)
    assert len(tool.executions) == 1  # reused, never run twice
    record = ledger.lookup(EffectKey.derive("s1-turn1", "issue_refund", REFUND))
    assert record is not None
    assert record.outcome is not None
    assert not record.outcome.ok
    assert record.outcome.final
