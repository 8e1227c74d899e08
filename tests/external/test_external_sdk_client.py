"""The official Python SDK's client (`agent-client-protocol`) drives `python -m acp_bridge`.

A second oracle beside the JSON schema: the SDK parses everything the bridge sends into its own
generated pydantic models (requests it must answer included), so a shape the SDK cannot read
fails here. The SDK is a test dependency (pinned in pyproject's `test` and `bench` extras).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from subprocess_util import isolated_env

pytestmark = [pytest.mark.subprocess]

try:
    import acp
    from acp import schema as acp_schema_models
except ImportError as exc:  # a clear failure, never a skip
    raise AssertionError(
        "the official ACP Python SDK is missing: pip install 'agent-client-protocol==0.12.1' "
        "(it is in acp-bridge's test extra)"
    ) from exc

WAIT = 60.0


class RecordingClient:
    """An ACP client built on the SDK's interface: records updates, allows once, does files."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.updates: list[tuple[str, Any]] = []
        self.permission_requests: list[Any] = []
        self.writes: list[tuple[str, str]] = []

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any
    ) -> Any:
        self.permission_requests.append(tool_call)
        allow = next(o for o in options if o.kind == "allow_once")
        return acp.RequestPermissionResponse(
            outcome=acp_schema_models.AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )

    async def read_text_file(
        self,
        path: str,
        session_id: str,
        limit: int | None = None,
        line: int | None = None,
        **kwargs: Any,
    ) -> Any:
        return acp.ReadTextFileResponse(content=await anyio.Path(path).read_text())

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> Any:
        target = anyio.Path(path)
        assert Path(path).is_relative_to(self.workspace)
        await target.parent.mkdir(parents=True, exist_ok=True)
        await target.write_text(content)
        self.writes.append((path, content))
        return acp.WriteTextFileResponse()

    def message_text(self, session_id: str) -> str:
        return "".join(
            update.content.text
            for sid, update in self.updates
            if sid == session_id and update.session_update == "agent_message_chunk"
        )


async def _run_turn(tmp_path: Path, prompt: str) -> tuple[RecordingClient, Any, Any]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    client = RecordingClient(workspace)
    env = isolated_env(tmp_path / "home")
    with anyio.fail_after(WAIT):
        async with acp.spawn_agent_process(
            client,
            sys.executable,
            "-m",
            "acp_bridge",
            "--state-dir",
            str(tmp_path / "state"),
            env=env,
            cwd=workspace,
        ) as (conn, process):
            initialized = await conn.initialize(
                protocol_version=1,
                client_capabilities=acp_schema_models.ClientCapabilities(
                    fs=acp_schema_models.FileSystemCapabilities(
                        read_text_file=True, write_text_file=True
                    ),
                    terminal=False,
                ),
            )
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(prompt)])
            assert initialized.protocol_version == 1
            assert initialized.agent_info is not None
            assert initialized.agent_info.name == "acp-bridge"
            assert process.returncode is None
    return client, session, done


@pytest.mark.anyio
@pytest.mark.requirement("EXT-001")
async def test_sdk_client_completes_a_turn(tmp_path: Path) -> None:
    client, session, done = await _run_turn(tmp_path, "hello from the SDK")
    assert done.stop_reason == "end_turn"
    assert client.message_text(session.session_id).startswith(
        "Hello! You said: “hello from the SDK”. "
    )
    kinds = {update.session_update for _, update in client.updates}
    assert "available_commands_update" in kinds


@pytest.mark.anyio
@pytest.mark.requirement("EXT-001")
async def test_sdk_client_parses_a_retried_turn_with_a_tool_call(tmp_path: Path) -> None:
    client, session, done = await _run_turn(tmp_path, "/tool-call-broken-before-finish")
    assert done.stop_reason == "end_turn"
    note = tmp_path / "workspace" / "scripted-note.txt"
    assert client.writes == [(str(note), "Written once by acp-bridge's scripted model.\n")]
    assert len(client.permission_requests) == 1
    chunks = [
        update
        for sid, update in client.updates
        if sid == session.session_id and update.session_update == "agent_message_chunk"
    ]
    # The reset marker survives the SDK's models in `_meta` (field_meta).
    markers = [c for c in chunks if (c.field_meta or {}).get("reset") is True]
    assert len(markers) == 1
    assert markers[0].field_meta["attempt"] == 2
