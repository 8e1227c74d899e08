"""A ledger or session store file that cannot be used is named, with the fix (EFFECT-OPEN-001).

Real files in a temporary state directory: a damaged file, one written by a newer acp-bridge,
and (in a mount namespace of its own, so no root is needed) a ledger file on a read-only
mount. Every method that needs the state answers the one `StateDirUnusable` error whose
message names the file (never its full path) and what to do; everything else keeps serving,
and the full story is on stderr.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from subprocess_util import (
    LineProcess,
    bridge_argv,
    isolated_env,
    require_mount_namespace,
    start_session,
)

from acp_bridge.sessions import SCHEMA_VERSION

pytestmark = pytest.mark.requirement("EFFECT-OPEN-001")

PREFIX = "The state directory is unusable: "


def _data(problem: str) -> dict[str, Any]:
    return {
        "reason": "state_dir_unusable",
        "problem": problem,
        "setting": "--state-dir",
        "env": "ACP_BRIDGE_STATE_DIR",
    }


def _damaged(path: Path) -> None:
    path.write_bytes(b"this is not a database\n" * 400)


def _newer(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")


CASES = [
    (
        "effects.sqlite3",
        _damaged,
        "corrupt",
        "its effect ledger effects.sqlite3 is damaged (file is not a database). Restore "
        "effects.sqlite3 and its -wal and -shm files from a backup, or move them out of the "
        "state directory so that a new, empty one is started (every effect the session "
        "journal recorded then counts as outcome unknown)",
    ),
    (
        "effects.sqlite3",
        _newer,
        "newer_schema",
        "its effect ledger effects.sqlite3 has schema 99, newer than the 1 this acp-bridge "
        "knows. Upgrade acp-bridge, or set --state-dir or ACP_BRIDGE_STATE_DIR to another folder",
    ),
    (
        "sessions.sqlite3",
        _damaged,
        "corrupt",
        "its session store sessions.sqlite3 is damaged (file is not a database). Restore "
        "sessions.sqlite3 and its -wal and -shm files from a backup, or move them out of the "
        "state directory so that a new, empty one is started (the sessions stored in it are "
        "then no longer listed or loadable)",
    ),
    (
        "sessions.sqlite3",
        _newer,
        "newer_schema",
        f"its session store sessions.sqlite3 has schema 99, newer than the {SCHEMA_VERSION} this "
        "acp-bridge knows. Upgrade acp-bridge, or set --state-dir or ACP_BRIDGE_STATE_DIR to "
        "another folder",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("filename", "spoil", "problem", "told"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES]
)
async def test_an_unusable_file_is_named_with_the_fix_and_the_rest_serves(
    tmp_path: Path, filename: str, spoil: Any, problem: str, told: str
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    spoil(state / filename)
    before = (state / filename).read_bytes()
    async with running_bridge(scripted_config(state)) as ed:
        await ed.initialize()
        assert await ed.call("authenticate", {"methodId": "api-key"}) == {}
        for method, params in (
            ("session/new", {"cwd": str(tmp_path), "mcpServers": []}),
            ("session/list", {}),
        ):
            reply = await ed.request(method, params)
            error = reply["error"]
            assert error["code"] == -32603, method
            assert error["message"].startswith(PREFIX + told + "; it is checked again"), method
            assert error["data"] == _data(problem)
            assert str(tmp_path) not in json.dumps(error)  # no full path on the wire
        assert (state / filename).read_bytes() == before  # refused, never written
        (state / filename).unlink()  # the user moves it aside: no restart needed
        for suffix in ("-wal", "-shm"):
            (state / f"{filename}{suffix}").unlink(missing_ok=True)
        new = await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert new["sessionId"]


@pytest.mark.subprocess
def test_a_read_only_ledger_file_is_named_with_the_fix(tmp_path: Path) -> None:
    """The state folder is writable; `effects.sqlite3` in it is on a read-only bind mount
    (a mount namespace of the bridge's own: neither root nor chmod, which root ignores)."""
    require_mount_namespace("bind mounts")
    state = tmp_path / "state"
    state.mkdir()
    ledger = state / "effects.sqlite3"
    with sqlite3.connect(ledger) as db:
        db.execute("CREATE TABLE placeholder (x)")
    script = f'L={ledger}; mount --bind "$L" "$L" && mount -o remount,ro,bind "$L" && exec "$@"'
    argv = ["unshare", "-rm", "sh", "-c", script, "sh", *bridge_argv("--state-dir", str(state))]
    init, new, stderr = start_session(argv, isolated_env(tmp_path / "home"), tmp_path)
    assert "result" in init
    error = new["error"]
    assert error["data"] == _data("read_only")
    assert error["message"].startswith(
        PREFIX + "its effect ledger effects.sqlite3 is not writable (attempt to write a readonly "
        "database). Make effects.sqlite3 and its -wal and -shm files writable, or set "
        "--state-dir or ACP_BRIDGE_STATE_DIR to a writable folder with free space"
    ), error
    assert str(tmp_path) not in json.dumps(error)
    assert str(ledger) in stderr  # the full path is for the log
    assert "Traceback" not in stderr


@pytest.mark.subprocess
def test_a_disk_that_fills_mid_turn_names_the_file_and_runs_nothing_more(tmp_path: Path) -> None:
    """The state on a 3 MiB tmpfs of the bridge's own: the model's first command fills it; the
    turn's next journal write fails, the turn ends with the file named and the fix, and the
    second command never runs."""
    require_mount_namespace("tmpfs mounts")
    mount, work = tmp_path / "mnt", tmp_path / "work"
    mount.mkdir()
    work.mkdir()
    fill = f"dd if=/dev/zero of={mount}/fill bs=64k 2>/dev/null; echo filled"
    script = tmp_path / "fill.json"
    steps = [
        [{"tool_call": "run_command", "arguments": {"command": fill}}, {"finish": "auto"}],
        [{"tool_call": "run_command", "arguments": {"command": "echo y >> more.log"}}],
        [{"text": "Done."}, {"finish": "stop"}],
    ]
    steps[1].append({"finish": "auto"})
    calls = [{"attempts": [step]} for step in steps]
    script.write_text(json.dumps({"name": "fill", "description": "fills", "calls": calls}))
    setup = f'mount -t tmpfs -o size=3m tmpfs "{mount}" && exec "$@"'
    argv = [
        *("unshare", "-rm", "sh", "-c", setup, "sh"),
        *bridge_argv("--state-dir", f"{mount}/state", "--script", str(script)),
    ]
    with LineProcess(argv, env=isolated_env(tmp_path / "home")) as bridge:
        messages = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": str(work), "mcpServers": []},
            },
        ]
        bridge.send(messages[0])
        assert "result" in bridge.read_message()
        bridge.send(messages[1])
        session_id = bridge.read_message()["result"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "fill"}]}
        bridge.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
        while True:
            message = bridge.read_message()
            if message.get("method") == "session/request_permission":
                allow = next(o for o in message["params"]["options"] if o["kind"] == "allow_once")
                outcome = {"outcome": "selected", "optionId": allow["optionId"]}
                bridge.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})
            elif message.get("id") == 2:
                break
        bridge.close_stdin()
        bridge.wait_exit()
    error = message["error"]
    assert error["data"] == _data("full")
    assert error["message"].startswith(
        PREFIX + "the disk holding its session store sessions.sqlite3 is full (database or "
        "disk is full). Free space, or set --state-dir or ACP_BRIDGE_STATE_DIR to a writable "
        "folder with free space"
    ), error
    assert str(tmp_path) not in json.dumps(error)
    assert not (work / "more.log").exists()  # nothing more ran once the journal failed
