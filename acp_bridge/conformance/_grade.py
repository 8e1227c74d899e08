"""Grading an editor view against a fixture, requirement by requirement (sans-IO).

`grade_view(fixture, view)` runs the fixture's checks on one view (the adapter's JSON, or a
client's) and says, for each failed check, the first difference in plain words. A `Report`
collects the scenarios and answers per requirement: a requirement passes when every check
tagged with it passed in every scenario graded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp_bridge.conformance._catalog import REQUIREMENTS
from acp_bridge.conformance._fixture import Check, Fixture
from acp_bridge.conformance._view import view_of_wire

__all__ = ["CheckResult", "Report", "ScenarioResult", "grade_view", "project"]

_QUOTE = 120


def _quote(text: str) -> str:
    text = str(text)
    if len(text) > _QUOTE:
        text = text[: _QUOTE - 1] + "…"
    return '"' + text.replace("\n", "\\n") + '"'


def project(field_name: str, items: Sequence[Any]) -> list[Any]:
    """The part of a view field the kit compares (extra keys an adapter adds are ignored)."""
    if field_name == "messages":
        return [
            {"role": str(m.get("role")), "text": str(m.get("text"))}
            if isinstance(m, Mapping)
            else {"role": "?", "text": str(m)}
            for m in items
        ]
    if field_name == "thoughts":
        return [str(t.get("text")) if isinstance(t, Mapping) else str(t) for t in items]
    if field_name == "toolCalls":
        return [
            {"title": str(t.get("title")), "status": str(t.get("status"))}
            for t in items
            if isinstance(t, Mapping)
        ]
    if field_name == "permissionPrompts":
        return [{"title": str(p.get("title"))} for p in items if isinstance(p, Mapping)]
    if field_name == "retries":
        return [
            {"attempt": r.get("attempt"), "reason": r.get("reason")}
            for r in items
            if isinstance(r, Mapping)
        ]
    return list(items)


def _describe(field_name: str, item: Any) -> str:
    if field_name == "messages":
        return f"{item['role']} message {_quote(item['text'])}"
    if field_name == "thoughts":
        return f"thought {_quote(item)}"
    if field_name == "toolCalls":
        return f"tool call {_quote(item['title'])} ({item['status']})"
    if field_name == "permissionPrompts":
        return f"permission prompt for {_quote(item['title'])}"
    return f"retry note (attempt {item['attempt']}, {item['reason']})"


def _abandoned(fixture: Fixture) -> list[str]:
    """Texts an editor that ignores the reset flag shows and a conforming one does not."""
    naive = view_of_wire(fixture.wire, "naive")
    right = view_of_wire(fixture.wire)
    kept = {m["text"] for m in right["messages"]} | set(right["thoughts"])
    shown = [m["text"] for m in naive["messages"]] + list(naive["thoughts"])
    return [text for text in shown if text not in kept]


def _why(text: str, abandoned: Sequence[str], expected_text: str | None) -> str:
    for partial in abandoned:
        if text == partial:
            return " (the partial text of an abandoned attempt: the reset marker discards it)"
        if partial in text and (expected_text is None or partial not in expected_text):
            return (
                f" (it contains {_quote(partial)}, the partial text of an abandoned attempt, "
                "glued to other text: the reset marker discards it)"
            )
        if expected_text is not None and text.startswith(partial) and text != expected_text:
            return f" (it starts with {_quote(partial)}, the partial text of an abandoned attempt)"
    if expected_text and expected_text in text and text != expected_text:
        return (
            " (the expected text with more glued to it: an abandoned attempt's text, which the "
            "reset marker discards)"
        )
    return ""


def _first_difference(
    field_name: str, expected: list[Any], shown: list[Any], abandoned: Sequence[str]
) -> str:
    def text_of(item: Any) -> str:
        return str(item["text"]) if isinstance(item, dict) and "text" in item else str(item)

    for index, (want, got) in enumerate(zip(expected, shown, strict=False)):
        if want != got:
            why = _why(text_of(got), abandoned, text_of(want))
            return (
                f"{field_name}[{index}]: expected the {_describe(field_name, want)}, "
                f"the editor shows the {_describe(field_name, got)}{why}"
            )
    if len(shown) > len(expected):
        extra = shown[len(expected)]
        why = _why(text_of(extra), abandoned, None)
        return (
            f"{field_name}: the editor shows {len(shown)} where {len(expected)} are expected; "
            f"the first extra one is the {_describe(field_name, extra)}{why}"
        )
    missing = expected[len(shown)]
    return (
        f"{field_name}: the editor shows {len(shown)} where {len(expected)} are expected; "
        f"missing: the {_describe(field_name, missing)}"
    )


def _includes(wanted: Sequence[Any], shown: Sequence[Any]) -> Any | None:
    """The first of `wanted` not found in `shown` (in order), or None."""
    position = 0
    for want in wanted:
        while position < len(shown) and shown[position] != want:
            position += 1
        if position == len(shown):
            return want
        position += 1
    return None


@dataclass(frozen=True, slots=True)
class CheckResult:
    check: Check
    passed: bool
    difference: str = ""

    def to_json(self) -> dict[str, Any]:
        data = self.check.to_json()
        data["passed"] = self.passed
        if not self.passed:
            data["difference"] = self.difference
        return data


def grade_view(fixture: Fixture, view: Any) -> list[CheckResult]:
    """Runs every check of `fixture` on `view` (an adapter's decoded JSON output)."""
    results: list[CheckResult] = []
    abandoned: list[str] | None = None
    for check in fixture.checks:
        shown_raw = view.get(check.field) if isinstance(view, Mapping) else None
        if not isinstance(shown_raw, list):
            results.append(CheckResult(check, False, f"the view has no `{check.field}` list"))
            continue
        shown = project(check.field, shown_raw)
        if check.kind == "includes":
            missing = _includes(project(check.field, check.items), shown)
            if missing is None:
                results.append(CheckResult(check, True))
            else:
                results.append(
                    CheckResult(
                        check,
                        False,
                        f"{check.field}: the {_describe(check.field, missing)} is gone; it "
                        "came from a completed model call and must stay",
                    )
                )
            continue
        expected = project(check.field, fixture.expected[check.field])
        if shown == expected:
            results.append(CheckResult(check, True))
            continue
        if abandoned is None:
            abandoned = _abandoned(fixture)
        results.append(
            CheckResult(check, False, _first_difference(check.field, expected, shown, abandoned))
        )
    return results


@dataclass(slots=True)
class ScenarioResult:
    name: str
    checks: list[CheckResult] = field(default_factory=list)
    error: str | None = None
    skipped: str | None = None

    @property
    def passed(self) -> bool:
        return self.skipped is None and self.error is None and all(c.passed for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "passed": self.passed}
        if self.skipped is not None:
            data["skipped"] = self.skipped
        if self.error is not None:
            data["error"] = self.error
        data["checks"] = [c.to_json() for c in self.checks]
        return data


@dataclass(slots=True)
class Report:
    """Every scenario graded for one reducer or client."""

    subject: str
    scenarios: list[ScenarioResult] = field(default_factory=list)

    def requirement_results(self) -> dict[str, list[tuple[str, CheckResult]]]:
        found: dict[str, list[tuple[str, CheckResult]]] = {r: [] for r in REQUIREMENTS}
        for scenario in self.scenarios:
            for result in scenario.checks:
                for requirement in result.check.requirements:
                    found.setdefault(requirement, []).append((scenario.name, result))
        return {r: items for r, items in found.items() if items}

    def failed_requirements(self) -> list[str]:
        return [
            r
            for r, items in self.requirement_results().items()
            if any(not result.passed for _, result in items)
        ]

    @property
    def passed(self) -> bool:
        graded = [s for s in self.scenarios if s.skipped is None]
        return bool(graded) and all(s.passed for s in graded)

    def to_json(self) -> dict[str, Any]:
        requirements = []
        for requirement, items in self.requirement_results().items():
            level, title = REQUIREMENTS.get(requirement, ("", ""))
            failures = [
                {"scenario": name, "field": r.check.field, "difference": r.difference}
                for name, r in items
                if not r.passed
            ]
            requirements.append(
                {
                    "id": requirement,
                    "level": level,
                    "title": title,
                    "passed": not failures,
                    "checks": len(items),
                    "failures": failures,
                }
            )
        return {
            "subject": self.subject,
            "passed": self.passed,
            "failedRequirements": self.failed_requirements(),
            "requirements": requirements,
            "scenarios": [s.to_json() for s in self.scenarios],
        }

    def render(self) -> str:
        """The terminal report: one line per requirement, the first difference under it."""
        lines = [f"acp-bridge conformance: {self.subject}"]
        for item in self.to_json()["requirements"]:
            mark = "PASS" if item["passed"] else "FAIL"
            lines.append(f"  {mark} {item['id']} ({item['level']}) {item['title']}")
            if item["failures"]:
                first = item["failures"][0]
                lines.append(f"       in {first['scenario']}: {first['difference']}")
                more = len(item["failures"]) - 1
                if more:
                    lines.append(f"       ({more} more failing check(s) in other scenarios)")
        for scenario in self.scenarios:
            if scenario.error is not None:
                lines.append(f"  ERROR {scenario.name}: {scenario.error}")
            if scenario.skipped is not None:
                lines.append(f"  not graded: {scenario.name}: {scenario.skipped}")
        graded = [s for s in self.scenarios if s.skipped is None]
        passed = sum(1 for s in graded if s.passed)
        lines.append(
            f"{passed} of {len(graded)} scenarios pass; "
            + (
                "every requirement passes."
                if self.passed
                else "failing: " + (", ".join(self.failed_requirements()) or "errors above")
            )
        )
        return "\n".join(lines) + "\n"
