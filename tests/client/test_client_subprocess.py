"""The reference client and the demo against a real `python -m acp_bridge` process over stdio,
exactly as an editor launches it. Every message the bridge writes is schema-validated."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from client.wirekit import validate_transcript, workspace
from subprocess_util import isolated_env

from acp_bridge.cli._demo import DEFAULT_SCENARIOS, run_demo
from acp_bridge.client import WireMessage, spawn_bridge
from acp_bridge.turn import EffectLedger

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]

WAIT = 60.0


async def test_the_client_drives_a_real_bridge_process(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    state = tmp_path / "state"
    args = [
        "--provider",
        "scripted",
        "--state-dir",
        str(state),
        "--config",
        str(tmp_path / "none.toml"),
    ]
    (tmp_path / "none.toml").write_text("")
    with anyio.fail_after(WAIT):
        async with spawn_bridge(args, env=isolated_env(tmp_path / "home")) as bridge:
            client = bridge.client
            init = await client.initialize()
            session_id = await client.new_session(ws)
            refund = await client.prompt(session_id, "/help-desk-refund-file")
            broken = await client.prompt(session_id, "/broken-twice")
    assert bridge.returncode == 0, bridge.stderr_text
    assert init["protocolVersion"] == 1
    assert client.agent_info["name"] == "acp-bridge"
    assert validate_transcript(client.transcript) >= 20
    assert refund.view().messages == (
        "Looking up order ORD-7781. The book arrived damaged, so I have recorded a full refund.",
        "The refund for order ORD-7781 is recorded in refunds/ORD-7781.txt.",
    )
    assert broken.view().messages == ("Third try: the answer is all here, and you see it once.",)
    assert (ws / "refunds" / "ORD-7781.txt").is_file()
    with EffectLedger(state) as ledger:
        effects = [(r.tool, r.state.value) for r in ledger.records()]
    assert effects == [("write_file", "done")]


async def test_the_demo_shows_three_editors_and_one_refund() -> None:
    lines: list[str] = []
    transcript: list[WireMessage] = []
    with anyio.fail_after(WAIT):
        status = await run_demo(["--no-color"], write=lines.append, transcript=transcript)
    output = "\n".join(lines)
    assert status == 0, output
    assert validate_transcript(transcript) > 0
    assert "\033[" not in output
    for heading in (
        "append-only editor (ignores messageId and _meta)",
        "messageId-aware editor that ignores the reset flag",
        "reset-aware editor (spec/reset-extension.md)",
        "every editor shows the same (no retry, so no reset marker)",
    ):
        assert heading in output
    assert "The stream broke in the middle of a woThe stream broke" in output
    assert "retrying: attempt 2 after stream_interrupted" in output
    assert "workspace now has refunds/ORD-7781.txt (62 bytes)" in output
    assert "effect ledger for this session: 1 effect(s): write_file done" in output
    assert "permission prompts  1 (Write refunds/ORD-7781.txt: allow_once)" in output


async def test_the_demo_json_summary(tmp_path: Path) -> None:
    lines: list[str] = []
    with anyio.fail_after(WAIT):
        status = await run_demo(
            ["--json", "--scenario", "help-desk-refund-file"], write=lines.append
        )
    summary = json.loads("\n".join(lines))
    assert status == 0
    assert summary["ok"] is True
    assert summary["bridge"]["exitCode"] == 0
    (refund,) = summary["scenarios"]
    assert refund["name"] == "help-desk-refund-file"
    assert refund["views"]["reset_aware"]["messages"][0].startswith("Looking up order ORD-7781.")
    assert refund["views"]["naive"]["messages"][0] == "Checking order ORD-7781. Refunding the dam"
    assert refund["resets"] == [{"attempt": 2, "reason": "stream_interrupted"}]
    assert refund["billedAttempts"] == 3
    assert [p["answer"] for p in refund["permissionPrompts"]] == ["allow_once"]
    (effect,) = refund["effects"]
    assert (effect["tool"], effect["state"], effect["step"]) == ("write_file", "done", 0)
    assert len(effect["key"]) == 64
    (call,) = refund["toolCalls"]
    assert call["effectKey"] == effect["key"]
    assert refund["workspaceFiles"] == [{"path": "refunds/ORD-7781.txt", "bytes": 62}]


def test_acp_bridge_demo_from_the_command_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp_bridge", "demo", "--json"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env=isolated_env(tmp_path / "home"),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [s["name"] for s in summary["scenarios"]] == list(DEFAULT_SCENARIOS)
    assert all(s["stopReason"] == "end_turn" for s in summary["scenarios"])
