"""A raw client: `python -m acp_bridge` driven through a pipe with bytes and lines only.

Nothing from `acp_bridge` runs on the client side. Every line the bridge writes must be one
JSON object ending in `\\n` that validates against the official ACP v1 schema (tests/acp_schema.py),
malformed input gets its exact JSON-RPC error and the bridge keeps serving, and stdout stays pure
JSON-RPC whatever the bridge's own code prints or logs, whether stdout is a pipe, a regular file
or a terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import sys
import textwrap
import tty
from pathlib import Path
from typing import Any

import pytest
from acp_schema import AgentWireValidator
from subprocess_util import LineProcess, bridge_argv, isolated_env

pytestmark = [pytest.mark.subprocess]

INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}


class RawClient:
    """Line I/O over a `LineProcess`, checking every line the bridge writes as it arrives."""

    def __init__(self, process: LineProcess, validator: AgentWireValidator) -> None:
        self.process = process
        self.validator = validator
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        self.validator.note_client_message(message)
        self.process.send(message)

    def request(self, method: str, params: Any) -> int:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def receive(self) -> dict[str, Any]:
        return check_line(self.process.read_line(), self.validator)

    def response(self, request_id: Any) -> dict[str, Any]:
        """Reads until the response to `request_id`; notifications are kept."""
        while True:
            message = self.receive()
            if "method" in message:
                assert "id" not in message, f"the bridge asked something unexpected: {message}"
                self.notifications.append(message)
            elif message.get("id") == request_id:
                return message
            else:
                raise AssertionError(f"a response to another request: {message}")

    def call(self, method: str, params: Any) -> dict[str, Any]:
        return self.response(self.request(method, params))

    def updates(self, session_id: str) -> list[dict[str, Any]]:
        return [
            n["params"]["update"]
            for n in self.notifications
            if n["method"] == "session/update" and n["params"]["sessionId"] == session_id
        ]


def check_line(line: bytes, validator: AgentWireValidator) -> dict[str, Any]:
    """One wire line: a single compact JSON object, UTF-8, `\\n`-terminated, valid ACP."""
    assert line.endswith(b"\n"), f"a line without its newline: {line!r}"
    body = line[:-1]
    assert b"\n" not in body, f"a raw newline inside a message: {line!r}"
    assert not body.endswith(b"\r"), f"a CRLF line ending: {line!r}"
    try:
        message = json.loads(body.decode("utf-8"))
    except ValueError:
        raise AssertionError(f"stdout carried a line that is not JSON: {line!r}") from None
    assert isinstance(message, dict), f"not a JSON object: {line!r}"
    validator.check(message)
    return message


def result_of(response: dict[str, Any]) -> dict[str, Any]:
    assert "result" in response, f"an error instead of a result: {response}"
    result: dict[str, Any] = response["result"]
    return result


def message_text(updates: list[dict[str, Any]]) -> str:
    return "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )


def start_session(client: RawClient, cwd: Path) -> str:
    initialized = client.response(_send_initialize(client))
    assert result_of(initialized)["protocolVersion"] == 1
    created = client.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    session_id = result_of(created)["sessionId"]
    assert isinstance(session_id, str)
    return session_id


def _send_initialize(client: RawClient) -> int:
    return client.request("initialize", INITIALIZE["params"])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path / "home")


@pytest.mark.requirement("EXT-001")
@pytest.mark.requirement("EXT-002")
def test_raw_client_completes_initialize_new_and_prompt(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    validator = AgentWireValidator(strict_roots=True)
    argv = bridge_argv("--state-dir", str(tmp_path / "state"))
    with LineProcess(argv, env=env, cwd=workspace) as bridge:
        client = RawClient(bridge, validator)
        session_id = start_session(client, workspace)
        done = client.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "from a raw client"}]},
        )
        assert result_of(done)["stopReason"] == "end_turn"
        text = message_text(client.updates(session_id))
        assert text.startswith("Hello! You said: “from a raw client”. ")
        kinds = {u["sessionUpdate"] for u in client.updates(session_id)}
        assert "available_commands_update" in kinds
        bridge.close_stdin()
        assert bridge.read_to_eof() == []
        assert bridge.wait_exit() == 0
    # initialize, session/new, session/prompt responses and every notification were checked.
    assert validator.checked == 3 + len(client.notifications)


# One malformed input each; the bridge answers it exactly and then serves a valid session/new.
MALFORMED = [
    pytest.param(b'{"jsonrpc": "2.0", "id": 3, oops\n', -32700, None, id="not-json"),
    pytest.param(b'\xff\xfe{"jsonrpc": "2.0"}\n', -32700, None, id="invalid-utf8"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"pad":"' + b"x" * 2000 + b'"}}\n',
        -32700,
        None,
        id="oversize-line",
    ),
    pytest.param(
        b'{"jsonrpc":"1.0","id":7,"method":"initialize","params":{"protocolVersion":1}}\n',
        -32600,
        7,
        id="wrong-jsonrpc",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":8,"method":"session/bogus","params":{}}\n',
        -32601,
        8,
        id="unknown-method",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"one"}}\n',
        -32602,
        9,
        id="bad-params",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":10,"method":"session/new",'
        b'"params":{"cwd":"relative/dir","mcpServers":[]}}\n',
        -32602,
        10,
        id="relative-cwd",
    ),
]


@pytest.mark.requirement("EXT-003")
@pytest.mark.parametrize(("line", "code", "answer_id"), MALFORMED)
def test_malformed_input_gets_its_exact_error_and_serving_goes_on(
    tmp_path: Path,
    workspace: Path,
    env: dict[str, str],
    line: bytes,
    code: int,
    answer_id: int | None,
) -> None:
    validator = AgentWireValidator(strict_roots=True)
    argv = bridge_argv("--state-dir", str(tmp_path / "state"), "--max-line-bytes", "1024")
    with LineProcess(argv, env=env, cwd=workspace) as bridge:
        client = RawClient(bridge, validator)
        client.response(_send_initialize(client))
        with contextlib.suppress(ValueError):  # not JSON: nothing to match a response to
            validator.note_client_message(line)
        bridge.send_bytes(line)
        error = client.receive()
        assert error["id"] == answer_id
        assert error["error"]["code"] == code, error
        assert "Traceback" not in json.dumps(error)
        # The very next valid request is served normally.
        created = client.call("session/new", {"cwd": str(workspace), "mcpServers": []})
        assert result_of(created)["sessionId"]


# Runs the real command line with hooks that make the bridge's own code noisy: while it builds
# its configuration (provider, tools; a chatty library would speak here) and during a prompt
# (whenever the scripted model is asked for a stream), through every route to fd 1 a library
# might take.
NOISY_BRIDGE = textwrap.dedent(
    """
    import logging, os, sys
    import acp_bridge.cli._run as run_module
    from acp_bridge.cli import main
    from acp_bridge.providers.scripted import ScriptedProvider

    def make_noise(when):
        print(f"NOISE print {when}")
        sys.stdout.write(f"NOISE sys.stdout.write {when}\\n")
        sys.stdout.flush()
        os.write(1, f"NOISE os.write(1) {when}\\n".encode())
        os.system(f"echo NOISE child process {when}")
        logging.getLogger("acp_bridge.noise").warning("NOISE logging %s", when)

    if "--noise-in-config" in sys.argv:
        sys.argv.remove("--noise-in-config")
        build_config = run_module.build_config
        def noisy_build_config(*args, **kwargs):
            make_noise("while building the configuration")
            return build_config(*args, **kwargs)
        run_module.build_config = noisy_build_config

    select = ScriptedProvider.select
    def noisy_select(self, request):
        make_noise("during a prompt")
        return select(self, request)
    ScriptedProvider.select = noisy_select

    sys.exit(main(sys.argv[1:]))
    """
)


def _noisy_turn(tmp_path: Path, workspace: Path, env: dict[str, str], *flags: str) -> str:
    """One turn of the noisy bridge; every stdout line checked. Returns its stderr."""
    argv = [
        sys.executable,
        "-c",
        NOISY_BRIDGE,
        "--state-dir",
        str(tmp_path / "state"),
        *flags,
    ]
    validator = AgentWireValidator(strict_roots=True)
    with LineProcess(argv, env=env, cwd=workspace) as bridge:
        client = RawClient(bridge, validator)
        session_id = start_session(client, workspace)
        done = client.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "/hello noisy"}]},
        )
        assert result_of(done)["stopReason"] == "end_turn"
        assert "You said: “noisy”" in message_text(client.updates(session_id))
        bridge.close_stdin()
        for line in bridge.read_to_eof():
            check_line(line, validator)
        assert bridge.wait_exit() == 0
        stderr = bridge.stderr_text(limit=None)
    assert all(b"NOISE" not in line for line in bridge.lines)
    # The noise happened, and went to stderr instead.
    for route in ("print", "sys.stdout.write", "os.write(1)", "child process", "logging"):
        assert f"NOISE {route} during a prompt" in stderr, stderr
    return stderr


@pytest.mark.requirement("EXT-004")
def test_stdout_stays_json_when_bridge_code_prints_and_logs_during_a_prompt(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    _noisy_turn(tmp_path, workspace, env)


@pytest.mark.requirement("EXT-004")
def test_stdout_stays_json_when_bridge_code_prints_and_logs_while_building_its_config(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    stderr = _noisy_turn(tmp_path, workspace, env, "--noise-in-config")
    for route in ("print", "sys.stdout.write", "os.write(1)", "child process", "logging"):
        assert f"NOISE {route} while building the configuration" in stderr, stderr


@pytest.mark.requirement("EXT-005")
def test_stdout_redirected_to_a_regular_file(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    out_path = tmp_path / "stdout.jsonl"
    argv = bridge_argv("--state-dir", str(tmp_path / "state"))
    new_session = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": str(workspace), "mcpServers": []},
    }
    with (
        out_path.open("wb") as out,
        LineProcess(argv, env=env, cwd=workspace, stdout=out) as bridge,
    ):
        # Pipelined, as a client may: the bridge answers in order and drains at end of input.
        bridge.send(INITIALIZE)
        bridge.send(new_session)
        bridge.close_stdin()
        assert bridge.wait_exit() == 0
    lines = out_path.read_bytes().splitlines(keepends=True)
    validator = AgentWireValidator(strict_roots=True)
    validator.note_client_message(INITIALIZE)
    validator.note_client_message(new_session)
    messages = [check_line(line, validator) for line in lines]
    responses = [m for m in messages if "method" not in m]
    assert [m["id"] for m in responses] == [0, 1]
    assert result_of(responses[0])["protocolVersion"] == 1
    assert result_of(responses[1])["sessionId"]


@pytest.mark.requirement("EXT-005")
def test_stdout_is_a_terminal(tmp_path: Path, workspace: Path, env: dict[str, str]) -> None:
    master, slave = pty.openpty()
    tty.setraw(slave)  # bytes through unchanged (no "\n" -> "\r\n"), as on a pipe
    validator = AgentWireValidator(strict_roots=True)
    argv = bridge_argv("--state-dir", str(tmp_path / "state"))
    with (
        os.fdopen(slave, "wb", buffering=0) as slave_file,
        LineProcess(argv, env=env, cwd=workspace, stdout=slave_file, reader=master) as bridge,
    ):
        slave_file.close()  # the child holds its own copy
        client = RawClient(bridge, validator)
        session_id = start_session(client, workspace)
        done = client.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "on a tty"}]},
        )
        assert result_of(done)["stopReason"] == "end_turn"
        assert "You said: “on a tty”" in message_text(client.updates(session_id))


@pytest.mark.requirement("EXT-006")
def test_a_last_line_without_newline_is_answered_at_end_of_input(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    validator = AgentWireValidator(strict_roots=True)
    argv = bridge_argv("--state-dir", str(tmp_path / "state"))
    with LineProcess(argv, env=env, cwd=workspace) as bridge:
        client = RawClient(bridge, validator)
        session_id = start_session(client, workspace)
        prompt = {
            "jsonrpc": "2.0",
            "id": 42,
            "method": "session/prompt",
            "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "last"}]},
        }
        validator.note_client_message(prompt)
        bridge.send_bytes(json.dumps(prompt).encode())  # no trailing newline
        bridge.close_stdin()
        done = client.response(42)
        assert result_of(done)["stopReason"] == "end_turn"
        assert "You said: “last”" in message_text(client.updates(session_id))
        for line in bridge.read_to_eof():
            check_line(line, validator)
        assert bridge.wait_exit() == 0
