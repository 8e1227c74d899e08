"""The launch configurations in editor_samples/ name a real command with arguments it accepts.

For each sample: the file parses, the command is the installed `acp-bridge-agent` console script (or
`python -m acp_bridge`), and the arguments pass the bridge's own command-line parser and
settings resolution. The Zed and JetBrains entries are also started exactly as configured and
must answer `initialize`; the acpx sample is run by tests/external/test_external_acpx.py.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
from acp_schema import AgentWireValidator
from subprocess_util import LineProcess, console_script, isolated_env, run_bounded

from acp_bridge.cli import build_parser, resolve

pytestmark = [pytest.mark.requirement("EXT-009")]

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "editor_samples"
JSON_SAMPLES = {
    "zed": SAMPLES / "zed" / "settings.json",
    "jetbrains": SAMPLES / "jetbrains" / "acp.json",
}


def agent_entries(editor: str) -> list[tuple[str, dict[str, Any]]]:
    data = json.loads(JSON_SAMPLES[editor].read_text(encoding="utf-8"))
    servers = data["agent_servers"]
    assert isinstance(servers, dict), f"{editor}: agent_servers is not an object"
    assert servers, f"{editor}: no agent_servers"
    return sorted(servers.items())


ENTRIES = [
    pytest.param(editor, name, entry, id=f"{editor}:{name}")
    for editor in JSON_SAMPLES
    for name, entry in agent_entries(editor)
]


def assert_accepted(args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bridge's parser takes `args`, and the settings they make resolve."""
    options = build_parser().parse_args(args)  # SystemExit(2) on anything it rejects
    flags = {k: v for k, v in vars(options).items() if k != "config"}
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    resolve(flags, environ={}, config_path=options.config)


def assert_names_the_bridge(command: list[str]) -> list[str]:
    """`command` runs acp-bridge; returns its arguments."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    name = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"]
    if command[0] == name:  # the console script named like the distribution (spec/release.md)
        assert scripts.get(name) == "acp_bridge.cli:main"
        assert console_script().exists(), f"{name} is not installed at {console_script()}"
        return command[1:]
    assert Path(command[0]).name.startswith("python"), command
    assert command[1:3] == ["-m", "acp_bridge"], command
    return command[3:]


@pytest.mark.parametrize(("editor", "name", "entry"), ENTRIES)
def test_json_sample_entry_names_the_bridge_with_accepted_args(
    editor: str, name: str, entry: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if editor == "zed":
        assert entry.get("type") == "custom", "Zed needs type custom for a command-line agent"
    assert set(entry) <= {"type", "command", "args", "env"}, sorted(entry)
    assert isinstance(entry["args"], list)
    assert all(isinstance(a, str) for a in entry["args"])
    assert isinstance(entry.get("env", {}), dict)
    args = assert_names_the_bridge([entry["command"], *entry["args"]])
    assert_accepted(args, tmp_path, monkeypatch)


@pytest.mark.subprocess
@pytest.mark.parametrize(("editor", "name", "entry"), ENTRIES)
def test_json_sample_entry_starts_and_answers_initialize(
    editor: str, name: str, entry: dict[str, Any], tmp_path: Path
) -> None:
    """Started as the editor would (console script, args, env), the agent initializes."""
    argv = [str(console_script()), *entry["args"]]
    env = isolated_env(tmp_path / "home", entry.get("env") or {})
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}},
    }
    validator = AgentWireValidator(strict_roots=True)
    validator.note_client_message(initialize)
    with LineProcess(argv, env=env, cwd=workspace) as agent:
        agent.send(initialize)
        answer = agent.read_message()
        validator.check(answer)
        assert answer["result"]["agentInfo"]["name"] == "acp-bridge"
        agent.close_stdin()
        assert agent.wait_exit() == 0


def test_acpx_sample_is_a_valid_script_naming_the_bridge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = SAMPLES / "acpx" / "acp-bridge.sh"
    assert script.stat().st_mode & 0o111, "the acpx sample is not executable"
    syntax = run_bounded(["sh", "-n", str(script)])
    assert syntax.returncode == 0, syntax.stderr
    text = script.read_text()
    default = re.search(r"^ACP_BRIDGE=\$\{ACP_BRIDGE:-(.+)\}$", text, re.MULTILINE)
    assert default is not None, "the sample has no default agent command"
    args = assert_names_the_bridge(shlex.split(default.group(1)))
    assert_accepted(args, tmp_path, monkeypatch)
    assert "--agent" in text
    assert "exec" in text


# The editor-plugin samples (run in the real editors by test_samples_editor_plugins.py): the
# command line they launch by default, read from their own syntax.
def _lua_command(text: str) -> list[str]:
    found = re.search(r"^M\.command\s*=\s*\{([^}]*)\}", text, re.MULTILINE)
    assert found is not None, "no M.command in the CodeCompanion sample"
    return re.findall(r'"([^"]*)"', found.group(1))


def _elisp_command(text: str) -> list[str]:
    found = re.search(r"\(defcustom acp-bridge-agent-shell-command '\(([^)]*)\)", text)
    assert found is not None, "no acp-bridge-agent-shell-command in the agent-shell sample"
    return re.findall(r'"([^"]*)"', found.group(1))


PLUGIN_SAMPLES = {
    "neovim/lua/acp_bridge/codecompanion.lua": _lua_command,
    "emacs/acp-bridge-agent-shell.el": _elisp_command,
}


@pytest.mark.parametrize("sample", sorted(PLUGIN_SAMPLES))
def test_plugin_samples_launch_the_bridge_with_accepted_args(
    sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (SAMPLES / sample).read_text(encoding="utf-8")
    args = assert_names_the_bridge(PLUGIN_SAMPLES[sample](text))
    assert_accepted(args, tmp_path, monkeypatch)


def test_every_sample_is_listed_in_the_samples_readme() -> None:
    """Each file is named by editor_samples/README.md or by its own sample's README."""
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    for path in sorted(SAMPLES.rglob("*")):
        skipped = {"node_modules", "dist"} & set(path.parts)  # installed or built, not sources
        if not path.is_file() or path.name == "README.md" or skipped:
            continue
        relative = path.relative_to(SAMPLES)
        sample_readme = SAMPLES / relative.parts[0] / "README.md"
        assert sample_readme.exists(), f"{relative.parts[0]} has no README"
        within = relative.relative_to(relative.parts[0]).as_posix()
        text = sample_readme.read_text(encoding="utf-8")
        listed = f"({relative.as_posix()})" in readme or f"`{relative.as_posix()}`" in readme
        assert listed or f"({within})" in text or f"`{within}`" in text, relative
