"""acpx persistent sessions against `python -m acp_bridge`: create, reconnect, list.

`acpx sessions new` makes the session in one bridge process; each later `acpx "prompt"` starts
a new bridge process that reconnects to it. acpx 0.19.1 reconnects with `session/resume`
when the agent advertises it (else `session/load`), so these runs go through resume; the
load path with a real process is `test_sessions_crash.py`'s. Every message the bridge wrote
in the transcripts is validated against the official ACP v1 schema.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_schema import AgentWireValidator, agent_sent_defs, client_sent_defs
from subprocess_util import (
    acpx_executable,
    bridge_argv,
    isolated_env,
    run_bounded,
    split_transcript,
)

from acp_bridge.sessions import SessionStore

pytestmark = [pytest.mark.npm, pytest.mark.subprocess]

TIMEOUT = 120.0
# Idle seconds before acpx's queue owner ends itself; the test ends it sooner (Acpx.release).
OWNER_TTL = 120


def _methods(defs: Any) -> frozenset[str]:
    return frozenset(defs.requests) | frozenset(defs.notifications)


class Acpx:
    def __init__(self, tmp_path: Path) -> None:
        self.workspace = tmp_path / "work"
        self.workspace.mkdir()
        self.state = tmp_path / "state"
        self.env = isolated_env(tmp_path / "home")
        self.queues = tmp_path / "home" / ".acpx" / "queues"
        self.agent = shlex.join(bridge_argv("--state-dir", str(self.state)))

    def run(self, *args: str) -> str:
        argv = [
            str(acpx_executable()),
            "--agent",
            self.agent,
            "--cwd",
            str(self.workspace),
            "--timeout",
            str(int(TIMEOUT) - 30),
            *args,
        ]
        result = run_bounded(argv, timeout=TIMEOUT, env=self.env, cwd=self.workspace)
        assert result.returncode == 0, result.stderr.decode(errors="replace")[-3000:]
        return result.stdout.decode()

    def prompt(self, text: str) -> list[dict[str, Any]]:
        """One prompt in its own acpx invocation: the transcript, every agent message valid."""
        out = self.run(
            "--ttl", str(OWNER_TTL), "--approve-all", "--format", "json", "--json-strict", text
        )
        wire = split_transcript(
            out.splitlines(), _methods(agent_sent_defs()), _methods(client_sent_defs())
        )
        validator = AgentWireValidator(strict_roots=True)
        for entry in wire:
            if entry.sender == "client":
                validator.note_client_message(entry.message)
            else:
                validator.check(entry.message)
        return [{"sender": e.sender, **e.message} for e in wire]

    def release(self, session_id: str) -> None:
        """Ends the session's processes, acpx's queue owner and the bridge it runs, and waits
        (bounded, no polling) until both have exited, so the next prompt starts both anew.

        A prompt runs in a *queue owner*, a detached acpx process advertised by a lease file
        (~/.acpx/queues/<key>.lock) that stays for `--ttl` seconds of idleness. Its idle end
        is a race for the next prompt: shutting down, it first refuses requests
        (`QUEUE_OWNER_CLOSED`), then closes the bridge, its socket, and only then deletes the
        lease, so a prompt started after the bridge exited can still find the lease and be
        refused; and a TTL short enough to wait out is one a loaded machine can miss before
        the first prompt arrives (the owner then shuts down under it, same error). So the
        TTL is long and the owner is ended here with SIGTERM, which acpx handles as a graceful
        shutdown; its exit (after deleting its lease) is what the next prompt needs.
        """
        for lease in sorted(self.queues.glob("*.lock")):
            try:
                pid = json.loads(lease.read_text())["pid"]
            except FileNotFoundError:
                continue  # released meanwhile
            _end_process(pid, f"acpx's queue owner (lease {lease.name})", signal.SIGTERM)
        with SessionStore(self.state) as store:
            pid = store.owned_by(session_id)
        if pid is not None:
            _end_process(pid, f"the bridge that owns {session_id}", None)
        assert not list(self.queues.glob("*.lock")), "a queue owner exited keeping its lease"


def _end_process(pid: int, what: str, send: signal.Signals | None) -> None:
    """Sends `send` (if any) to `pid` through a pidfd (never to a reused pid) and waits for
    its exit, at most 60 s."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        if send is not None:
            try:
                signal.pidfd_send_signal(handle, send)
            except ProcessLookupError:
                return
        ready, _, _ = select.select([handle], [], [], 60)
        assert ready, f"{what} (pid {pid}) did not exit within 60 s"
    finally:
        os.close(handle)


@pytest.fixture
def acpx(tmp_path: Path) -> Iterator[Acpx]:
    client = Acpx(tmp_path)
    try:
        yield client
    finally:  # no queue owner outlives the test, also when it failed half-way
        for lease in client.queues.glob("*.lock"):
            with contextlib.suppress(OSError, ValueError, KeyError):
                os.kill(json.loads(lease.read_text())["pid"], signal.SIGTERM)


def _requests(wire: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    return [m for m in wire if m["sender"] == "client" and m.get("method") == method]


def _result_of(wire: list[dict[str, Any]], request: dict[str, Any]) -> dict[str, Any]:
    (answer,) = [
        m for m in wire if m["sender"] == "agent" and "method" not in m and m["id"] == request["id"]
    ]
    result: dict[str, Any] = answer["result"]
    return result


@pytest.mark.requirement("SESS-045")
@pytest.mark.requirement("REL-003")
def test_acpx_sessions_new_then_each_prompt_reconnects(acpx: Acpx) -> None:
    session_id = acpx.run("sessions", "new").split()[-1]
    assert session_id.startswith("sess_")

    first = acpx.prompt("/help-desk-refund-file")
    (resume,) = _requests(first, "session/resume")
    assert resume["params"]["sessionId"] == session_id
    assert _requests(first, "session/new") == []
    (prompt,) = _requests(first, "session/prompt")
    result = _result_of(first, prompt)
    assert result["stopReason"] == "end_turn"
    assert result["_meta"]["acpBridge"]["turnId"] == f"{session_id}-turn1"
    assert (acpx.workspace / "refunds" / "ORD-7781.txt").exists()

    acpx.release(session_id)  # the next prompt starts a new queue owner and bridge
    second = acpx.prompt("/hello and again")
    (resume,) = _requests(second, "session/resume")
    assert resume["params"]["sessionId"] == session_id
    (prompt,) = _requests(second, "session/prompt")
    assert _result_of(second, prompt)["_meta"]["acpBridge"]["turnId"] == f"{session_id}-turn2"

    listed = json.loads(acpx.run("--format", "json", "sessions", "list").splitlines()[-1])
    (info,) = listed["sessions"]
    assert (info["sessionId"], info["title"], info["cwd"]) == (
        session_id,
        "/help-desk-refund-file",
        str(acpx.workspace),
    )
