"""No input line ends the bridge; what is not JSON or not Unicode is refused, never stored.

Issue 11 items 1, 2 and 7 (spec/robustness.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from robust.robustkit import INIT, line, raw_bridge, responses, trace_lines

from acp_bridge.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

pytestmark = pytest.mark.anyio

NOT_JSON = {
    "huge-int": "1" * 5000,
    "nan": "NaN",
    "infinity": "Infinity",
    "minus-infinity": "-Infinity",
    "float-overflow": "1e999",
}


@pytest.mark.requirement("ROBUST-WIRE-001")
@pytest.mark.parametrize("traced", [False, True], ids=["plain", "trace"])
async def test_non_json_tokens_get_parse_error_and_the_rest_of_the_read_is_served(
    tmp_path: Path, traced: bool
) -> None:
    trace = tmp_path / "trace.ndjson" if traced else None
    async with raw_bridge(tmp_path / "s", trace) as peer:
        # Every line in ONE read: the good request after the bad ones must still be answered.
        data = b"".join(
            line(i, "initialize", json.dumps(INIT)[:-1] + f',"_meta":{{"x":{token}}}}}')
            for i, token in enumerate(NOT_JSON.values())
        )
        await peer.send_bytes(data + line("ok", "initialize", json.dumps(INIT)))
        answers = await responses(peer, len(NOT_JSON) + 1)
    errors, last = answers[:-1], answers[-1]
    assert [e["error"]["code"] for e in errors] == [PARSE_ERROR] * len(NOT_JSON)
    assert all(e["id"] is None for e in errors)
    assert "4300 digits" in errors[0]["error"]["message"]
    assert "NaN is not a JSON value" in errors[1]["error"]["message"]
    assert last["id"] == "ok"
    assert last["result"]["protocolVersion"] == 1
    if trace is not None:
        assert trace_lines(trace)


@pytest.mark.requirement("ROBUST-DEPTH-001")
@pytest.mark.requirement("ROBUST-TRACE-001")
@pytest.mark.parametrize("depth", [200, 800, 5000])
@pytest.mark.parametrize("traced", [False, True], ids=["plain", "trace"])
async def test_deep_nesting_is_refused_with_its_id_and_serving_goes_on(
    tmp_path: Path, depth: int, traced: bool
) -> None:
    trace = tmp_path / "trace.ndjson" if traced else None
    deep = "[" * depth + "]" * depth
    async with raw_bridge(tmp_path / "s", trace) as peer:
        params = json.dumps(INIT)[:-1] + f',"_meta":{{"deep":{deep}}}}}'
        await peer.send_bytes(
            line(7, "initialize", params) + line(8, "initialize", json.dumps(INIT))
        )
        first, second = await responses(peer, 2)
    if depth < 900:  # Python's json decodes it: refused by the depth limit, with the id
        assert first == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {
                "code": INVALID_REQUEST,
                "message": "Invalid request: the message nests deeper than 128 levels",
            },
        }
    else:  # deeper than the decoder goes: not decodable, so no id
        assert first["id"] is None
        assert first["error"]["code"] == PARSE_ERROR
    assert second["id"] == 8
    assert "result" in second
    if trace is not None:
        assert len(trace_lines(trace)) >= 3


SURROGATE = "\\ud800"
PROMPT = '[{"type":"text","text":"hi"}]'


@pytest.mark.requirement("ROBUST-TEXT-001")
@pytest.mark.requirement("ROBUST-TRACE-001")
@pytest.mark.parametrize("traced", [False, True], ids=["plain", "trace"])
async def test_lone_surrogates_in_stored_fields_get_invalid_params_naming_the_field(
    tmp_path: Path, traced: bool
) -> None:
    trace = tmp_path / "trace.ndjson" if traced else None
    cwd = json.dumps(str(tmp_path))
    async with raw_bridge(tmp_path / "s", trace) as peer:
        await peer.call("initialize", INIT)
        session = (await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []}))[
            "result"
        ]["sessionId"]
        cases = {
            "cwd": line(1, "session/new", f'{{"cwd":"/tmp/{SURROGATE}x","mcpServers":[]}}'),
            "mcpServers.0.name": line(
                2,
                "session/new",
                f'{{"cwd":{cwd},"mcpServers":[{{"name":"a{SURROGATE}","command":"/bin/true",'
                '"args":[],"env":[]}]}',
            ),
            "prompt.0.text": line(
                3,
                "session/prompt",
                f'{{"sessionId":"{session}","prompt":[{{"type":"text","text":"x{SURROGATE}"}}]}}',
            ),
            "sessionId": line(
                4, "session/prompt", f'{{"sessionId":"s{SURROGATE}","prompt":{PROMPT}}}'
            ),
            "prompt.0._meta.k": line(
                5,
                "session/prompt",
                f'{{"sessionId":"{session}","prompt":[{{"type":"text","text":"x",'
                f'"_meta":{{"k":"{SURROGATE}"}}}}]}}',
            ),
        }
        await peer.send_bytes(b"".join(cases.values()))
        answers = {a["id"]: a for a in await responses(peer, len(cases))}
        for (field, _), request_id in zip(cases.items(), range(1, 6), strict=True):
            error = answers[request_id]["error"]
            assert error["code"] == INVALID_PARAMS, (field, error)
            assert error["data"]["errors"][0]["field"] == field
            assert "lone UTF-16 surrogate" in error["message"]
        # Nothing was stored: the session's history is still empty and loads cleanly.
        load = await peer.call(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        assert "result" in load
        assert not [
            m
            for m in peer.received
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        ]
    if trace is not None:
        assert trace_lines(trace)


@pytest.mark.requirement("ROBUST-WIRE-001")
async def test_nan_in_prompt_meta_is_never_stored_so_load_keeps_working(tmp_path: Path) -> None:
    async with raw_bridge(tmp_path / "s") as peer:
        await peer.call("initialize", INIT)
        session = (await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []}))[
            "result"
        ]["sessionId"]
        block = '{"type":"text","text":"x","_meta":{"n":NaN}}'
        bad = f'{{"sessionId":"{session}","prompt":[{block}]}}'
        await peer.send_bytes(line(9, "session/prompt", bad))
        (error,) = await responses(peer, 1)
        assert error["error"]["code"] == PARSE_ERROR
        ok = await peer.call(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
        )
        assert ok["result"]["stopReason"] == "end_turn"
    async with raw_bridge(tmp_path / "s") as peer:
        await peer.call("initialize", INIT)
        load = await peer.call(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        assert "result" in load, load


@pytest.mark.requirement("ROBUST-TEXT-002")
async def test_a_cwd_holding_nul_is_invalid_params(tmp_path: Path) -> None:
    async with raw_bridge(tmp_path / "s") as peer:
        await peer.call("initialize", INIT)
        for field, params in (
            ("cwd", {"cwd": f"{tmp_path}\x00x", "mcpServers": []}),
            (
                "additionalDirectories.0",
                {"cwd": str(tmp_path), "additionalDirectories": ["/a\x00"], "mcpServers": []},
            ),
        ):
            reply = await peer.call("session/new", params)
            assert reply["error"]["code"] == INVALID_PARAMS
            assert reply["error"]["data"]["errors"] == [
                {"field": field, "problem": f"{field} contains a NUL character; send a real path"}
            ]


@pytest.mark.requirement("ROBUST-ERR-001")
@pytest.mark.requirement("RPC-ERR-003")
async def test_errors_quote_an_offending_value_once_and_bounded(tmp_path: Path) -> None:
    huge = "v" * 1_000_000
    async with raw_bridge(tmp_path / "s") as peer:
        await peer.call("initialize", INIT)
        session = (await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []}))[
            "result"
        ]["sessionId"]
        replies = [
            await peer.call(huge, {}),
            await peer.call("session/new", {"cwd": huge, "mcpServers": []}),
            await peer.call("session/set_mode", {"sessionId": session, "modeId": huge}),
            await peer.call("session/set_mode", {"sessionId": huge, "modeId": "ask"}),
            await peer.call("session/load", {"sessionId": huge, "cwd": "/", "mcpServers": []}),
            await peer.call("authenticate", {"methodId": huge}),
            await peer.call(
                "session/set_config_option",
                {"sessionId": session, "configId": huge, "value": "x"},
            ),
            # a discriminator's value: pydantic's own message would carry all of it
            await peer.call(
                "session/prompt", {"sessionId": session, "prompt": [{"type": huge, "text": "x"}]}
            ),
            await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": [{"type": huge}]}),
        ]
    for reply in replies:
        assert "error" in reply, reply
        assert len(json.dumps(reply)) < 2000, json.dumps(reply)[:300]
        assert json.dumps(reply).count("v") <= 120  # quoted once, bounded
