"""The prompt response's JSON text, written directly: the turn's tail (issue 15.2).

The response's shape is known (`prompt_response_wire` of `turn_report`), so its text is put
together from its fields instead of building the dicts and handing them to the generic
encoder, which also scans them for big strings first. `prompt_response_text` is exactly the
line `wire.encode` writes for that dict, newline excluded (tests compare the two over
generated turns, REPLY4-001). It gives up (None) on what it does not write the generic way:
a value that is not of its declared type, a float that is not finite, a string longer than
`wire.BIG_STRING_CHARS` (the generic path writes such a line in pieces); the caller then
builds the dict. A lone surrogate is written as is: the peer's UTF-8 encoding of the line
fails and it falls back to the generic encoder, which escapes the whole line.
"""

from __future__ import annotations

from functools import partial
from json.encoder import encode_basestring

from acp_bridge._json import JsonValue
from acp_bridge.agent._json_text import Unfit, usage_text
from acp_bridge.agent._light import prompt_response_wire
from acp_bridge.agent._report import turn_report
from acp_bridge.jsonrpc import EncodedResult
from acp_bridge.sessions import TurnStart
from acp_bridge.turn import (
    AttemptUsage,
    SummaryCall,
    ToolRun,
    TurnResult,
)
from acp_bridge.wire import BIG_STRING_CHARS

__all__ = ["prompt_response", "prompt_response_text"]


def _str(value: str) -> str:
    """A string the bridge does not bound the length of (a reason, a tool's name)."""
    if len(value) > BIG_STRING_CHARS:
        raise Unfit
    return encode_basestring(value)


def _opt_str(value: str | None) -> str:
    return "null" if value is None else _str(value)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _summary_attempt(a: AttemptUsage) -> str:
    return (
        f'{{"attempt":{a.attempt},"state":{_str(a.state)},"reason":{_opt_str(a.reason)},'
        f'"billed":{_bool(a.billed)},"usage":{usage_text(a.usage)}}}'
    )


def _summary_call(call: SummaryCall) -> str:
    attempts = ",".join([_summary_attempt(a) for a in call.attempts])
    return (
        f'{{"compactionId":{_str(call.compaction_id)},"trigger":{_str(call.trigger)},'
        f'"modelCall":{call.model_call or "null"},"billedAttempts":{call.billed_attempts},'
        f'"attempts":[{attempts}]}}'
    )


def _effects(runs: tuple[ToolRun, ...]) -> str:
    return ",".join(
        [
            f'{{"toolCallId":{_str(run.tool_call_id)},"tool":{_str(run.name)},'
            f'"status":"{run.status}","effectKey":{_opt_str(run.effect_key)},'
            f'"ran":{_bool(run.ran)},"reused":{_bool(run.reused)},"asked":{_bool(run.asked)}}}'
            for run in runs
        ]
    )


def _report_text(start: TurnStart, result: TurnResult) -> str:
    billed = 0
    attempts = []
    for a in result.attempts:
        if a.billed:
            billed += 1
        attempts.append(
            f'{{"modelCall":{a.model_call},"attempt":{a.attempt},"state":"{a.state}",'
            f'"reason":{_opt_str(a.reason)},"billed":{_bool(a.billed)},"usage":{usage_text(a.usage)}}}'
        )
    effects = _effects(result.tool_runs) if result.tool_runs else ""
    summaries = ""
    if result.summaries:
        summaries = ',"compactions":[' + ",".join([_summary_call(s) for s in result.summaries])
        summaries += "]"
    return (
        f'{{"turnId":{_str(start.turn_id)},"idPrefix":{_str(start.id_prefix)},'
        f'"rerun":{"false" if start.retry_of is None else "true"},'
        f'"modelCalls":{result.model_calls},"retries":{result.retries},'
        f'"billedAttempts":{billed},"attempts":[{",".join(attempts)}],'
        f'"effects":[{effects}]{summaries}}}'
    )


def prompt_response_text(stop_reason: str, start: TurnStart, result: TurnResult) -> str | None:
    """`encode(prompt_response_wire(stop_reason, {"acpBridge": turn_report(start, result)}))`
    without its newline, or None when the generic encoder must write it."""
    try:
        report = _report_text(start, result)
    except Unfit:
        return None
    return f'{{"_meta":{{"acpBridge":{report}}},"stopReason":{encode_basestring(stop_reason)}}}'


def prompt_response(
    stop_reason: str, start: TurnStart, result: TurnResult
) -> EncodedResult | JsonValue:
    """The `session/prompt` result: encoded here when it can be, else the dict."""
    text = prompt_response_text(stop_reason, start, result)
    if text is None:
        return _response_wire(stop_reason, start, result)
    return EncodedResult(text, partial(_response_wire, stop_reason, start, result))


def _response_wire(stop_reason: str, start: TurnStart, result: TurnResult) -> JsonValue:
    return prompt_response_wire(stop_reason, {"acpBridge": turn_report(start, result)})
