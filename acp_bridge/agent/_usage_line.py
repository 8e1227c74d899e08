"""A usage_update's JSON-RPC line, built directly, and its write (the turn's tail, 15.2).

Every model call ends with a usage_update, and the turn's last one sits between the model
stream's end and the prompt response. Its line is a session's fixed prefix (the envelope up
to `_meta.acpBridge`, built once per session) and then the figures written out field by field,
in the key order the dicts of `_live` give (`usage_meta`, `usage_wire`), with the general
encoder's separators: `UsageLines.line` equals `encode` of the notification exactly (a test
holds them equal over generated reports). A figure the general encoder writes in some other
way (a count that is not a plain `int`, a cost that is not a finite number, a lone surrogate
in a string) gets None, and the caller takes the general encoder.
"""

from __future__ import annotations

from json.encoder import encode_basestring

from acp_bridge._json import JsonObject
from acp_bridge.agent._json_text import Unfit, number_text, usage_text
from acp_bridge.agent._live import LiveUpdates, usage_meta, usage_wire
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.providers import Usage
from acp_bridge.turn import UsageReport

__all__ = ["UsageLines"]


def _billed(report: UsageReport, kept_fields: str) -> str:
    """`usage_meta`'s `billed` as JSON: the same sums, in the same order."""
    attempts = report.attempts
    kept = report.kept
    # One attempt, the kept one: the sums are its figures (`0 + cost` is `cost` unless the
    # cost is a zero, which the sum writes as 0.0).
    one = len(attempts) == 1 and attempts[0].usage is kept and kept is not None
    if one and (kept.cost is None or kept.cost):  # type: ignore[union-attr]
        return kept_fields
    tokens = output = cached = reasoning = 0
    cost: float = 0
    costs = False
    for attempt in attempts:
        usage = attempt.usage
        if usage is not None:
            tokens += usage.input_tokens
            output += usage.output_tokens
            cached += usage.cached_input_tokens
            reasoning += usage.reasoning_tokens
            cost += usage.cost or 0.0
            costs = costs or usage.cost is not None
    return usage_text(Usage(tokens, output, cached, reasoning, cost if costs else None))


class UsageLines:
    """Writes one session's usage_updates (see the module docstring) to the editor."""

    __slots__ = ("_live", "_peer", "_prefix", "_session_id")

    def __init__(self, peer: JsonRpcPeer, session_id: str, live: LiveUpdates) -> None:
        self._peer = peer
        self._session_id = session_id
        self._live = live
        self._prefix = (
            '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
            f'{encode_basestring(session_id)},"update":{{"_meta":{{"acpBridge":{{'
        )

    async def send(self, report: UsageReport) -> None:
        """The usage_update of `report`; the turn's last rides with the response, still
        before it: the editor is woken once for the turn's end (issue 15.2)."""
        used, size, cost, source = self._live.usage(report)
        line = self.line(report, used, size, cost, source)

        def message() -> JsonObject:  # the general encoder's, and for the tracer
            meta = {**usage_meta(report), "sizeSource": source}
            update = usage_wire(used, size, cost, meta)
            params: JsonObject = {"sessionId": self._session_id, "update": update}
            return {"jsonrpc": "2.0", "method": "session/update", "params": params}

        if line is None:  # a figure only the general encoder writes as it does
            params = message()["params"]
            if report.ends_turn:
                self._peer.notify_with_next("session/update", params)
            else:
                await self._peer.notify("session/update", params)
        elif report.ends_turn:
            self._peer.notify_encoded_with_next(line, message)
        else:
            await self._peer.notify_encoded(line, message)

    def line(
        self, report: UsageReport, used: int, size: int, cost: float | None, source: str
    ) -> bytes | None:
        """`encode` of the notification of `usage_wire(used, size, cost, {**usage_meta(
        report), "sizeSource": source})`; None when only the general encoder writes it."""
        try:
            return self._line(report, used, size, cost, source).encode("utf-8")
        except (Unfit, UnicodeEncodeError, ArithmeticError, ValueError):
            return None  # the general path writes it, or refuses it as it did

    def _line(
        self, report: UsageReport, used: int, size: int, cost: float | None, source: str
    ) -> str:
        if not (type(used) is type(size) is type(report.model_call) is int) or used < 0 or size < 0:
            raise Unfit  # a negative count: the general path refuses it (`usage_wire`)
        parts = [self._prefix]
        if report.compaction_id is not None:
            estimated = "false" if report.context is None else "true"
            parts.append(
                f'"compactionId":{encode_basestring(report.compaction_id)},"estimated":{estimated},'
            )
        kept = report.kept
        kept_fields = usage_text(kept)  # also the kept attempt's own, written out once
        parts.append(
            f'"modelCall":{report.model_call},"kept":{kept_fields},'
            f'"billed":{_billed(report, kept_fields)},"attempts":['
        )
        comma = ""
        for attempt in report.attempts:
            usage = attempt.usage
            number, billed = attempt.attempt, attempt.billed
            if type(number) is not int or type(billed) is not bool:
                raise Unfit
            parts.append(
                f'{comma}{{"attempt":{number},"state":{encode_basestring(attempt.state)},'
                f'"billed":{"true" if billed else "false"},'
                f'"usage":{kept_fields if usage is kept else usage_text(usage)}}}'
            )
            comma = ","
        amount = ""
        if cost is not None:
            amount = f',"cost":{{"amount":{number_text(float(cost))},"currency":"USD"}}'
        parts.append(
            f'],"sizeSource":{encode_basestring(source)}}}}},'
            f'"sessionUpdate":"usage_update","used":{used},"size":{size}{amount}}}}}}}\n'
        )
        return "".join(parts)
