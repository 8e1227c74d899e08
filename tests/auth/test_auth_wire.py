"""Authentication on the wire (spec/authentication.md): the methods offered, `authenticate`
both ways, `logout`, and a login picked up without a restart; in memory and over stdio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp_schema import AgentWireValidator
from auth.authkit import model_server
from bridge import running_bridge, scripted_config
from subprocess_util import LineProcess, bridge_argv, isolated_env

from acp_bridge.agent import AgentConfig
from acp_bridge.agent._auth import AuthOffer
from acp_bridge.cli._credentials import credentials_path, load_keys, store_key
from acp_bridge.cli._keys import auth_offer, missing_key_vars, provider_key
from acp_bridge.cli._settings import resolve

TERMINAL_CAPS = {"auth": {"terminal": True}}


def _init(caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"protocolVersion": 1, "clientCapabilities": caps or {}}


def _offer(missing: list[str]) -> AuthOffer:
    return AuthOffer(
        provider="openai",
        key_vars=("OPENAI_API_KEY",),
        login_args=("login", "--provider", "openai"),
        missing_now=lambda: tuple(missing),
        forget=lambda: missing.append("OPENAI_API_KEY"),
    )


def _config(tmp_path: Path, offer: AuthOffer) -> AgentConfig:
    return scripted_config(tmp_path / "state", auth=offer)


@pytest.mark.anyio
@pytest.mark.requirement("AUTH-WIRE-001")
async def test_the_terminal_method_only_for_clients_that_enabled_terminal_auth(
    tmp_path: Path,
) -> None:
    for caps, expected in (
        ({}, ["api-key"]),
        ({"auth": {"terminal": False}}, ["api-key"]),
        # The registry's legacy marker is not the schema's capability: no terminal method.
        ({"_meta": {"terminal-auth": True}}, ["api-key"]),
        (TERMINAL_CAPS, ["api-key", "login"]),
    ):
        async with running_bridge(_config(tmp_path, _offer(["OPENAI_API_KEY"]))) as ed:
            result = await ed.call("initialize", _init(caps))
        assert [m["id"] for m in result["authMethods"]] == expected, caps
        assert "type" not in result["authMethods"][0]  # an agent method (schema default)
        assert result["agentCapabilities"]["auth"] == {"logout": {}}
        if len(expected) == 2:
            terminal = result["authMethods"][1]
            assert terminal["type"] == "terminal"
            assert terminal["args"] == ["login", "--provider", "openai"]


@pytest.mark.anyio
@pytest.mark.requirement("AUTH-WIRE-002")
async def test_authenticate_both_ways_and_a_login_needs_no_restart(tmp_path: Path) -> None:
    missing = ["OPENAI_API_KEY"]
    async with running_bridge(_config(tmp_path, _offer(missing))) as ed:
        await ed.call("initialize", _init(TERMINAL_CAPS))
        refused = await ed.request("authenticate", {"methodId": "api-key"})
        error = refused["error"]
        assert error["code"] == -32000
        assert "OPENAI_API_KEY" in error["message"]
        assert "acp-bridge-agent login --provider openai" in error["message"]
        assert error["data"]["env"] == ["OPENAI_API_KEY"]
        assert error["data"]["login"] == "acp-bridge-agent login --provider openai"
        new = await ed.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert new["error"]["code"] == -32000
        terminal = await ed.request("authenticate", {"methodId": "login"})
        assert terminal["error"]["code"] == -32602
        assert "terminal" in terminal["error"]["message"]
        unknown = await ed.request("authenticate", {"methodId": "oauth"})
        assert unknown["error"]["code"] == -32602
        assert "'api-key'" in unknown["error"]["message"]
        missing.clear()  # the user logged in meanwhile, in a terminal
        assert await ed.call("authenticate", {"methodId": "api-key"}) == {}
        await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})


@pytest.mark.anyio
@pytest.mark.requirement("AUTH-SCRIPTED-001")
async def test_the_scripted_model_offers_the_agent_method_and_authenticate_succeeds(
    tmp_path: Path,
) -> None:
    async with running_bridge(scripted_config(tmp_path / "state")) as ed:
        result = await ed.call("initialize", _init())
        (method,) = result["authMethods"]
        assert method["id"] == "api-key"
        assert "needs no key" in method["description"]
        assert await ed.call("authenticate", {"methodId": "api-key"}) == {}
        assert await ed.call("logout", {}) == {}


@pytest.mark.requirement("AUTH-KEY-001")
def test_the_environment_variable_wins_over_the_stored_login(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    settings = resolve({"provider": "openai"}, env, "/dev/null")
    path = credentials_path(env)
    assert provider_key(settings, env, path) == (None, "none")
    assert missing_key_vars(settings, {**env, "OPENAI_API_KEY": ""}) == ("OPENAI_API_KEY",)
    store_key(path, "openai", "sk-stored-111111111111")
    assert provider_key(settings, env, path) == ("sk-stored-111111111111", "login")
    with_env = {**env, "OPENAI_API_KEY": "sk-from-env-22222222"}
    assert provider_key(settings, with_env, path) == ("sk-from-env-22222222", "OPENAI_API_KEY")
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


class _StdioClient:
    def __init__(self, process: LineProcess) -> None:
        self.process = process
        self.validator = AgentWireValidator(strict_roots=True)
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.validator.note_client_message(message)
        self.process.send(message)
        while True:
            reply: dict[str, Any] = json.loads(self.process.read_line())
            self.validator.check(reply)
            if reply.get("id") == self.next_id:
                return reply


@pytest.mark.subprocess
@pytest.mark.requirement("AUTH-WIRE-002")
@pytest.mark.requirement("AUTH-WIRE-003")
@pytest.mark.requirement("AUTH-KEY-001")
def test_over_stdio_a_stored_login_authenticates_and_logout_removes_it(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    path = credentials_path(env)
    with model_server() as server:
        argv = bridge_argv("--provider", "openai", "--base-url", "https://api.example.invalid/v1")
        with LineProcess(argv, env=env) as bridge:
            client = _StdioClient(bridge)
            init = client.request("initialize", _init(TERMINAL_CAPS))["result"]
            assert [m["id"] for m in init["authMethods"]] == ["api-key", "login"]
            login = init["authMethods"][1]
            assert login["args"] == [
                "login",
                "--provider",
                "openai",
                "--base-url",
                "https://api.example.invalid/v1",
            ]
            assert client.request("authenticate", {"methodId": "api-key"})["error"]["code"] == (
                -32000
            )
            store_key(path, "openai", server.key or "")  # what `acp-bridge-agent login` stores
            assert client.request("authenticate", {"methodId": "api-key"})["result"] == {}
            assert client.request("logout", {})["result"] == {}
            assert load_keys(path) == {}
            assert client.request("authenticate", {"methodId": "api-key"})["error"]["code"] == (
                -32000
            )
        assert server.key not in bridge.stderr_text(None)


@pytest.mark.requirement("AUTH-WIRE-003")
def test_the_offer_of_a_configuration_forgets_only_its_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = credentials_path(env)
    store_key(path, "openai", "sk-a-1111111111")
    store_key(path, "gemini", "g-b-2222222222")
    offer = auth_offer(resolve({"provider": "openai"}, env, "/dev/null"))
    assert offer.missing_now is not None
    assert offer.missing_now() == ()
    assert offer.forget is not None
    offer.forget()
    assert load_keys(path) == {"gemini": "g-b-2222222222"}
    assert offer.missing_now() == ("OPENAI_API_KEY",)
