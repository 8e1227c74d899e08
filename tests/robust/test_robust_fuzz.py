"""Whole-wire fuzzing: every method's params, valid-shaped and mutated, against the real bridge.

Hostile values are written as raw JSON text (so `NaN`, 5000-digit integers and `"\\ud800"`
reach the bridge exactly as an editor could send them). For each request the expected answer is
exact: a non-JSON token makes the line -32700 with `id: null`; else nesting past 128 levels is
-32600 with the id; else a lone surrogate anywhere in params is -32602 with the id; else a result
or an error whose code is one the method can legitimately give (never -32603, never silence).
After each example the bridge still answers `initialize`. Runs in-process (with and without
`--trace`) and over one real stdio subprocess (ROBUST-FUZZ-001).

Examples per test: `ROBUST_FUZZ_EXAMPLES` (default 30, moderate for CI time).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robust.robustkit import INIT, raw_bridge, trace_lines
from subprocess_util import LineProcess, bridge_argv, isolated_env

FUZZ = settings(
    max_examples=int(os.environ.get("ROBUST_FUZZ_EXAMPLES", "30")),
    suppress_health_check=[
        *settings.default.suppress_health_check,
        HealthCheck.function_scoped_fixture,
    ],
)

PARSE, INVALID_REQUEST, NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
# What a method may answer to input that is JSON and Unicode but wrong in meaning.
LEGIT = {INVALID_REQUEST, NOT_FOUND, INVALID_PARAMS, -32000, -32002}


@dataclass(frozen=True)
class Raw:
    """JSON text inserted as is (it may not be JSON at all)."""

    text: str
    kind: str  # "parse" (not JSON), "deep" (too deep), "surrogate", "" (legal)


SESSION = "$SESSION"
CWD = "$CWD"


def _meta() -> dict[str, Any]:
    return {"_meta": {"k": "v"}}


TEMPLATES: dict[str, dict[str, Any]] = {
    "initialize": {**INIT, "clientInfo": {"name": "fuzz", "version": "1"}},
    "authenticate": {"methodId": "none"},
    "session/new": {"cwd": CWD, "mcpServers": [], "additionalDirectories": []},
    "session/load": {"sessionId": SESSION, "cwd": CWD, "mcpServers": []},
    "session/resume": {"sessionId": SESSION, "cwd": CWD, "mcpServers": []},
    "session/list": {"cwd": CWD},
    "session/prompt": {
        "sessionId": SESSION,
        "prompt": [{"type": "text", "text": "hello", **_meta()}],
    },
    "session/set_mode": {"sessionId": SESSION, "modeId": "ask"},
    "session/set_config_option": {"sessionId": SESSION, "configId": "model", "value": "scripted"},
    "session/close": {"sessionId": "sess_unknown"},
    "session/delete": {"sessionId": "sess_unknown"},
    "_vendor/thing": {"x": 1},
    "no/such/method": {},
}
NOTIFICATIONS = {"session/cancel": {"sessionId": SESSION}, "$/cancel_request": {"requestId": 1}}

HOSTILE = st.sampled_from(
    [
        Raw("1" * 5000, "parse"),
        Raw("-" + "9" * 4400, "parse"),
        Raw("NaN", "parse"),
        Raw("Infinity", "parse"),
        Raw("-Infinity", "parse"),
        Raw("1e999", "parse"),
        Raw("[" * 300 + "]" * 300, "deep"),
        Raw("[" * 2000 + "]" * 2000, "parse"),
        Raw('"\\ud800"', "surrogate"),
        Raw('"a\\udfffb"', "surrogate"),
        Raw('{"\\ud83d":1}', "surrogate"),
        Raw('"\\u0000"', ""),
        Raw('"/abs\\u0000path"', ""),
        Raw("1" * 4000, ""),
        Raw("18446744073709551616", ""),
        Raw("-1", ""),
        Raw("1.5e308", ""),
        Raw('"\\ud83d\\ude00"', ""),
        Raw("[" * 100 + "]" * 100, ""),
        Raw('"' + "x" * 100_000 + '"', ""),
        Raw("null", ""),
        Raw("true", ""),
        Raw("{}", ""),
        Raw("[]", ""),
        Raw('""', ""),
    ]
)
LEAF = st.one_of(
    HOSTILE,
    st.text(max_size=20),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += _paths(child, (*prefix, i))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new) if rest else new}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


@st.composite
def params(draw: st.DrawFn, template: dict[str, Any]) -> Any:
    """A template with some leaves (or whole subtrees) replaced, or a key added."""
    value: Any = template
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(value)[1:]  # params stay an object: the envelope is tested elsewhere
        if not paths:
            value = {**value, draw(st.text(max_size=5)): draw(LEAF)}
            continue
        path = draw(st.sampled_from(paths))
        if draw(st.booleans()) or len(path) < 2:
            value = _replace(value, path, draw(LEAF))
        else:
            parent = path[:-1]
            target = value
            for step in parent:
                target = target[step]
            if isinstance(target, dict):
                value = _replace(value, (*parent, draw(st.text(max_size=5))), draw(LEAF))
    return value


@st.composite
def messages(draw: st.DrawFn) -> tuple[str, Any, bool]:
    """(method, params, is_notification)."""
    if draw(st.integers(0, 9)) == 0:
        method = draw(st.sampled_from(sorted(NOTIFICATIONS)))
        return method, draw(params(NOTIFICATIONS[method])), True
    method = draw(st.sampled_from(sorted(TEMPLATES)))
    return method, draw(params(TEMPLATES[method])), False


def render(value: Any, subs: dict[str, str], kinds: set[str]) -> str:
    """JSON text for `value`, Raw parts as given; the Raw kinds used are added to `kinds`."""
    if isinstance(value, Raw):
        if value.kind:
            kinds.add(value.kind)
        return value.text
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(f"{json.dumps(k)}:{render(v, subs, kinds)}" for k, v in value.items())
            + "}"
        )
    if isinstance(value, list):
        return "[" + ",".join(render(v, subs, kinds) for v in value) + "]"
    if isinstance(value, str) and value in subs:
        return json.dumps(subs[value])
    if isinstance(value, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        kinds.add("surrogate")
    text = json.dumps(value)
    if isinstance(value, float) and text in ("NaN", "Infinity", "-Infinity"):
        kinds.add("parse")
    return text


def expected_code(kinds: set[str]) -> int | None:
    """The exact error the line must get; None: a result or a legitimate error."""
    if "parse" in kinds:
        return PARSE
    if "deep" in kinds:
        return INVALID_REQUEST
    if "surrogate" in kinds:
        return INVALID_PARAMS
    return None


def check_answer(answer: dict[str, Any], request_id: int | None, kinds: set[str]) -> None:
    assert answer["jsonrpc"] == "2.0"
    code = expected_code(kinds)
    if code == PARSE:
        assert answer["id"] is None, answer
        assert answer["error"]["code"] == PARSE, answer
        return
    assert answer["id"] == request_id, answer
    if code is not None:
        assert answer.get("error", {}).get("code") == code, (kinds, answer)
        return
    if "error" in answer:
        error = answer["error"]
        assert set(error) <= {"code", "message", "data"}
        assert isinstance(error["message"], str)
        assert error["code"] in LEGIT, answer
        assert len(json.dumps(answer)) < 8000, "an error must not grow with its input"
    else:
        assert "result" in answer, answer


def build_line(
    message_id: int | None, method: str, value: Any, subs: dict[str, str]
) -> tuple[bytes, set[str]]:
    kinds: set[str] = set()
    body = render(value, subs, kinds)
    head = json.dumps({"jsonrpc": "2.0", "method": method})[:-1]
    if message_id is not None:
        head += f',"id":{message_id}'
    return f'{head},"params":{body}}}\n'.encode(), kinds


# -- in-process ---------------------------------------------------------------------------


class _Editor:
    """Reads the bridge's lines, answers its requests with an error, collects responses."""

    def __init__(self, peer: Any) -> None:
        self.peer = peer
        self.answers: dict[Any, list[dict[str, Any]]] = {}

    async def next_answer(self, request_id: Any) -> dict[str, Any]:
        with anyio.fail_after(20):
            while not self.answers.get(request_id):
                message = await self.peer.receive()
                if "method" in message:
                    if "id" in message:  # the bridge asks us something: we decline
                        await self.peer.send(
                            {
                                "jsonrpc": "2.0",
                                "id": message["id"],
                                "error": {"code": -32601, "message": "not offered"},
                            }
                        )
                    continue
                self.answers.setdefault(message.get("id"), []).append(message)
        return self.answers[request_id].pop(0)


