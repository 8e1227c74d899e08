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

import math
from json.encoder import encode_basestring

from acp_bridge._json import JsonObject
from acp_bridge.agent._live import LiveUpdates, usage_meta, usage_wire
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.providers import Usage
from acp_bridge.turn import UsageReport

__all__ = ["UsageLines"]


class _Unusual(Exception):
    """A figure only the general encoder writes as it does."""


def _count(value: object) -> str:
    if type(value) is int:
        return int.__repr__(value)
    raise _Unusual


def _number(value: object) -> str:
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    return _count(value)


def _figures(tokens: int, output: int, cached: int, reasoning: int, cost: float | None) -> str:
    text = (
        f'{{"input":{_count(tokens)},"output":{_count(output)},'
        f'"cachedInput":{_count(cached)},"reasoning":{_count(reasoning)}'
    )
    return text + "}" if cost is None else f'{text},"cost":{_number(cost)}}}'


def _fields(usage: Usage | None) -> str:
    """`usage_fields(usage)` as JSON."""
    if usage is None:
        return "null"
    return _figures(
        usage.input_tokens,
        usage.output_tokens,
        usage.cached_input_tokens,
        usage.reasoning_tokens,
        usage.cost,
    )


def _billed(report: UsageReport) -> str:
    """`usage_meta`'s `billed` as JSON: the same sums, in the same order."""
    tokens = output = cached = reasoning = 0
    cost: float = 0
    costs = False
    for attempt in report.attempts:
        usage = attempt.usage
        if usage is not None:
            tokens += usage.input_tokens
            output += usage.output_tokens
            cached += usage.cached_input_tokens
            reasoning += usage.reasoning_tokens
            cost += usage.cost or 0.0
            costs = costs or usage.cost is not None
    return _figures(tokens, output, cached, reasoning, cost if costs else None)


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
        except (_Unusual, UnicodeEncodeError):
            return None

    def _line(
        self, report: UsageReport, used: int, size: int, cost: float | None, source: str
    ) -> str:
        if used < 0 or size < 0:
            raise _Unusual  # the general path refuses it (`usage_wire`)
        parts = [self._prefix]
        if report.compaction_id is not None:
            estimated = "false" if report.context is None else "true"
            parts.append(
                f'"compactionId":{encode_basestring(report.compaction_id)},"estimated":{estimated},'
            )
        kept = report.kept
        kept_fields = _fields(kept)  # also the kept attempt's own, written out once
        parts.append(
            f'"modelCall":{_count(report.model_call)},"kept":{kept_fields},'
            f'"billed":{_billed(report)},"attempts":['
        )
        for n, attempt in enumerate(report.attempts):
            if type(attempt.billed) is not bool:
                raise _Unusual
            usage = attempt.usage
            parts.append(
                f'{"," if n else ""}{{"attempt":{_count(attempt.attempt)},'
                f'"state":{encode_basestring(attempt.state)},'
                f'"billed":{"true" if attempt.billed else "false"},"usage":'
            )
            parts.append(kept_fields if usage is kept else _fields(usage))
            parts.append("}")
        parts.append(
            f'],"sizeSource":{encode_basestring(source)}}}}},'
            f'"sessionUpdate":"usage_update","used":{_count(used)},"size":{_count(size)}'
        )
        if cost is not None:
            parts.append(f',"cost":{{"amount":{_number(float(cost))},"currency":"USD"}}')
        parts.append("}}}\n")
        return "".join(parts)
