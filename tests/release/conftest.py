"""The distribution built once per test session from this tree: the sdist, the wheel built
from that sdist, and a new virtual environment with the wheel installed (tests/release/)."""

from __future__ import annotations

import sys
import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from subprocess_util import run_bounded

__all__ = ["NAME", "PROJECT", "ROOT", "Dist"]

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NAME = PROJECT["name"]


@dataclass(frozen=True)
class Dist:
    sdist: Path
    wheel: Path
    sdist_files: frozenset[str]  # paths inside the sdist's top folder


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """`python -m build`: the sdist from this tree, then the wheel from that sdist (so the
    wheel proves the sdist is complete enough to build)."""
    out = tmp_path_factory.mktemp("dist")
    done = run_bounded(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        timeout=300,
        cwd=out,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    top = f"{sdist.name.removesuffix('.tar.gz')}/"
    assert all(name.startswith(top) or name == top.rstrip("/") for name in names), names[:5]
    return Dist(sdist, wheel, frozenset(name.removeprefix(top) for name in names))


@pytest.fixture(scope="session")
def installed(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with only the wheel and its dependencies: its bin folder."""
    venv = tmp_path_factory.mktemp("venv") / "clean"
    made = run_bounded([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120)
    assert made.returncode == 0, made.stderr.decode(errors="replace")
    python = venv / "bin" / "python"
    done = run_bounded(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-input",
            "--no-compile",
            str(dist.wheel),
        ],
        timeout=600,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    return venv / "bin"