async def _fuzz_in_process(state: Path, cwd: Path, batch: list[Any], trace: Path | None) -> None:
    async with raw_bridge(state, trace) as peer:
        editor = _Editor(peer)
        await peer.request("initialize", INIT, id=0)
        assert "result" in await editor.next_answer(0)
        await peer.request("session/new", {"cwd": str(cwd), "mcpServers": []}, id=-1)
        session = (await editor.next_answer(-1))["result"]["sessionId"]
        subs = {SESSION: session, CWD: str(cwd)}
        for n, (method, value, is_note) in enumerate(batch, start=1):
            data, kinds = build_line(None if is_note else n, method, value, subs)
            await peer.send_bytes(data)
            if is_note:
                if kinds & {"parse", "deep"}:  # answered even so, with id null
                    check_answer(await editor.next_answer(None), None, kinds)
                continue
            key = None if expected_code(kinds) == PARSE else n
            check_answer(await editor.next_answer(key), n, kinds)
        await peer.request("initialize", INIT, id="alive")
        assert "result" in await editor.next_answer("alive")
    if trace is not None:
        assert trace_lines(trace)


@pytest.mark.requirement("ROBUST-FUZZ-001")
@pytest.mark.parametrize("traced", [False, True], ids=["plain", "trace"])
@FUZZ
@given(batch=st.lists(messages(), min_size=1, max_size=6))
def test_fuzzed_wire_in_process(tmp_path: Path, traced: bool, batch: list[Any]) -> None:
    state = tmp_path / "state"
    trace = tmp_path / "trace.ndjson" if traced else None
    if trace is not None and trace.exists():
        trace.unlink()
    anyio.run(_fuzz_in_process, state, tmp_path, batch, trace)


