"""The scenarios of the conformance kit: which script, which prompts, which checks.

Every built-in script is a scenario, and so is each targeted script in
`spec/conformance/scripts/` (one requirement at a time). The checks say which `EDITOR-0NN`
requirement each part of the view checks; the expected values themselves come from the
bridge's real output (`acp-bridge conformance regenerate`), never from this file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp_bridge.conformance._fixture import Check

__all__ = ["REQUIREMENTS", "SCENARIOS", "Scenario"]

REQUIREMENTS: dict[str, tuple[str, str]] = {
    "EDITOR-001": (
        "MUST",
        "chunks with the same messageId join; a new messageId starts a new message",
    ),
    "EDITOR-002": ("MUST", "a reset marker discards the current model call's partial output"),
    "EDITOR-003": ("MUST", "the discard stops at the prompt or the last tool call"),
    "EDITOR-004": (
        "MUST",
        "each marker of several in a row discards again; an empty discard is harmless",
    ),
    "EDITOR-005": ("MUST", "thoughts are discarded like messages"),
    "EDITOR-006": ("MUST NOT", "without a marker nothing is discarded"),
    "EDITOR-007": ("MUST", "any reason and attempt value on a marker are accepted"),
    "EDITOR-008": ("SHOULD", "the editor shows that a retry happened"),
    "EDITOR-009": ("MUST", "a tool call is shown once, with the latest fields of its updates"),
    "EDITOR-010": ("MUST", "each built-in script shows exactly the expected view"),
    "EDITOR-011": (
        "MUST",
        "when the bridge gives up, the failed attempt's partial output is discarded",
    ),
    "EDITOR-012": ("MUST", "each user prompt is its own user message, in a replay too"),
}
"""The requirements the kit grades (spec/requirements/client.toml): level and short title."""


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    summary: str
    script: str
    prompts: tuple[str, ...]
    checks: tuple[Check, ...]
    builtin: bool = True
    load: bool = False


def _checks(
    messages: tuple[str, ...] = (),
    thoughts: tuple[str, ...] = (),
    tool_calls: tuple[str, ...] = (),
    prompts: tuple[str, ...] = (),
    retries: tuple[str, ...] = (),
    *,
    exact: bool = True,
    keep: tuple[dict[str, Any], ...] = (),
) -> tuple[Check, ...]:
    """Equality checks per field, each tagged with the given requirements (plus EDITOR-010,
    the whole view exactly, for built-in scripts); `keep` adds an EDITOR-003 check that
    these messages of completed model calls stay."""
    extra = ("EDITOR-010",) if exact else ()
    says = {
        "messages": "the user and agent messages shown, each exactly, in order",
        "thoughts": "the thoughts shown, each exactly, in order",
        "toolCalls": "each tool call shown once, with its final status",
        "permissionPrompts": "the permission prompts the user saw",
        "retries": "the retry notes shown (attempt and reason of each reset marker)",
    }
    found: list[Check] = []
    for field, tags in (
        ("messages", messages),
        ("thoughts", thoughts),
        ("toolCalls", tool_calls),
        ("permissionPrompts", prompts),
        ("retries", retries),
    ):
        requirements = tuple(dict.fromkeys((*tags, *extra)))
        if requirements:
            found.append(Check(requirements, field, "equal", says[field]))
    if keep:
        found.append(
            Check(
                ("EDITOR-003",),
                "messages",
                "includes",
                "the text of completed model calls stays on screen after a later retry",
                keep,
            )
        )
    return tuple(found)


def _agent(text: str) -> dict[str, Any]:
    return {"role": "agent", "text": text}


_RETRY = ("EDITOR-008",)
_NO_RETRY = ("EDITOR-006", "EDITOR-008")

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "hello",
        "A normal answer: no retry, no marker.",
        "hello",
        ("Hello",),
        _checks(messages=("EDITOR-001", "EDITOR-006"), retries=_NO_RETRY),
    ),
    Scenario(
        "broken-mid-word",
        "The stream breaks inside a word; attempt 2 completes the answer.",
        "broken-mid-word",
        ("/broken-mid-word",),
        _checks(messages=("EDITOR-002",), retries=_RETRY),
    ),
    Scenario(
        "broken-twice",
        "Two resets in a row: attempt 1 breaks, attempt 2 ends without a finish, 3 completes.",
        "broken-twice",
        ("/broken-twice",),
        _checks(messages=("EDITOR-004",), retries=("EDITOR-004", "EDITOR-008")),
    ),
    Scenario(
        "broken-thought",
        "The stream breaks while the model thinks; attempt 2 thinks again and answers.",
        "broken-thought",
        ("/broken-thought",),
        _checks(messages=("EDITOR-002",), thoughts=("EDITOR-005",), retries=_RETRY),
    ),
    Scenario(
        "connection-refused",
        "The first connection is refused before anything is shown: no marker.",
        "connection-refused",
        ("/connection-refused",),
        _checks(messages=("EDITOR-006",), retries=_NO_RETRY),
    ),
    Scenario(
        "rate-limited",
        "HTTP 429 with Retry-After before the first token: no marker.",
        "rate-limited",
        ("/rate-limited",),
        _checks(messages=("EDITOR-006",), retries=_NO_RETRY),
    ),
    Scenario(
        "tool-loop-break-second-call",
        "A reset in the second model call of a tool loop: the first call's text stays.",
        "tool-loop-break-second-call",
        ("/tool-loop-break-second-call",),
        _checks(
            messages=("EDITOR-002",),
            tool_calls=("EDITOR-003", "EDITOR-009"),
            retries=_RETRY,
            keep=(_agent("Let me read the README. "),),
        ),
    ),
    Scenario(
        "help-desk-refund-file",
        "The refund: attempt 1 calls write_file and breaks; only attempt 2's call is shown.",
        "help-desk-refund-file",
        ("/help-desk-refund-file",),
        _checks(messages=("EDITOR-002",), tool_calls=("EDITOR-009",), retries=_RETRY),
    ),
    Scenario(
        "help-desk-refund",
        "The same stream with a tool the bridge does not offer: the call fails, the turn goes on.",
        "help-desk-refund",
        ("/help-desk-refund",),
        _checks(messages=("EDITOR-002",), tool_calls=("EDITOR-009",), retries=_RETRY),
    ),
    Scenario(
        "tool-call-then-break",
        "A reset right after a complete tool call: the retry makes the same call.",
        "tool-call-then-break",
        ("/tool-call-then-break",),
        _checks(messages=("EDITOR-002",), tool_calls=("EDITOR-009",), retries=_RETRY),
    ),
    Scenario(
        "tool-call-broken-before-finish",
        "A complete call and all the text, then the stream breaks before the finish.",
        "tool-call-broken-before-finish",
        ("/tool-call-broken-before-finish",),
        _checks(messages=("EDITOR-002",), tool_calls=("EDITOR-009",), retries=_RETRY),
    ),
    Scenario(
        "abandoned-write-and-command",
        "Attempt 1's write and command are never shown nor asked about; attempt 2 writes once.",
        "abandoned-write-and-command",
        ("/abandoned-write-and-command",),
        _checks(messages=("EDITOR-002",), tool_calls=("EDITOR-009",), retries=_RETRY),
    ),
    Scenario(
        "reset-in-third-model-call",
        "Two tool rounds, then the third model call is retried: both earlier texts stay.",
        "reset-in-third-model-call",
        ("/reset-in-third-model-call",),
        _checks(
            messages=("EDITOR-002",),
            thoughts=("EDITOR-005",),
            tool_calls=("EDITOR-003", "EDITOR-009"),
            retries=_RETRY,
            exact=False,
            keep=(_agent("Let me list the files. "), _agent("Now the README. ")),
        ),
        builtin=False,
    ),
    Scenario(
        "reset-with-nothing-to-discard",
        "Attempt 2 shows only its marker and fails: attempt 3's marker finds nothing to discard.",
        "reset-with-nothing-to-discard",
        ("/reset-with-nothing-to-discard",),
        _checks(
            messages=("EDITOR-004",),
            retries=("EDITOR-004", "EDITOR-008"),
            exact=False,
        ),
        builtin=False,
    ),
    Scenario(
        "thoughts-only",
        "A turn that only thinks; its first thought breaks and is retried.",
        "thoughts-only",
        ("/thoughts-only",),
        _checks(messages=("EDITOR-005",), thoughts=("EDITOR-005",), retries=_RETRY, exact=False),
        builtin=False,
    ),
    Scenario(
        "parallel-tool-calls",
        "Two tool calls in one answer, after a retry: each shown once, with its final status.",
        "parallel-tool-calls",
        ("/parallel-tool-calls",),
        _checks(
            messages=("EDITOR-002",),
            tool_calls=("EDITOR-009",),
            prompts=("EDITOR-009",),
            retries=_RETRY,
            exact=False,
        ),
        builtin=False,
    ),
    Scenario(
        "gives-up",
        "Every attempt breaks; after the last one the bridge gives up and the turn fails.",
        "gives-up",
        ("/gives-up",),
        _checks(messages=("EDITOR-007", "EDITOR-011"), retries=_RETRY, exact=False),
        builtin=False,
    ),
    Scenario(
        "replay-after-retries",
        "session/load of a session with retried turns and an empty answer: two user prompts "
        "in a row, each its own message, and no abandoned text or thought.",
        "empty-answer",
        ("/broken-mid-word", "/empty-answer", "/broken-thought"),
        _checks(
            messages=("EDITOR-001", "EDITOR-012"),
            thoughts=("EDITOR-005",),
            retries=("EDITOR-006",),
            exact=False,
        ),
        builtin=False,
        load=True,
    ),
)
