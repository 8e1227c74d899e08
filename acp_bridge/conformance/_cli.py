"""`acp-bridge conformance`: the kit's command for plugin authors.

    acp-bridge conformance list                      # the scenarios and what each checks
    acp-bridge conformance show SCENARIO             # one fixture, as JSON
    acp-bridge conformance export DIR                # every fixture (and the adapter's stdin)
    acp-bridge conformance grade-reducer [--json] -- CMD ...
    acp-bridge conformance grade-client [--json] [--text] -- CMD ...
    acp-bridge conformance reduce [--mode MODE]      # the reference reducer as an adapter
    acp-bridge conformance table [DIR]               # the graded-clients table (Markdown)
    acp-bridge conformance regenerate [DIR]          # maintainers: fixtures from the bridge

Exit status: 0 when everything graded passes, 1 when something fails, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from acp_bridge.conformance._fixture import (
    Fixture,
    FixtureError,
    fixture_dir,
    load_fixtures,
    wire_lines,
)

__all__ = ["main_conformance"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-bridge-agent conformance",
        description="Grade an editor's handling of acp-bridge's retried streams "
        "(spec/editor-conformance.md).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("list", help="the scenarios and the requirements each checks")
    show = sub.add_parser("show", help="one scenario's fixture as JSON")
    show.add_argument("scenario")
    export = sub.add_parser("export", help="write every fixture into DIR")
    export.add_argument("dir", type=Path)
    for name, helptext in (
        ("grade-reducer", "run a reducer adapter over every scenario and grade it"),
        ("grade-client", "run a headless client against the scenario agent and grade it"),
    ):
        grade = sub.add_parser(name, help=helptext)
        grade.add_argument("--json", action="store_true", help="print the report as JSON")
        grade.add_argument(
            "--scenario", action="append", default=[], help="grade only this scenario (repeat)"
        )
        grade.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
        if name == "grade-client":
            grade.add_argument(
                "--text",
                action="store_true",
                help="the client prints what the user reads (plain text), not a JSON view",
            )
        grade.add_argument("--record", type=Path, help="also write the graded result file")
        grade.add_argument("--client", help="the client's name, for --record")
        grade.add_argument("--client-version", help="the client's version, for --record")
        grade.add_argument("--how", help="how it was graded, for --record (a table cell)")
        grade.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    reduce = sub.add_parser("reduce", help="the reference reducer as an adapter (stdin NDJSON)")
    reduce.add_argument(
        "--mode", choices=["reset_aware", "naive", "append_only"], default="reset_aware"
    )
    table = sub.add_parser("table", help="the graded-clients table (Markdown)")
    table.add_argument("dir", type=Path, nargs="?")
    regenerate = sub.add_parser("regenerate", help="maintainers: rebuild the fixtures")
    regenerate.add_argument("dir", type=Path, nargs="?")
    return parser


def _selected(names: Sequence[str]) -> tuple[Fixture, ...]:
    fixtures = load_fixtures()
    if not names:
        return fixtures
    by_name = {f.name: f for f in fixtures}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise FixtureError(
            f"unknown scenario {unknown[0]!r}; `acp-bridge-agent conformance list` names them all"
        )
    return tuple(by_name[n] for n in names)


def _command(cmd: list[str]) -> list[str]:
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise FixtureError("name the program to grade after `--`, e.g. `-- node adapter.js`")
    return cmd


def _list() -> int:
    for fixture in load_fixtures():
        print(f"{fixture.name:32} {', '.join(fixture.requirements)}")
        print(f"{'':32} {fixture.summary}")
    return 0


def _export(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    for fixture in load_fixtures():
        assert fixture.raw is not None
        text = json.dumps(fixture.raw, indent=2, ensure_ascii=False) + "\n"
        (folder / f"{fixture.name}.json").write_text(text, encoding="utf-8")
        (folder / f"{fixture.name}.ndjson").write_bytes(wire_lines(fixture.wire))
    print(f"wrote {len(load_fixtures())} fixtures (.json) and adapter inputs (.ndjson) to {folder}")
    return 0


def _reduce(mode: str) -> int:
    from acp_bridge.conformance._view import view_of_wire

    wire = [json.loads(line) for line in sys.stdin if line.strip()]
    print(json.dumps(view_of_wire(wire, mode), ensure_ascii=False))
    return 0


def main_conformance(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    try:
        if args.command == "list":
            return _list()
        if args.command == "show":
            fixture = _selected([args.scenario])[0]
            print(json.dumps(fixture.raw, indent=2, ensure_ascii=False))
            return 0
        if args.command == "export":
            return _export(args.dir)
        if args.command == "reduce":
            return _reduce(args.mode)
        if args.command == "regenerate":
            from acp_bridge.conformance._generate import regenerate

            folder = args.dir or Path(__file__).resolve().parents[2] / "spec" / "conformance"
            for path in regenerate(folder):
                print(f"wrote {path}")
            return 0
        if args.command == "table":
            from acp_bridge.conformance._graded import load_graded, render_table

            sys.stdout.write(render_table(load_graded(args.dir or fixture_dir() / "graded")))
            return 0
        fixtures = _selected(args.scenario)
        command = _command(args.cmd)
        if args.command == "grade-reducer":
            from acp_bridge.conformance._adapter import grade_reducer

            report = grade_reducer(fixtures, command, timeout=args.timeout)
        else:
            from acp_bridge.conformance._client import grade_client

            report = grade_client(fixtures, command, timeout=args.timeout, text=args.text)
    except FixtureError as exc:
        print(f"acp-bridge conformance: {exc}", file=sys.stderr)
        return 2
    if args.record is not None:
        from acp_bridge.conformance._graded import graded_record

        record = graded_record(
            report,
            client=args.client or command[0],
            version=args.client_version or "unknown",
            how=args.how or args.command,
            command=command,
        )
        text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
        args.record.write_text(text, encoding="utf-8")
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(report.render())
    return 0 if report.passed else 1