# -- one real subprocess --------------------------------------------------------------------


@pytest.fixture(scope="module")
def live_bridge(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("fuzz-home")
    argv = bridge_argv("--state-dir", str(home / "state"), "--trace", str(home / "t.ndjson"))
    with LineProcess(argv, env=isolated_env(home)) as bridge:
        bridge.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        assert "result" in _read_answer(bridge, 0)
        bridge.send(
            {
                "jsonrpc": "2.0",
                "id": -1,
                "method": "session/new",
                "params": {"cwd": str(home), "mcpServers": []},
            }
        )
        session = _read_answer(bridge, -1)["result"]["sessionId"]
        yield bridge, {SESSION: session, CWD: str(home)}, home / "t.ndjson"


def _read_answer(bridge: LineProcess, request_id: Any) -> dict[str, Any]:
    while True:
        message = json.loads(bridge.read_line())
        if "method" in message:
            if "id" in message:
                bridge.send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "not offered"},
                    }
                )
            continue
        if message.get("id") == request_id:
            return dict(message)


_counter = iter(range(1000, 10**9))


@pytest.mark.subprocess
@pytest.mark.requirement("ROBUST-FUZZ-001")
@FUZZ
@given(batch=st.lists(messages(), min_size=1, max_size=4))
def test_fuzzed_wire_over_a_real_stdio_subprocess(live_bridge: Any, batch: list[Any]) -> None:
    bridge, subs, trace = live_bridge
    for method, value, is_note in batch:
        if is_note or method == "session/prompt":  # turns and cancels: covered in-process
            continue
        if method in ("session/load", "session/resume", "session/close", "session/delete"):
            continue  # these would take the shared session away from later examples
        n = next(_counter)
        data, kinds = build_line(n, method, value, subs)
        bridge.send_bytes(data)
        key = None if expected_code(kinds) == PARSE else n
        check_answer(_read_answer(bridge, key), n, kinds)
    alive = next(_counter)
    bridge.send({"jsonrpc": "2.0", "id": alive, "method": "initialize", "params": INIT})
    assert "result" in _read_answer(bridge, alive)
    assert bridge.process.poll() is None
    assert trace_lines(trace)
