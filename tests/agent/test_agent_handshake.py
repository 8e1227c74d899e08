"""The light `initialize` path equals the pydantic one, and it loads no pydantic (cold start)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_schema import AgentWireValidator, schema_path
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge import protocol as acp
from acp_bridge.agent import editor_capabilities
from acp_bridge.agent._initialize import _plain, initialize, initialize_result

pytestmark = pytest.mark.requirement("AGENT-INIT-001")


@pytest.mark.parametrize("missing", [(), ("OPENAI_API_KEY",), ("GEMINI_API_KEY", "GOOGLE_API_KEY")])
def test_result_is_a_valid_initialize_response(missing: tuple[str, ...]) -> None:
    result = initialize_result(missing)
    model = acp.from_wire(acp.InitializeResponse, result)
    assert acp.to_wire(model) == result
    validator = AgentWireValidator(strict_roots=True)
    validator.note_client_message(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    )
    validator.check({"jsonrpc": "2.0", "id": 0, "result": result})


booleans_or_junk = st.one_of(st.booleans(), st.none(), st.integers(), st.text(max_size=3))
params_strategy = st.fixed_dictionaries(
    {},
    optional={
        "protocolVersion": st.one_of(st.integers(-2, 70000), st.booleans(), st.text(max_size=2)),
        "clientCapabilities": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "fs": st.one_of(
                        st.none(),
                        st.fixed_dictionaries(
                            {},
                            optional={
                                "readTextFile": booleans_or_junk,
                                "writeTextFile": booleans_or_junk,
                            },
                        ),
                    ),
                    "terminal": booleans_or_junk,
                },
            ),
        ),
        "clientInfo": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {"name": st.one_of(st.text(max_size=4), st.integers())},
                optional={"version": st.one_of(st.text(max_size=4), st.none())},
            ),
        ),
    },
)


@given(params_strategy)
def test_the_light_path_only_accepts_what_pydantic_accepts_and_reads_it_alike(
    params: dict[str, Any],
) -> None:
    caps = _plain(params)
    if caps is None:
        return
    request = acp.from_wire(acp.InitializeRequest, params)  # must not raise
    light = editor_capabilities(acp.from_wire(acp.ClientCapabilities, caps) if caps else None)
    assert light == editor_capabilities(request.client_capabilities)


def test_malformed_requests_fall_back_to_pydantic_errors() -> None:
    from pydantic import ValidationError

    for params in ({"protocolVersion": "1"}, {"protocolVersion": True}, {}):
        with pytest.raises(ValidationError):
            initialize(params, missing_key_vars=())


def test_answering_initialize_needs_no_pydantic() -> None:
    probe = (
        "import sys, acp_bridge.cli._run, acp_bridge.agent._serve as s; "
        "from acp_bridge.agent._initialize import initialize; "
        "initialize({'protocolVersion': 1, 'clientCapabilities': {'fs': {'readTextFile': True}}},"
        " missing_key_vars=()); "
        "print(sorted(m for m in ('pydantic', 'httpx', 'acp_bridge.turn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.requirement("MCP-LIFE-005")
def test_sessions_without_mcp_servers_never_load_the_mcp_sdk(tmp_path: Path) -> None:
    """initialize, session/new and a prompt turn without servers: no `mcp` module loads."""
    probe = f"""
import sys, anyio
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
from bridge import running_bridge, scripted_config
from pathlib import Path

async def main():
    async with running_bridge(scripted_config(Path({str(tmp_path)!r}) / "state")) as editor:
        await editor.initialize()
        session = await editor.new_session({str(tmp_path)!r})
        await editor.prompt(session, "hello")
    print(sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))))

anyio.run(main)
"""
    env = {**os.environ, "ACP_SCHEMA_PATH": str(schema_path())}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"
