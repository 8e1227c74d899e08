"""Byte-code caches for the agents a start-up benchmark spawns.

A user's installed agent starts from cached byte code: pip compiles a wheel's modules when it
installs them, and the SDK's files were compiled that way. An editable checkout run with
`PYTHONDONTWRITEBYTECODE=1` (common in CI and sandboxes) never gets caches, so every spawn
would recompile acp-bridge's ~300 modules from source (about 0.25 s on a 2-core machine) and
measure the compiler, not the start path. `compile_agents()` writes the caches pip would have
written, for acp-bridge and for the SDK alike, before anything is measured.
"""

from __future__ import annotations

import subprocess

__all__ = ["compile_agents"]

_COMPILE = """
import compileall, importlib.util, sys
for name in sys.argv[1:]:
    spec = importlib.util.find_spec(name)
    for location in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(location, quiet=2)
"""


def compile_agents(python: str, packages: tuple[str, ...] = ("acp_bridge", "acp")) -> None:
    """Compiles, with the interpreter that will run them, each importable package's modules
    into its `__pycache__` (absent packages are skipped)."""
    subprocess.run([python, "-c", _COMPILE, *packages], check=True, timeout=300)
