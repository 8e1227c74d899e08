"""A session's start without pydantic: the light readers and builders equal the models.

`acp_bridge.agent._light` reads the usual `session/new` and `session/prompt` by small exact
checks and writes their answers as plain dicts (STARTUP-002). These tests hold the two paths
equal: a reader accepts nothing the models refuse and reads what they read; a builder writes
the bytes `to_wire` writes. Then a fresh interpreter runs initialize and session/new through
the real agent and shows that neither pydantic nor the ACP models were imported (STARTUP-001).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_schema import AgentWireValidator, schema_path
from hypothesis import given
from hypothesis import strategies as st
from subprocess_util import LineProcess, isolated_env

from acp_bridge import protocol as acp
from acp_bridge.agent import editor_capabilities
from acp_bridge.agent._light import (
    available_commands_wire,
    client_features,
    plain_new_session,
    plain_prompt,
    prompt_response_wire,
    session_info_update_wire,
)
from acp_bridge.agent._live import usage_wire
from acp_bridge.agent._options import (
    config_options,
    config_options_wire,
    mode_state,
    mode_state_wire,
)
from acp_bridge.turn import SessionMode

TESTS = Path(__file__).resolve().parents[1]


def _same_bytes(plain: object, model: object) -> None:
    assert json.dumps(plain) == json.dumps(model)


junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=1),
    st.dictionaries(st.sampled_from(["a", "_meta"]), st.integers(), max_size=1),
)
strings = st.text(max_size=6)
directories = st.one_of(st.lists(strings, max_size=2), st.lists(junk, max_size=2), junk)
new_session_params = st.fixed_dictionaries(
    {},
    optional={
        "cwd": st.one_of(strings, st.sampled_from(["/abs", "/tmp/x"]), junk),
        "additionalDirectories": directories,
        "additional_directories": directories,
        "mcpServers": st.one_of(
            st.just([]),
            st.none(),
            st.lists(
                st.fixed_dictionaries({"name": strings, "command": strings, "args": st.just([])}),
                max_size=1,
            ),
            junk,
        ),
        "_meta": junk,
        "extra": junk,
    },
)


@pytest.mark.requirement("STARTUP-002")
@given(st.one_of(new_session_params, junk))
def test_the_light_session_new_reader_accepts_only_what_the_model_reads_alike(
    params: Any,
) -> None:
    plain = plain_new_session(params)
    if plain is None:
        return
    request = acp.from_wire(acp.NewSessionRequest, params)  # must not raise
    assert plain == (request.cwd, request.additional_directories)
    assert request.mcp_servers == []


text_blocks = st.fixed_dictionaries({"type": st.just("text"), "text": strings})
blocks = st.one_of(
    text_blocks,
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "image", "Text"]), "text": st.one_of(strings, junk)},
        optional={"annotations": junk, "_meta": junk, "data": strings, "mimeType": strings},
    ),
    junk,
)
prompt_params = st.fixed_dictionaries(
    {},
    optional={
        "sessionId": st.one_of(strings, junk),
        "prompt": st.one_of(st.lists(text_blocks, max_size=3), st.lists(blocks, max_size=3), junk),
        "_meta": junk,
        "session_id": strings,
    },
)


@pytest.mark.requirement("STARTUP-002")
@given(st.one_of(prompt_params, junk))
def test_the_light_prompt_reader_accepts_only_what_the_model_reads_alike(params: Any) -> None:
    plain = plain_prompt(params)
    if plain is None:
        return
    session_id, texts, wire = plain
    request = acp.from_wire(acp.PromptRequest, params)  # must not raise
    assert session_id == request.session_id
    assert texts == [block.text for block in request.prompt]  # type: ignore[union-attr]
    _same_bytes(wire, [acp.to_wire(block) for block in request.prompt])


@pytest.mark.requirement("STARTUP-002")
def test_the_usual_requests_take_the_light_path() -> None:
    assert plain_new_session({"cwd": "/w", "mcpServers": []}) == ("/w", [])
    assert plain_new_session(
        {"cwd": "/w", "mcpServers": None, "additionalDirectories": ["/a"], "_meta": {"k": 1}}
    ) == ("/w", ["/a"])
    prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
    assert plain_prompt(prompt) == ("s", ["hi"], [{"type": "text", "text": "hi"}])
    # What the models must read (and refuse precisely) goes to them.
    assert plain_new_session({"cwd": "/w"}) is None  # mcpServers is required
    assert plain_new_session({"cwd": "/w", "mcpServers": [{"name": "x"}]}) is None
    assert plain_prompt({"sessionId": "s", "prompt": []}) is None
    assert plain_prompt({"sessionId": "s", "prompt": [{"type": "image", "data": ""}]}) is None


capabilities = st.fixed_dictionaries(
    {},
    optional={
        "fs": st.one_of(
            junk,
            st.fixed_dictionaries(
                {}, optional={"readTextFile": junk, "writeTextFile": st.one_of(junk, st.just(1))}
            ),
        ),
        "terminal": st.one_of(junk, st.just(1)),
        "session": st.one_of(
            junk,
            st.fixed_dictionaries({}, optional={"notices": junk, "configOptions": junk}),
        ),
    },
)


@pytest.mark.requirement("STARTUP-002")
@given(st.one_of(capabilities, st.just({})))
def test_client_features_read_the_capabilities_as_the_models_do(caps: dict[str, Any]) -> None:
    model = acp.from_wire(acp.ClientCapabilities, caps) if caps else None
    notices = model is not None and model.session is not None and model.session.notices is not None
    assert client_features(caps) == (editor_capabilities(model), notices)


@pytest.mark.requirement("STARTUP-002")
@pytest.mark.parametrize("levels", [(), ("low", "medium", "high")])
@pytest.mark.parametrize("mode", list(SessionMode))
def test_the_session_setup_builders_write_what_to_wire_writes(
    levels: tuple[str, ...], mode: SessionMode
) -> None:
    _same_bytes(mode_state_wire(mode), acp.to_wire(mode_state(mode)))
    models = ("m1", "m2")
    _same_bytes(
        config_options_wire("m2", models, "low", levels),
        [acp.to_wire(o) for o in config_options("m2", models, "low", levels)],
    )


@pytest.mark.requirement("STARTUP-002")
def test_the_update_and_response_builders_write_what_to_wire_writes() -> None:
    commands = [("hello", "A normal answer"), ("broken", "A broken stream")]
    model = acp.AvailableCommandsUpdate(
        available_commands=[acp.AvailableCommand(name=n, description=d) for n, d in commands]
    )
    _same_bytes(available_commands_wire(commands), acp.to_wire(model))
    info = acp.SessionInfoUpdate(title="t", updated_at="2026-01-01T00:00:00.000Z")
    _same_bytes(session_info_update_wire("t", "2026-01-01T00:00:00.000Z"), acp.to_wire(info))
    meta = {"acpBridge": {"turnId": "t1", "attempts": [{"usage": None, "billed": True}]}}
    for stop in acp.StopReason:
        response = acp.PromptResponse(stop_reason=stop, field_meta=meta)
        _same_bytes(prompt_response_wire(stop.value, meta), acp.to_wire(response))


@pytest.mark.requirement("STARTUP-001")
def test_initialize_and_session_new_load_neither_pydantic_nor_the_models(tmp_path: Path) -> None:
    """The real agent in a fresh interpreter: what a session's start imported."""
    probe = f"""
import sys, anyio
sys.path.insert(0, {str(TESTS)!r})
from bridge import running_bridge, scripted_config
from pathlib import Path

HEAVY = ("pydantic", "pydantic_core", "httpx", "httpcore", "mcp", "mcp_types", "jsonrpc_base")

def heavy():
    return sorted(
        m for m in sys.modules
        if m.split(".")[0] in HEAVY
        or m.startswith(("acp_bridge.protocol", "acp_bridge.providers.http"))
    )

async def main():
    async with running_bridge(scripted_config(Path({str(tmp_path)!r}) / "state")) as editor:
        await editor.initialize()
        session = await editor.new_session({str(tmp_path)!r})
        print(repr((session.startswith("sess_"), heavy())))

anyio.run(main)
"""
    env = {**os.environ, "ACP_SCHEMA_PATH": str(schema_path())}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == repr((True, []))


