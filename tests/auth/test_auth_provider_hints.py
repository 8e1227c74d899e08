"""Provider failures name the URL asked and the fix (CONF-ERR-003): in the model stream's
errors, in the turn's give-up message, and in `acp-bridge-agent doctor` over real loopback
servers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from auth.authkit import closed_port, model_server
from loopback_http import LoopbackServer, drain, json_reply
from subprocess_util import isolated_env, run_bounded

from acp_bridge.providers import FaultKind, ModelRequest, ModelStreamError, UserTurn
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider
from acp_bridge.turn import GiveUp, RetryPolicy, TurnFailed

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])
ERROR_BODY = {"error": {"message": "Incorrect API key provided", "type": "invalid_api_key"}}


async def _stream_error(base_url: str, status: int | None = None) -> ModelStreamError:
    async def go(url: str) -> ModelStreamError:
        options = HttpProviderOptions("gpt-test", base_url=url, api_key="sk-wrong-0000000000")
        async with OpenAIProvider(options) as provider:
            _, error = await drain(provider.stream(REQUEST))
        assert error is not None
        return error

    if status is None:
        return await go(base_url)
    async with LoopbackServer([json_reply(status, ERROR_BODY)]) as server:
        return await go(server.base_url + base_url)


@pytest.mark.anyio
@pytest.mark.requirement("CONF-ERR-003")
async def test_a_404_shows_the_url_asked_and_suggests_the_missing_v1() -> None:
    error = await _stream_error("", 404)
    assert error.kind is FaultKind.NOT_FOUND
    assert "provided. Nothing at http://127.0.0.1:" in error.message
    assert "/chat/completions (HTTP 404): the base URL probably lacks /v1" in error.message
    assert "try --base-url ending in /v1" in error.message


@pytest.mark.anyio
@pytest.mark.requirement("CONF-ERR-003")
async def test_a_401_names_the_key_variable_and_the_login_command() -> None:
    error = await _stream_error("/v1", 401)
    assert error.kind is FaultKind.AUTH_FAILED
    assert (
        "refused the API key (HTTP 401): set OPENAI_API_KEY, or run `acp-bridge-agent login "
        in (error.message)
    )
    assert "sk-wrong" not in error.message


@pytest.mark.anyio
@pytest.mark.requirement("CONF-ERR-003")
async def test_a_refused_local_connection_says_no_server_is_running_there() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    error = await _stream_error(url)
    assert error.kind is FaultKind.CONNECTION_FAILED
    assert f"no server is running at {url}/chat/completions (connection refused): start the " in (
        error.message
    )
    failed = TurnFailed.from_error(
        error, GiveUp.ATTEMPTS_EXHAUSTED, attempts=4, model_call=1, policy=RetryPolicy()
    )
    assert "trying again later may help" not in failed.message
    assert failed.message.endswith(
        "Gave up after the maximum attempts; fix what the message names, then send the prompt "
        "again."
    )


def _doctor(tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    out = run_bounded(
        [sys.executable, "-m", "acp_bridge", *args, "doctor"],
        env=isolated_env(tmp_path / "home", {"OPENAI_API_KEY": "sk-test-good-0000000000"}),
    )
    assert "Traceback" not in out.stderr.decode()
    return out.returncode, out.stdout.decode().splitlines()


def _line(lines: list[str], name: str) -> str:
    (line,) = [x for x in lines if x.split(":", 1)[0].split()[-1:] == [name]]
    return line


@pytest.mark.subprocess
@pytest.mark.requirement("CONF-DOCTOR-001")
@pytest.mark.requirement("CONF-ERR-003")
def test_doctor_against_real_loopback_servers(tmp_path: Path) -> None:
    with model_server() as server:
        status, lines = _doctor(tmp_path, "--provider", "openai", "--base-url", server.base_url)
        assert status == 0, lines
        assert (
            _line(lines, "provider") == f"ok    provider: {server.base_url}/models lists 2 model(s)"
        )
        assert _line(lines, "key") == "ok    key: openai key from OPENAI_API_KEY"
        assert _line(lines, "model").startswith("warn  model: 'gpt-4.1' is not in the provider")
        assert lines[-1] == "everything acp-bridge needs is in place"

        root = f"http://127.0.0.1:{server.port}"
        status, lines = _doctor(tmp_path, "--provider", "openai", "--base-url", root)
        assert status == 1
        assert _line(lines, "provider") == (
            f"FAIL  provider: nothing at {root}/models (HTTP 404): the base URL probably lacks "
            "/v1; try --base-url ending in /v1, or check --model"
        )
        https = f"https://127.0.0.1:{server.port}/v1"
        status, lines = _doctor(tmp_path, "--provider", "openai", "--base-url", https)
        assert status == 1
        assert _line(lines, "provider").startswith(
            f"FAIL  provider: TLS failed with {https}/models"
        )
        assert "the server may speak plain HTTP (use http://)" in _line(lines, "provider")

    with model_server(key="sk-another-key-000000") as server:
        status, lines = _doctor(tmp_path, "--provider", "openai", "--base-url", server.base_url)
        assert status == 1
        assert _line(lines, "provider") == (
            f"FAIL  provider: {server.base_url}/models refused the API key (HTTP 401): set "
            "OPENAI_API_KEY, or run `acp-bridge-agent login --provider openai`"
        )

    refused = f"http://127.0.0.1:{closed_port()}/v1"
    status, lines = _doctor(tmp_path, "--base-url", refused)
    assert status == 1
    assert _line(lines, "provider") == (
        f"FAIL  provider: no server is running at {refused}/models (connection refused): start "
        "the server, or fix --base-url"
    )
    assert any(x.startswith("warn  configuration: --base-url ") for x in lines), lines


@pytest.mark.subprocess
@pytest.mark.requirement("CONF-DOCTOR-001")
def test_doctor_names_a_missing_key_a_bad_state_dir_and_a_bad_config(tmp_path: Path) -> None:
    state = tmp_path / "state-file"
    state.write_text("")
    out = run_bounded(
        [
            sys.executable,
            "-m",
            "acp_bridge",
            "--provider",
            "gemini",
            "--base-url",
            "http://no-such-host.invalid/v1beta",
            "--state-dir",
            str(state),
            "doctor",
        ],
        env=isolated_env(tmp_path / "home"),
    )
    lines = out.stdout.decode().splitlines()
    assert out.returncode == 1
    assert _line(lines, "key") == (
        "FAIL  key: the gemini provider needs an API key: set GEMINI_API_KEY or GOOGLE_API_KEY, "
        "or run `acp-bridge-agent login --provider gemini`"
    )
    assert _line(lines, "provider").startswith(
        "FAIL  provider: cannot resolve the host 'no-such-host.invalid'"
    )
    assert _line(lines, "directory").startswith(
        f"FAIL  state directory: {state}: The state directory is unusable: it is a file"
    )
    assert lines[-1] == "3 problem(s) found"
    config = tmp_path / "bad.toml"
    config.write_text("colour = 1\n")
    out = run_bounded(
        [sys.executable, "-m", "acp_bridge", "--config", str(config), "doctor"],
        env=isolated_env(tmp_path / "home"),
    )
    assert out.returncode == 1
    assert out.stdout.decode().startswith(
        f"FAIL  configuration: config file {config}: unknown key(s) colour; the allowed keys"
    )


@pytest.mark.anyio
@pytest.mark.requirement("CONF-ERR-003")
async def test_a_shortened_provider_message_never_ends_in_an_ellipsis_and_a_full_stop() -> None:
    body = {"error": {"message": "the request was bad " * 40, "type": "invalid_request_error"}}
    async with LoopbackServer([json_reply(400, body)]) as server:
        options = HttpProviderOptions("gpt-test", base_url=server.base_url + "/v1")
        async with OpenAIProvider(options) as provider:
            _, error = await drain(provider.stream(REQUEST))
    assert error is not None
    assert error.message.endswith("…")
    for give_up in (GiveUp.NOT_RETRYABLE, GiveUp.ATTEMPTS_EXHAUSTED):
        failed = TurnFailed.from_error(
            error, give_up, attempts=1, model_call=1, policy=RetryPolicy()
        )
        assert "…." not in failed.message
        assert "… " in failed.message
