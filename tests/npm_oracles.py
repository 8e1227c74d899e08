"""The test oracles from npm (tests/npm): acpx and the official ACP schema's package.

They are pinned in tests/npm/package.json and package-lock.json and installed there with
`npm ci` on first use, by whichever test needs one first (also outside .ci/run). That needs
Node.js 20 or newer with npm. Where Node.js is missing, `require_node` skips the test with
exactly what to install, except under CI (`CI` set), where a missing runtime is a failure.

    path = installed(NPM_DIR / "node_modules" / ".bin" / "acpx")   # runs `npm ci` if needed

Concurrent test processes install once: `npm ci` runs under an exclusive file lock, and a
process that waited re-checks before installing again. A failed install is remembered for
the rest of the session, so a broken network costs one `npm ci`, not one per test.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

__all__ = ["INSTALL_HINT", "NPM_CI", "NPM_DIR", "installed", "node_problem", "require_node"]

NPM_DIR = Path(__file__).resolve().parent / "npm"
NPM_CI = ("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
INSTALL_HINT = (
    "install Node.js 20 or newer with npm (https://nodejs.org, or e.g. "
    "`apt-get install nodejs npm`); the tests then run "
    f"`{' '.join(NPM_CI)}` in {NPM_DIR} on first use"
)
_MIN_NODE_MAJOR = 20
_install_failure: list[str] = []


@functools.cache
def node_problem() -> str | None:
    """Why the npm oracles cannot be installed here (None when Node.js and npm are usable)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(name for name, at in (("node", node), ("npm", npm)) if at is None)
        return f"{missing} not found on PATH"
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
        major = int(done.stdout.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return f"`{node} --version` did not print a version"
    if major < _MIN_NODE_MAJOR:
        return f"Node.js {done.stdout.strip()} is older than {_MIN_NODE_MAJOR}"
    return None


def require_node(what: str) -> None:
    """Skips (or, under CI, fails) the calling test when Node.js cannot install `what`."""
    problem = node_problem()
    if problem is None:
        return
    message = f"{what} comes from npm and needs Node.js ({problem}): {INSTALL_HINT}"
    if os.environ.get("CI"):
        raise AssertionError(f"CI must run this test: {message}")
    pytest.skip(message)


def _lock_path() -> Path:
    digest = hashlib.sha256(str(NPM_DIR).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"acp-bridge-npm-ci-{digest}.lock"


def _npm_ci() -> None:
    npm = shutil.which("npm")
    assert npm is not None
    try:
        done = subprocess.run(
            [npm, *NPM_CI[1:]],
            cwd=NPM_DIR,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    except subprocess.TimeoutExpired:
        _install_failure.append(f"`{' '.join(NPM_CI)}` in {NPM_DIR} took over 900 s")
        return
    if done.returncode != 0:
        _install_failure.append(
            f"`{' '.join(NPM_CI)}` in {NPM_DIR} failed (exit {done.returncode}):\n"
            f"{done.stderr[-2000:]}"
        )


def installed(path: Path, what: str | None = None) -> Path:
    """`path` inside tests/npm/node_modules, after `npm ci` there if it is not there yet."""
    if path.exists():
        return path
    require_node(what or path.name)
    if not _install_failure:
        with _lock_path().open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not path.exists():
                    _npm_ci()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    if _install_failure:
        raise AssertionError(_install_failure[0])
    if not path.exists():
        raise AssertionError(
            f"`{' '.join(NPM_CI)}` in {NPM_DIR} succeeded but {path} is not there: "
            "is it pinned in tests/npm/package.json?"
        )
    return path
