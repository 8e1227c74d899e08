"""Lazy package exports (PEP 562): a package's names load with the module defining them.

A package `__init__` that imports every submodule makes importing any one of them import the
whole package: the session store needs two of the turn engine's modules, not its runner. For
cold start (STARTUP-001, STARTUP-004) the big packages import their names for type checkers
only, and `lazy_exports` imports the module of a name on its first read:

    from acp_bridge._exports import lazy_exports as _lazy_exports

    if TYPE_CHECKING:
        from acp_bridge.turn._ledger import EffectLedger
    __all__ = ["EffectLedger"]
    __getattr__, __dir__ = _lazy_exports(__name__)

The `if TYPE_CHECKING:` imports are the one list of where each name lives: the type checker
checks them, and `lazy_exports` reads them from the package's source (a fraction of a
millisecond). tests/meta/test_meta_layers.py reads every name of every `__all__`.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports"]


_BLOCK = re.compile(r"^if TYPE_CHECKING:\n((?:[ \t]+\S.*\n|[ \t]*\n)+)", re.MULTILINE)
_FROM = re.compile(r"^[ \t]+from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|.*)$", re.MULTILINE)
_COMMENT = re.compile(r"#.*")


def _homes(package: str) -> dict[str, str]:
    """Each name the package's `if TYPE_CHECKING:` block imports from one of its own
    modules -> that module.

    Read by a scan of the block's `from ... import ...` statements, not `ast.parse`: parsing
    a package's `__init__` cost ~1 ms of a cold start per package (tests/meta holds the scan
    equal to the syntax tree's imports for every lazy package).
    """
    module = sys.modules[package]
    loader = module.__spec__.loader if module.__spec__ else None
    source = loader.get_source(package) if loader and hasattr(loader, "get_source") else None
    if source is None:
        raise ImportError(f"{package} exports its names lazily and needs its source to do so")
    homes: dict[str, str] = {}
    for block in _BLOCK.findall(source):
        for home, names in _FROM.findall(block):
            if not home.startswith(f"{package}."):
                continue
            for item in _COMMENT.sub("", names).strip("()").split(","):
                if words := item.split():
                    homes[words[-1]] = home  # `name` or `name as alias`: the alias
    return homes


def lazy_exports(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package` (call it from the package's `__init__`)."""
    where = _homes(package)
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = where.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # the next read is an ordinary attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
