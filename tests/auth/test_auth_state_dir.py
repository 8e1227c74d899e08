"""An unusable state directory (CONF-STATE-001): one line on stderr before serving, a precise
error with `data` on the methods that need it, and everything else keeps serving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from subprocess_util import (
    bridge_argv,
    isolated_env,
    require_mount_namespace,
    start_session,
)

from acp_bridge.agent._state_dir import check_state_dir

pytestmark = pytest.mark.requirement("CONF-STATE-001")

MESSAGE = (
    "The state directory is unusable: {detail}. Set --state-dir or ACP_BRIDGE_STATE_DIR to a "
    "writable folder with free space"
)


def _data(problem: str) -> dict[str, Any]:
    return {
        "reason": "state_dir_unusable",
        "problem": problem,
        "setting": "--state-dir",
        "env": "ACP_BRIDGE_STATE_DIR",
    }


@pytest.mark.anyio
async def test_a_file_in_its_place_refuses_what_needs_state_and_serves_the_rest(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    state.write_text("not a folder")
    async with running_bridge(scripted_config(state)) as ed:
        await ed.initialize()
        assert await ed.call("authenticate", {"methodId": "api-key"}) == {}
        for method, params in (
            ("session/new", {"cwd": str(tmp_path), "mcpServers": []}),
            ("session/list", {}),
            ("session/load", {"sessionId": "s", "cwd": str(tmp_path), "mcpServers": []}),
            ("session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}),
        ):
            reply = await ed.request(method, params)
            assert reply["error"]["code"] == -32603, method
            assert reply["error"]["message"].startswith(
                MESSAGE.format(detail="it is a file, not a folder")
            )
            assert reply["error"]["data"] == _data("not_a_directory")
            assert str(state) not in reply["error"]["message"]  # no full path on the wire
        state.unlink()  # the user fixes it: no restart needed
        new = await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert new["sessionId"]


@pytest.mark.subprocess
def test_the_command_says_it_once_on_stderr_and_keeps_serving(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.write_text("")
    env = isolated_env(tmp_path / "home")
    init, new, stderr = start_session(bridge_argv("--state-dir", str(state)), env, tmp_path)
    assert init["result"]["protocolVersion"] == 1
    assert new["error"]["data"] == _data("not_a_directory")
    assert stderr.splitlines() == [
        "acp-bridge: "
        + MESSAGE.format(detail="it is a file, not a folder")
        + f" (default ~/.local/state/acp-bridge); it is checked again at the next request "
        f"that needs it ({state})"
    ]


def _in_tmpfs(tmp_path: Path, setup: str) -> list[str]:
    """The bridge with its state on a tiny tmpfs of its own (a mount namespace: no root
    needed), prepared by `setup` (sh, with $D the mount point)."""
    require_mount_namespace("tmpfs mounts")
    mount = tmp_path / "mnt"
    mount.mkdir()
    script = f'D={mount}; mount -t tmpfs -o size=256k tmpfs "$D" && {setup} && exec "$@"'
    return [
        "unshare",
        "-rm",
        "sh",
        "-c",
        script,
        "sh",
        *bridge_argv("--state-dir", f"{mount}/state"),
    ]


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("setup", "problem", "detail"),
    [
        (
            'mkdir "$D/state" && mount -o remount,ro "$D"',
            "read_only",
            "it is not writable (Read-only file system)",
        ),
        (
            'mkdir "$D/state" && (dd if=/dev/zero of="$D/fill" bs=4k 2>/dev/null || true)',
            "full",
            "the disk holding it is full (No space left on device)",
        ),
    ],
)
def test_read_only_and_full_disks_are_named(
    tmp_path: Path, setup: str, problem: str, detail: str
) -> None:
    argv = _in_tmpfs(tmp_path, setup)
    init, new, stderr = start_session(argv, isolated_env(tmp_path / "home"), tmp_path)
    assert "result" in init
    error = new["error"]
    assert error["data"] == _data(problem)
    assert error["message"].startswith(MESSAGE.format(detail=detail))
    assert stderr.startswith("acp-bridge: " + MESSAGE.format(detail=detail)), stderr
    assert "Traceback" not in stderr


def test_the_check_creates_a_missing_folder_and_names_one_it_cannot_create(
    tmp_path: Path,
) -> None:
    assert check_state_dir(tmp_path / "a" / "b") is None
    assert (tmp_path / "a" / "b").is_dir()
    (tmp_path / "f").write_text("")
    problem = check_state_dir(tmp_path / "f" / "state")
    assert problem is not None
    assert problem.problem in ("not_a_directory", "cannot_create")
