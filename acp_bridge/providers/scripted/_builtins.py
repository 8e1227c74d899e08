"""The built-in scripts: JSON files shipped in `scripts/` beside this module.

They are read on first use, never at import (cold start matters: an editor waits for the
`initialize` answer). One file holds one script, named like the file (SCRIPT-050).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from acp_bridge.providers.scripted._checks import ScriptError
from acp_bridge.providers.scripted._model import Script
from acp_bridge.providers.scripted._parse import loads_script

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["DEFAULT_SCRIPT", "builtin_scripts"]

DEFAULT_SCRIPT = "hello"
"""The built-in played when a prompt names no script and no `--script FILE` was given."""

_FOLDER = "scripts"


def _folder() -> Traversable:
    """`scripts/`: read from disk where the package is (importlib.resources costs a sixth
    of a cold start in imports: tempfile, shutil, zipfile), through it otherwise (a zip)."""
    here = Path(__file__).with_name(_FOLDER)
    if here.is_dir():
        return here
    from importlib.resources import files

    return files(__package__ or "acp_bridge.providers.scripted").joinpath(_FOLDER)


@functools.cache
def builtin_scripts() -> Mapping[str, Script]:
    """Every built-in script by name: the default first, then by name (slash-command order)."""
    found: dict[str, Script] = {}
    for entry in _folder().iterdir():
        if not entry.name.endswith(".json"):
            continue
        source = f"<built-in {_FOLDER}/{entry.name}>"
        script = loads_script(entry.read_text(encoding="utf-8"), source=source)
        if f"{script.name}.json" != entry.name:
            raise ScriptError(source, f"the file must be named {script.name}.json")
        found[script.name] = script
    ordered = sorted(found, key=lambda name: (name != DEFAULT_SCRIPT, name))
    return MappingProxyType({name: found[name] for name in ordered})