@pytest.mark.requirement("STARTUP-003")
def test_serving_collects_garbage_again_once_the_agent_is_loaded(tmp_path: Path) -> None:
    from acp_bridge.cli._run import _frozen

    gc.disable()
    try:
        assert _frozen(lambda: "config") == "config"  # type: ignore[arg-type,return-value]
        assert gc.isenabled()
        gc.disable()

        def broken() -> Any:
            raise ValueError("bad config")

        with pytest.raises(ValueError, match="bad config"):
            _frozen(broken)
        assert gc.isenabled()  # a failed load does not leave the collector off
    finally:
        gc.unfreeze()
        gc.enable()


@pytest.mark.requirement("STARTUP-003")
def test_every_command_leaves_the_collector_on(tmp_path: Path) -> None:
    from acp_bridge.cli import main

    assert gc.isenabled()
    with pytest.raises(SystemExit):
        main(["--version"])
    assert gc.isenabled()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


@pytest.mark.requirement("STARTUP-005")
@given(
    used=st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 2**64 - 1])),
    size=st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 2**64 - 1])),
    cost=st.one_of(
        st.none(), st.floats(allow_nan=False, allow_infinity=False), st.integers(-(2**53), 2**53)
    ),
    meta=st.dictionaries(st.text(max_size=6), json_values, max_size=3),
)
def test_the_usage_update_builder_writes_what_to_wire_writes(
    used: int, size: int, cost: float | None, meta: dict[str, Any]
) -> None:
    """`usage_wire` (the turn's usage_update without pydantic) against the model, over the
    schema's whole uint64 range, any finite cost and any `_meta`."""
    fields: dict[str, Any] = {"used": used, "size": size, "field_meta": {"acpBridge": meta}}
    if cost is not None:
        fields["cost"] = acp.Cost(amount=cost, currency="USD")
    _same_bytes(usage_wire(used, size, cost, meta), acp.to_wire(acp.UsageUpdate(**fields)))


