"""Every configuration error is one line naming the setting and the fix (spec/configuration.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from auth.authkit import PtyProcess
from subprocess_util import bridge_argv, isolated_env, run_bounded, start_session

pytestmark = [pytest.mark.subprocess]


def _fails(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    out = run_bounded(bridge_argv(*args), env={**isolated_env(tmp_path / "home"), **(env or {})})
    assert out.returncode == 2, out
    assert out.stdout == b""
    text = out.stderr.decode()
    assert "Traceback" not in text
    assert text.count("\n") == 1, text
    assert text.startswith("acp-bridge: "), text
    return text


@pytest.mark.requirement("CONF-ERR-001")
@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (
            ("--max-line-bytes", "0"),
            {},
            "flag --max-line-bytes: must be at least 1024, got 0; the default is 52428800",
        ),
        (("--max-line-bytes", "-5"), {}, "flag --max-line-bytes: must be at least 1024, got -5"),
        (
            (),
            {"ACP_BRIDGE_MAX_ATTEMPTS": "many"},
            "environment variable ACP_BRIDGE_MAX_ATTEMPTS: 'many' is not a whole number; "
            "the default is 4",
        ),
        (
            ("--trace", "/nonexistent-dir/trace.ndjson"),
            {},
            "cannot open the trace file '/nonexistent-dir/trace.ndjson' (--trace): No such file "
            "or directory; give a file path in an existing, writable folder",
        ),
        (
            ("--provider", "scripted", "--base-url", "http://127.0.0.1:1/v1"),
            {},
            "--base-url (from flag) does not apply to the scripted model (provider from flag); "
            "pass --provider openai",
        ),
        (
            ("--provider", "openai", "--script", "x.json"),
            {},
            "--script only applies to --provider scripted (the provider is openai, from flag)",
        ),
    ],
)
def test_bad_settings_get_one_line_naming_the_setting_and_the_fix(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], expected: str
) -> None:
    assert expected in _fails(tmp_path, *args, env=env)


@pytest.mark.requirement("CONF-ERR-001")
def test_an_unknown_config_key_lists_the_allowed_ones(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('provider = "scripted"\nmax_token = 5\n')
    text = _fails(tmp_path, "--config", str(config))
    assert f"config file {config}: unknown key(s) max_token; the allowed keys are provider" in text
    assert "max_tokens" in text
    assert "state_dir" in text


@pytest.mark.requirement("CONF-ERR-002")
def test_a_base_url_without_a_provider_means_openai_and_says_so(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    argv = bridge_argv("--base-url", "http://127.0.0.1:9/v1", "--model", "qwen3")
    init, new, stderr = start_session(argv, env, tmp_path)
    assert (
        "acp-bridge: --base-url http://127.0.0.1:9/v1 given without --provider: using "
        "--provider openai (OpenAI-compatible)" in stderr
    )
    assert "openai" in init["result"]["authMethods"][0]["description"]
    assert new["result"]["configOptions"][0]["currentValue"] == "qwen3"
    assert "/broken-mid-word" not in json.dumps(new)  # not the scripted model's commands


@pytest.mark.requirement("CONF-TTY-001")
def test_started_on_a_terminal_it_says_what_it_is_and_still_serves(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    bridge = PtyProcess([sys.executable, "-m", "acp_bridge"], env)
    bridge.expect(
        "acp-bridge is an ACP agent an editor launches over stdio; try `acp-bridge-agent demo`, "
        "see README"
    )
    bridge.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}')
    bridge.expect('"protocolVersion":1')
    bridge.send("\x04")  # Ctrl-D: end of input
    assert bridge.wait() == 0
