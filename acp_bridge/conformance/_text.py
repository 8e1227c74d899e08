"""Grading a client's plain-text output: what the user of a terminal client reads.

A text client shows no structure, so each check becomes a question about the text:

- `messages` / `thoughts` (equal): every expected agent text appears, in order, and no text
  the stream carried appears more often than the expected texts contain it. A partial text
  of an abandoned attempt therefore fails (it is shown once too often), and so does a
  repeated sentence;
- `toolCalls`: every expected title appears, in order, on a line that also names its final
  status;
- `retries`: after removing the expected texts, a retry note ("retry", "retrying") appears
  when retries are expected, and none when not;
- `includes`: each listed text appears.

Permission prompts are answered by the client's own policy and leave no reliable trace in
text, so text grading leaves those checks out (they are named in the difference).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from acp_bridge.conformance._fixture import Check, Fixture
from acp_bridge.conformance._grade import CheckResult, _quote
from acp_bridge.conformance._view import view_of_wire

__all__ = ["grade_text"]

_RETRY_NOTE = re.compile(r"\bretry(ing)?\b|\bretries\b", re.IGNORECASE)


def _in_order(texts: Sequence[str], output: str) -> str | None:
    """The first of `texts` not found in `output` after the previous one, else None."""
    position = 0
    for text in texts:
        found = output.find(text, position)
        if found < 0:
            return text
        position = found + len(text)
    return None


def _streamed(fixture: Fixture, field: str) -> list[str]:
    """Every text of this kind the stream carried, as an editor ignoring the flag shows it."""
    naive = view_of_wire(fixture.wire, "naive")
    if field == "thoughts":
        return [str(t) for t in naive["thoughts"]]
    return [str(m["text"]) for m in naive["messages"] if m["role"] == "agent"]


def _texts(fixture: Fixture, field: str) -> list[str]:
    if field == "thoughts":
        return [str(t) for t in fixture.expected["thoughts"]]
    return [str(m["text"]) for m in fixture.expected["messages"] if m["role"] == "agent"]


def _check_texts(fixture: Fixture, check: Check, output: str) -> CheckResult:
    expected = _texts(fixture, check.field)
    kind = "thought" if check.field == "thoughts" else "agent text"
    missing = _in_order(expected, output)
    if missing is not None:
        return CheckResult(check, False, f"the client does not show the {kind} {_quote(missing)}")
    joined = "\n".join(expected)
    for text in dict.fromkeys(_streamed(fixture, check.field)):
        allowed, shown = joined.count(text), output.count(text)
        if shown > allowed:
            what = (
                "the partial text of an abandoned attempt, which the reset marker discards"
                if allowed == 0 or text not in expected
                else "a retried attempt's text shown again: the reset marker discards the "
                "abandoned copy"
            )
            if allowed == 0:
                counted = "" if shown == 1 else f" {shown} times"
                difference = f"the client shows the {kind} {_quote(text)}{counted}, {what}"
            else:
                times = "once" if allowed == 1 else f"{allowed} times"
                difference = (
                    f"the client shows the {kind} {_quote(text)} {shown} times where the "
                    f"expected view has it {times} ({what})"
                )
            return CheckResult(check, False, difference)
    return CheckResult(check, True)


def _check_tools(fixture: Fixture, check: Check, output: str) -> CheckResult:
    lines = output.splitlines()
    position = 0
    for call in fixture.expected["toolCalls"]:
        title, status = str(call["title"]), str(call["status"])
        while position < len(lines) and title not in lines[position]:
            position += 1
        if position == len(lines):
            return CheckResult(
                check, False, f"the client does not show the tool call {_quote(title)}"
            )
        if not any(title in line and status in line for line in lines):
            return CheckResult(
                check, False, f"the client never shows the tool call {_quote(title)} as {status}"
            )
        position += 1
    return CheckResult(check, True)


def _check_retries(fixture: Fixture, check: Check, output: str) -> CheckResult:
    rest = output
    for text in _texts(fixture, "messages") + _texts(fixture, "thoughts"):
        rest = rest.replace(text, "")
    noted = bool(_RETRY_NOTE.search(rest))
    expected = fixture.expected["retries"]
    if expected and not noted:
        first = expected[0]
        return CheckResult(
            check,
            False,
            f"the client shows no retry note (expected one for attempt {first['attempt']}, "
            f"{first['reason']})",
        )
    if not expected and noted:
        return CheckResult(check, False, "the client shows a retry note, but nothing was retried")
    return CheckResult(check, True)


def _check_includes(check: Check, output: str) -> CheckResult:
    texts: list[Any] = [i.get("text") if isinstance(i, dict) else i for i in check.items]
    missing = _in_order([str(t) for t in texts], output)
    if missing is None:
        return CheckResult(check, True)
    return CheckResult(
        check, False, f"the text {_quote(missing)} of a completed model call is gone"
    )


def grade_text(fixture: Fixture, output: str) -> list[CheckResult]:
    """The fixture's checks, asked of a client's plain-text output."""
    results = []
    for check in fixture.checks:
        if check.kind == "includes":
            results.append(_check_includes(check, output))
        elif check.field in ("messages", "thoughts"):
            results.append(_check_texts(fixture, check, output))
        elif check.field == "toolCalls":
            results.append(_check_tools(fixture, check, output))
        elif check.field == "retries":
            results.append(_check_retries(fixture, check, output))
    return results