# Records, inside a real `python -m acp_bridge`, which modules were loaded when it wrote the
# initialize response, the session/new response, the first agent_message_chunk and the prompt
# response: os.write is the stdio transport's only way out, so the snapshot is taken exactly
# before those bytes.
_PROBE = """
import json, os, sys
MARKS = {"initialize": (b'"result"', b'"agentCapabilities"'),
         "session/new": (b'"result"', b'"sessionId"'), "first chunk": (b"agent_message_chunk",),
         "prompt response": (b'"stopReason"',)}
seen = {}
real_write = os.write

def write(fd, data):
    chunk = bytes(data)
    for mark, needles in MARKS.items():
        if mark not in seen and all(n in chunk for n in needles):
            seen[mark] = sorted(sys.modules)
    return real_write(fd, data)

os.write = write
import atexit
atexit.register(lambda: open(sys.argv[1], "w").write(json.dumps(seen)))
from acp_bridge.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture(scope="module")
def loaded_at(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """A first session and prompt of the real agent (scripted provider), as an editor sends
    them; what was imported at each of its answers."""
    tmp = tmp_path_factory.mktemp("startup")
    out = tmp / "modules.json"
    argv = [sys.executable, "-c", _PROBE, str(out), "--state-dir", str(tmp / "state")]
    validator = AgentWireValidator(strict_roots=True)
    with LineProcess(argv, env=isolated_env(tmp / "home"), wait=120) as agent:

        def send(request_id: int, method: str, params: dict[str, Any]) -> None:
            request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            validator.note_client_message(request)
            agent.send(request)

        def answer(request_id: int) -> dict[str, Any]:
            while True:
                message = agent.read_message()
                validator.check(message)
                if message.get("id") == request_id:
                    assert "result" in message, message
                    return message["result"]  # type: ignore[no-any-return]

        caps = {"fs": {"readTextFile": True}}
        send(1, "initialize", {"protocolVersion": 1, "clientCapabilities": caps})
        answer(1)
        send(2, "session/new", {"cwd": str(tmp), "mcpServers": []})
        session_id = answer(2)["sessionId"]
        prompt = [{"type": "text", "text": "hello"}]
        send(3, "session/prompt", {"sessionId": session_id, "prompt": prompt})
        assert answer(3)["stopReason"] == "end_turn"
        agent.close_stdin()
        agent.read_to_eof()
        assert agent.process.wait(timeout=60) == 0, agent.stderr_text()
    loaded: dict[str, list[str]] = json.loads(out.read_text())
    assert sorted(loaded) == ["first chunk", "initialize", "prompt response", "session/new"]
    return loaded


PROMPT_PATH = (
    "acp_bridge.agent._prompting",
    "acp_bridge.turn._runner",
    "acp_bridge.turn._model_call",
    "acp_bridge.tools._registry",
    "acp_bridge.tools._search",
    "acp_bridge.tools._command",
)


@pytest.mark.requirement("STARTUP-004")
def test_session_new_is_answered_before_the_prompt_path_loads(
    loaded_at: dict[str, list[str]],
) -> None:
    at_new = set(loaded_at["session/new"])
    assert at_new.isdisjoint(PROMPT_PATH), sorted(at_new & set(PROMPT_PATH))
    mcp = sorted(
        m for m in at_new if m.startswith("acp_bridge.mcp.") and m != "acp_bridge.mcp._limits"
    )
    assert mcp == []  # no MCP servers: nothing of MCP but its limits
    assert set(PROMPT_PATH) <= set(loaded_at["first chunk"])  # loaded for the prompt


@pytest.mark.requirement("STARTUP-001")
@pytest.mark.requirement("STARTUP-005")
def test_a_first_text_turn_loads_neither_pydantic_nor_the_models(
    loaded_at: dict[str, list[str]],
) -> None:
    heavy = ("pydantic", "pydantic_core", "acp_bridge.protocol", "httpx", "mcp")
    for mark, modules in loaded_at.items():
        assert [m for m in modules if m.split(".")[0] in heavy or m.startswith(heavy)] == [], mark


# What the handshake needs is settings, the JSON-RPC peer and the light `initialize` builder:
# neither the providers' stream vocabulary (a third of the dataclasses loaded before it) nor
# the provider, the session store or the turn engine.
NOT_BEFORE_INITIALIZE = (
    "acp_bridge.providers._base",
    "acp_bridge.providers._conversation",
    "acp_bridge.providers._events",
    "acp_bridge.providers._faults",
    "acp_bridge.providers.scripted",
    "acp_bridge.agent._config",
    "acp_bridge.sessions",
    "acp_bridge.turn",
    "sqlite3",
)


@pytest.mark.requirement("STARTUP-007")
def test_initialize_is_answered_before_the_provider_layers_load(
    loaded_at: dict[str, list[str]],
) -> None:
    at_initialize = set(loaded_at["initialize"])
    assert at_initialize.isdisjoint(NOT_BEFORE_INITIALIZE), sorted(
        at_initialize & set(NOT_BEFORE_INITIALIZE)
    )
    assert "acp_bridge.providers._modalities" in at_initialize  # promptCapabilities
    later = set(NOT_BEFORE_INITIALIZE) - {"acp_bridge.providers._faults"}  # only with faults
    assert later <= set(loaded_at["first chunk"])  # loaded when needed
