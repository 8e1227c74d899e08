"""Runs the ACP registry's `verify_agents.py --auth-check` against this tree's wheel.

    python tests/registry/run_verify_agents.py --registry PATH [verify_agents.py options]

PATH is a checkout (or a bare git directory) of agentclientprotocol/registry. See
tests/registry/README.md for what it lays out and why. Needs `uvx` on PATH (`pip install uv`)
and `build` with `hatchling` (the project's test extras).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = (".github/workflows/verify_agents.py", ".github/workflows/client.py")


def _copy_scripts(registry: Path, into: Path) -> None:
    for script in SCRIPTS:
        target = into / script
        target.parent.mkdir(parents=True, exist_ok=True)
        if (registry / script).is_file():
            shutil.copyfile(registry / script, target)
        else:  # a bare git directory
            shown = subprocess.run(
                ["git", "--git-dir", str(registry), "show", f"HEAD:{script}"],
                capture_output=True,
                check=True,
            )
            target.write_bytes(shown.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", type=Path, required=True)
    options, passed_on = parser.parse_known_args()
    if shutil.which("uvx") is None and not (Path(sys.executable).parent / "uvx").exists():
        print("uvx is not on PATH: `pip install uv` (into this venv) first", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="acp-registry-check-") as temp:
        work = Path(temp)
        dist = work / "dist"
        subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        registry = work / "registry"
        _copy_scripts(options.registry.resolve(), registry)
        entry = registry / "acp-bridge"
        entry.mkdir()
        shutil.copyfile(ROOT / "agent.json", entry / "agent.json")
        env = dict(os.environ)
        env["UV_FIND_LINKS"] = str(dist)
        env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
        done = subprocess.run(
            [
                sys.executable,
                str(registry / SCRIPTS[0]),
                "--auth-check",
                "--agent",
                "acp-bridge",
                "--type",
                "uvx",
                *passed_on,
            ],
            cwd=registry,
            env=env,
            check=False,
        )
        return done.returncode


if __name__ == "__main__":
    sys.exit(main())
