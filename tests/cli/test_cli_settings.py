"""Settings: flags over environment over the TOML config file; secrets never in the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_bridge.cli import SettingsError, build_parser, resolve
from acp_bridge.cli._run import build_config, missing_key_vars
from acp_bridge.cli._trace import TraceWriter, redact

pytestmark = pytest.mark.requirement("CLI-CONFIG-001")


def _flags(*argv: str) -> dict[str, object]:
    options = vars(build_parser().parse_args(list(argv)))
    options.pop("config")
    return options


def test_flags_over_environment_over_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'provider = "openai"\nmodel = "from-file"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'models = ["a", "b"]\nstate_dir = "/tmp/from-file"\n'
    )
    env = {"ACP_BRIDGE_MODEL": "from-env", "ACP_BRIDGE_STATE_DIR": "/tmp/from-env"}
    settings = resolve(_flags("--state-dir", "/tmp/from-flag"), env, str(config))
    assert settings.provider == "openai"
    assert settings.model == "from-env"
    assert settings.models == ("a", "b")
    assert settings.state_dir == Path("/tmp/from-flag")
    assert settings.sources["model"] == "environment"
    assert settings.sources["state_dir"] == "flag"
    assert settings.sources["provider"].startswith("file ")


def test_defaults_without_any_file(tmp_path: Path) -> None:
    settings = resolve(_flags(), {"XDG_CONFIG_HOME": str(tmp_path)}, None)
    assert settings.provider == "scripted"
    assert settings.max_line_bytes == 50 * 1024 * 1024


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('provider = "llama"\n', "unknown provider"),
        ("colour = 1\n", r"unknown key\(s\) colour; the allowed keys are provider, model"),
        ("provider = \n", "not valid TOML"),
        ('max_attempts = "many"\n', "max_attempts"),
    ],
)
def test_bad_config_files_are_explained(tmp_path: Path, content: str, problem: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(content)
    with pytest.raises(SettingsError, match=problem):
        resolve(_flags(), {}, str(config))


def test_an_explicit_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="config file not found"):
        resolve(_flags(), {}, str(tmp_path / "nope.toml"))


def test_script_only_with_the_scripted_provider() -> None:
    with pytest.raises(SettingsError, match="--script only applies"):
        resolve(_flags("--provider", "openai", "--script", "x.json"), {}, "/dev/null")


def test_missing_key_is_reported_and_local_servers_need_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    cloud = resolve(_flags("--provider", "gemini"), {}, "/dev/null")
    assert missing_key_vars(cloud) == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    local = resolve(
        _flags("--provider", "openai", "--base-url", "http://127.0.0.1:11434/v1"), {}, "/dev/null"
    )
    assert missing_key_vars(local) == ()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000")
    assert missing_key_vars(resolve(_flags("--provider", "anthropic"), {}, "/dev/null")) == ()


def test_build_config_for_each_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    scripted = build_config(resolve(_flags("--state-dir", str(tmp_path)), {}, "/dev/null"))
    assert scripted.provider.name == "scripted"
    assert "broken-mid-word" in {c.name for c in scripted.commands}
    openai = build_config(
        resolve(
            _flags("--provider", "openai", "--model", "m1", "--models", "m1,m2"), {}, "/dev/null"
        )
    )
    assert (openai.provider.name, openai.models) == ("openai", ("m1", "m2"))
    assert openai.missing_key_vars == ("OPENAI_API_KEY",)
    faulty = build_config(resolve(_flags("--inject-fault", "in-tool-call"), {}, "/dev/null"))
    assert type(faulty.provider).__name__ == "FaultInjectingProvider"


@pytest.mark.requirement("AGENT-AUTH-001")
def test_trace_redacts_keys_and_key_shaped_strings(tmp_path: Path) -> None:
    secret = "sk-proj-abcdefghijklmnop"
    assert redact({"headers": {"Authorization": f"Bearer {secret}"}, "x-api-key": "k"}) == {
        "headers": {"Authorization": "[redacted]"},
        "x-api-key": "[redacted]",
    }
    path = tmp_path / "trace.ndjson"
    trace = TraceWriter(path, secrets=("custom-secret-value",))
    trace.jsonrpc(
        "in", {"method": "m", "params": {"text": f"key {secret} and custom-secret-value"}}
    )
    trace.provider(
        {
            "type": "provider_request",
            "attempt": 1,
            "url": "https://x/?key=AIzaSyA1234567890123456789012",
        }
    )
    trace.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    text = path.read_text()
    assert secret not in text
    assert "custom-secret-value" not in text
    assert "AIzaSy" not in text
    assert lines[0]["dir"] == "editor->bridge"
    assert lines[1]["kind"] == "provider"
    assert lines[1]["attempt"] == 1
