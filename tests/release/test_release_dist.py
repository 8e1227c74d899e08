"""The distribution as a user gets it: the sdist and the wheel built from this tree with the
project's own build backend, the wheel installed into a new, empty virtual environment, and
its commands run from there (spec/release.md, REL-004 and REL-005).

Everything is built in a temporary folder for this run; nothing is reused from an earlier
one. Installing the wheel resolves its dependencies from the package index, as a user's
`pip install` / `uvx` / `pipx run` does.
"""

from __future__ import annotations

import json
import re
import zipfile
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path

import pytest
from acp_schema import AgentWireValidator
from release.conftest import NAME, PROJECT, ROOT, Dist
from subprocess_util import run_bounded

pytestmark = pytest.mark.subprocess

# The Markdown files whose relative links a reader of the sdist follows.
READMES = ["README.md", "editor_samples/**/*.md", "benchmarks/*.md", "spec/*.md", "tests/npm/*.md"]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _wheel_metadata(wheel: Path) -> tuple[Message, str]:
    """The wheel's METADATA headers and its entry_points.txt."""
    with zipfile.ZipFile(wheel) as archive:
        info = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = HeaderParser().parsestr(archive.read(info).decode())
        entry_points = archive.read(info.replace("METADATA", "entry_points.txt")).decode()
    return metadata, entry_points


@pytest.mark.requirement("REL-004")
def test_the_sdist_holds_everything_its_readmes_point_to(dist: Dist) -> None:
    for must in ("LICENSE", "README.md", "pyproject.toml", "agent.json", ".ci/run"):
        assert must in dist.sdist_files, must
    assert "tests/npm/package-lock.json" in dist.sdist_files
    assert not any("node_modules" in name or "__pycache__" in name for name in dist.sdist_files)
    missing = []
    for pattern in READMES:
        for readme in sorted(ROOT.glob(pattern)):
            if "node_modules" in readme.parts:  # what npm ci installed beside a sample
                continue
            relative = readme.relative_to(ROOT).as_posix()
            assert relative in dist.sdist_files, relative
            # Links shown as code (`[name](uri)`) are examples, not links.
            for target in _LINK.findall(re.sub(r"`[^`\n]*`", "", readme.read_text())):
                if re.match(r"[a-z]+:", target) or target.startswith("#"):
                    continue
                path = (readme.parent / target.split("#")[0]).resolve()
                if not path.is_relative_to(ROOT):
                    continue
                inside = path.relative_to(ROOT).as_posix()
                if not any(f == inside or f.startswith(f"{inside}/") for f in dist.sdist_files):
                    missing.append(f"{relative} -> {target}")
    assert not missing, f"links into files the sdist leaves out: {missing}"


@pytest.mark.requirement("REL-004")
def test_the_wheel_metadata(dist: Dist) -> None:
    metadata, entry_points = _wheel_metadata(dist.wheel)
    assert metadata["Name"] == NAME
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["License-File"] == "LICENSE"
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL"))
    assert set(urls) == {"Homepage", "Documentation", "Repository", "Issues"}
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = metadata.get_all("Classifier")
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # the expression says it
    # `uvx NAME` and `pipx run NAME` run the script named like the distribution.
    scripts = dict(
        line.split(" = ", 1)
        for line in entry_points.split("[console_scripts]")[1].strip().splitlines()
        if " = " in line
    )
    assert scripts == {NAME: "acp_bridge.cli:main", "acp-bridge": "acp_bridge.cli:main"}
    with zipfile.ZipFile(dist.wheel) as archive:
        names = archive.namelist()
    assert "acp_bridge/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not [n for n in names if n.startswith("tests/")]


@pytest.mark.requirement("REL-004")
@pytest.mark.requirement("REL-005")
def test_the_installed_command_serves_acp_from_a_clean_venv(
    installed: Path, tmp_path: Path
) -> None:
    version = run_bounded([str(installed / NAME), "--version"], cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout.decode().split()[-1] == PROJECT["version"]
    where = run_bounded(
        [str(installed / "python"), "-c", "import acp_bridge; print(acp_bridge.__file__)"],
        cwd=tmp_path,
    )
    assert Path(where.stdout.decode().strip()).is_relative_to(installed.parent), where
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}},
    }
    for command in (NAME, "acp-bridge"):
        served = run_bounded(
            [str(installed / command), "--state-dir", str(tmp_path / "state")],
            input=(json.dumps(request) + "\n").encode(),
            cwd=tmp_path,
        )
        assert served.returncode == 0, served.stderr.decode(errors="replace")
        validator = AgentWireValidator(strict_roots=True)
        validator.note_client_message(request)
        assert validator.check_lines(served.stdout.splitlines()) == 1
        (line,) = served.stdout.splitlines()
        assert json.loads(line)["result"]["protocolVersion"] == 1
