"""Conformance fixtures: one JSON file per scenario (spec/editor-conformance.md section 6).

A fixture holds the scripted stream the scenario agent plays, the exact wire exchange of the
connection the editor's view is built from (`wire`, every message in both directions, in
order), the view a conforming editor shows after it (`expected`), and the checks that grade a
view, each tagged with the `EDITOR-0NN` requirement it checks. The files live in
`spec/conformance/` (and ship in the wheel as package data); this module reads them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "FIXTURE_FORMAT",
    "VIEW_FIELDS",
    "Check",
    "Fixture",
    "FixtureError",
    "fixture_dir",
    "load_fixtures",
    "parse_fixture",
    "wire_lines",
]

FIXTURE_FORMAT = "acp-bridge-conformance/1"
VIEW_FIELDS = ("messages", "thoughts", "toolCalls", "permissionPrompts", "retries")
"""The fields of an editor view (the adapter's output), in report order."""

CheckKind = Literal["equal", "includes"]


class FixtureError(ValueError):
    """A fixture file that does not follow the format."""


@dataclass(frozen=True, slots=True)
class Check:
    """One graded expectation: `field` of the view `equal`s the expected one, or `includes`
    `items` (each of them, in this order, possibly with others between)."""

    requirements: tuple[str, ...]
    field: str
    kind: CheckKind
    says: str
    items: tuple[Any, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "requirements": list(self.requirements),
            "field": self.field,
            "check": self.kind,
            "says": self.says,
        }
        if self.kind == "includes":
            data["items"] = list(self.items)
        return data


@dataclass(frozen=True, slots=True)
class Fixture:
    """One scenario: its script, its prompts, the wire and the expectation."""

    name: str
    summary: str
    kind: Literal["prompt", "load"]
    prompts: tuple[str, ...]
    script: Mapping[str, Any]
    wire: tuple[Mapping[str, Any], ...]
    expected: Mapping[str, Any]
    checks: tuple[Check, ...]
    setup: tuple[Mapping[str, Any], ...] = ()
    raw: Mapping[str, Any] | None = None

    @property
    def requirements(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for check in self.checks:
            for requirement in check.requirements:
                seen.setdefault(requirement)
        return tuple(seen)


def _need(data: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise FixtureError(f"{where}: `{key}` must be a {kind.__name__}")
    return value


def parse_fixture(data: Any, *, where: str = "<fixture>") -> Fixture:
    """A `Fixture` from decoded JSON; `FixtureError` names what is wrong."""
    if not isinstance(data, dict):
        raise FixtureError(f"{where}: a fixture is a JSON object")
    if data.get("format") != FIXTURE_FORMAT:
        raise FixtureError(f"{where}: `format` must be {FIXTURE_FORMAT!r}")
    expected = _need(data, "expected", dict, where)
    for name in VIEW_FIELDS:
        _need(expected, name, list, f"{where}: expected")
    checks = []
    for index, item in enumerate(_need(data, "checks", list, where)):
        at = f"{where}: checks[{index}]"
        if not isinstance(item, dict) or item.get("check") not in ("equal", "includes"):
            raise FixtureError(f"{at}: `check` must be 'equal' or 'includes'")
        field = _need(item, "field", str, at)
        if field not in VIEW_FIELDS:
            raise FixtureError(f"{at}: `field` must be one of {', '.join(VIEW_FIELDS)}")
        checks.append(
            Check(
                tuple(str(r) for r in _need(item, "requirements", list, at)),
                field,
                item["check"],
                str(_need(item, "says", str, at)),
                tuple(item.get("items") or ()),
            )
        )
    kind = data.get("kind")
    if kind not in ("prompt", "load"):
        raise FixtureError(f"{where}: `kind` must be 'prompt' or 'load'")
    return Fixture(
        name=_need(data, "name", str, where),
        summary=_need(data, "summary", str, where),
        kind=kind,
        prompts=tuple(str(p) for p in _need(data, "prompts", list, where)),
        script=_need(data, "script", dict, where),
        wire=tuple(_need(data, "wire", list, where)),
        expected=expected,
        checks=tuple(checks),
        setup=tuple(data.get("setup") or ()),
        raw=data,
    )


def fixture_dir() -> Path:
    """Where the fixtures are: the package data of an installed wheel, else the checkout's
    `spec/conformance/`."""
    packaged = Path(str(files(__package__ or "acp_bridge.conformance"))) / "fixtures"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "spec" / "conformance"


@functools.cache
def _load(folder: Path) -> tuple[Fixture, ...]:
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found.append(parse_fixture(data, where=path.name))
    if not found:
        raise FixtureError(f"no conformance fixtures in {folder}")
    return tuple(found)


def load_fixtures(folder: Path | None = None) -> tuple[Fixture, ...]:
    """Every fixture, by name."""
    return _load((folder or fixture_dir()).resolve())


def wire_lines(wire: Sequence[Mapping[str, Any]]) -> bytes:
    """The adapter's stdin: one `{"from", "message"}` object per line (NDJSON)."""
    return b"".join(
        json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        for item in wire
    )
