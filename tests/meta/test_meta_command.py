"""Every README, editor sample and spec launches the agent with the same command: the console
script named like the distribution (spec/release.md, REL-004). The project's name,
acp-bridge, stays in prose; what is flagged is `acp-bridge` used as a command."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAME = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
DOCUMENTS = ["README.md", "editor_samples/**/*", "spec/**/*", "benchmarks/*.md", "tests/npm/*.md"]
# `acp-bridge` as a command: a JSON/Lua/Lisp command string, a path to the script, a shell
# line or inline code that runs it with arguments, acpx's --agent, a shell default.
_BARE = r"acp-bridge(?![-\w.])"
COMMAND_USES = [
    re.compile(rf'"command"\s*:\s*"{_BARE}"'),
    re.compile(rf'\{{\s*"{_BARE}"\s*[,}}]'),  # Lua: { "acp-bridge", ... }
    re.compile(rf'\(\s*"{_BARE}"[\s)]'),  # Lisp: '("acp-bridge" ...)
    re.compile(rf"bin/{_BARE}"),
    re.compile(rf"`{_BARE} (?:--|-|demo|doctor|login|logout|conformance)"),
    re.compile(rf'--agent "{_BARE}'),
    re.compile(rf"command -v {_BARE}"),
    re.compile(rf"(?:installed|find|the) `{_BARE}`(?! *\()"),
    re.compile(rf":-{_BARE}\}}"),
    re.compile(rf'ACP_BRIDGE="{_BARE}'),
    re.compile(rf"^\s*(?:\$ )?{_BARE} (?:--|demo|doctor|login|logout|conformance)", re.M),
]


@pytest.mark.requirement("REL-004")
def test_the_documents_name_one_command() -> None:
    assert NAME == "acp-bridge-agent"
    found = []
    for pattern in DOCUMENTS:
        for path in sorted(ROOT.glob(pattern)):
            if not path.is_file() or path.suffix not in {
                ".md",
                ".json",
                ".lua",
                ".el",
                ".sh",
                ".toml",
                "",
            }:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for use in COMMAND_USES:
                for match in use.finditer(text):
                    line = text.count("\n", 0, match.start()) + 1
                    found.append(f"{path.relative_to(ROOT)}:{line}: {match.group(0).strip()}")
    assert not found, f"say `{NAME}` where the command is meant:\n" + "\n".join(found)
