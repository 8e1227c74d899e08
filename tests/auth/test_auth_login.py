"""`acp-bridge-agent login` / `logout` driven through a real pseudo-terminal
(spec/authentication.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from auth.authkit import PtyProcess, closed_port, model_server
from subprocess_util import isolated_env, run_bounded

from acp_bridge.cli._credentials import credentials_path, load_keys, store_key

pytestmark = [pytest.mark.subprocess]

GOOD = "sk-test-good-0000000000"


def _login(env: dict[str, str], *args: str) -> PtyProcess:
    return PtyProcess([sys.executable, "-m", "acp_bridge", *args, "login"], env)


@pytest.mark.requirement("AUTH-LOGIN-001")
def test_login_picks_the_provider_hides_the_key_tests_it_and_stores_it_0600(
    tmp_path: Path,
) -> None:
    env = isolated_env(tmp_path / "home")
    with model_server(key=GOOD) as server:
        # The configured invocation with the terminal method's args appended, as a client does.
        login = _login(env, "--provider", "scripted")
        login.expect("Provider [")
        login.send("1")
        login.expect("[Enter: https://api.openai.com/v1]: ")
        login.send(server.base_url)
        login.expect("(input hidden): ")
        login.send(GOOD)
        status = login.wait()
    assert status == 0, login.text
    assert GOOD not in login.text  # hidden input: the terminal never echoed the key
    assert "Logged in to openai" in login.text
    path = credentials_path(env)
    assert load_keys(path) == {"openai": GOOD}
    assert path.stat().st_mode & 0o777 == 0o600
    (models_request,) = server.requests
    assert models_request[0] == "/v1/models"
    assert models_request[1]["authorization"] == f"Bearer {GOOD}"


@pytest.mark.requirement("AUTH-LOGIN-001")
def test_a_refused_key_or_an_unreachable_provider_stores_nothing(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    with model_server(key=GOOD) as server:
        login = _login(env, "--provider", "openai", "--base-url", server.base_url)
        login.expect("(input hidden): ")
        login.send("sk-wrong-99999999999")
        assert login.wait() == 1
    assert "the key was refused" in login.text
    assert "OPENAI_API_KEY" in login.text
    assert "Nothing stored" in login.text
    url = f"http://127.0.0.1:{closed_port()}/v1"
    login = _login(env, "--provider", "openai", "--base-url", url)
    login.expect("(input hidden): ")
    login.send(GOOD)
    assert login.wait() == 1
    assert f"no server is running at {url}/models" in login.text
    assert not credentials_path(env).exists()


@pytest.mark.requirement("AUTH-LOGOUT-001")
@pytest.mark.requirement("AUTH-KEY-001")
def test_logout_removes_the_stored_key_and_says_the_variable_still_wins(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    path = credentials_path(env)
    store_key(path, "openai", GOOD)
    store_key(path, "anthropic", "sk-ant-1111111111")
    out = run_bounded(
        [sys.executable, "-m", "acp_bridge", "--provider", "openai", "logout"],
        env={**env, "OPENAI_API_KEY": "sk-env-2222222222"},
    )
    assert out.returncode == 0
    text = out.stderr.decode()
    assert "removed the stored key(s) of openai" in text
    assert "OPENAI_API_KEY is still set" in text
    assert load_keys(path) == {"anthropic": "sk-ant-1111111111"}
    out = run_bounded([sys.executable, "-m", "acp_bridge", "logout"], env=env)
    assert out.returncode == 0
    assert load_keys(path) == {}
    assert not path.exists()
    assert os.listdir(path.parent) == []  # no temporary file left behind


@pytest.mark.requirement("AUTH-LOGIN-001")
def test_a_key_piped_into_login_is_tested_and_stored_without_a_terminal(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    with model_server(key=GOOD) as server:
        out = run_bounded(
            [
                sys.executable,
                "-m",
                "acp_bridge",
                "login",
                "--provider",
                "openai",
                "--base-url",
                server.base_url,
            ],
            env=env,
            input=f"{GOOD}\n".encode(),
        )
    assert out.returncode == 0, out
    text = out.stderr.decode()
    assert "Warning" not in text
    assert GOOD not in text
    assert "Logged in to openai" in text
    assert load_keys(credentials_path(env)) == {"openai": GOOD}
