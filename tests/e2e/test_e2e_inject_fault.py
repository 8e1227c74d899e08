"""`--inject-fault` breaks a real provider's stream on purpose, so an editor's reset handling can
be tried against a real model (issue 4 item 5): a healthy loopback OpenAI server, a bridge told
to break the first attempt after three events, and one reset marker on the wire."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from e2e.stdio_editor import StdioEditor, reset_aware_messages, spawned_bridge
from e2e.test_e2e_openai_subprocess import MODEL, WAIT, finished, text
from loopback_http import LoopbackServer
from subprocess_util import bridge_argv, isolated_env

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]

ANSWER = ("A healthy ", "stream that ", "the bridge ", "breaks on purpose.")


@pytest.mark.requirement("PROV-FAULT-001")
async def test_injected_fault_is_retried_with_a_reset_marker(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    replies = [finished(*(text(t) for t in ANSWER), reason="stop") for _ in range(2)]
    with anyio.fail_after(WAIT), (tmp_path / "stderr.log").open("w+b") as stderr:
        async with LoopbackServer(replies) as server:
            argv = bridge_argv(
                *("--provider", "openai", "--base-url", f"{server.base_url}/v1"),
                *("--model", MODEL, "--state-dir", str(tmp_path / "state")),
                *("--inject-fault", "after-events:3"),
            )
            env = isolated_env(tmp_path / "home", None)
            async with spawned_bridge(argv, env=env, cwd=tmp_path, stderr=stderr) as proc:
                editor = StdioEditor(proc)
                await editor.initialize()
                session = await editor.new_session(workspace)
                result = await editor.prompt(session, "hello")
                assert await editor.close() == []
                await proc.wait()
    assert result["stopReason"] == "end_turn"
    assert result["_meta"]["acpBridge"]["billedAttempts"] == 2
    markers = [u for u in editor.updates if (u.get("_meta") or {}).get("reset") is True]
    assert [m["_meta"] for m in markers] == [
        {"reset": True, "attempt": 2, "reason": "stream_interrupted"}
    ]
    assert reset_aware_messages(editor.updates) == ["".join(ANSWER)]
    assert len(server.requests) == 2  # one real request per attempt; the fault was ours
