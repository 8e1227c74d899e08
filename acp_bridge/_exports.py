"""Lazy package exports (PEP 562): a package's names load with the module defining them.

A package `__init__` that imports every submodule makes importing any one of them import the
whole package: the session store needs two of the turn engine's modules, not its runner. For
cold start (STARTUP-001) the big packages instead name their exports in `__all__`, map each to
its private module, and import that module on the first read of a name:

    from acp_bridge._exports import lazy_exports as _lazy_exports

    if TYPE_CHECKING:
        from acp_bridge.turn._ledger import EffectLedger   # what type checkers see
    __all__ = ["EffectLedger"]
    __getattr__, __dir__ = _lazy_exports(__name__, {"_ledger": ("EffectLedger",)})

tests/meta/test_meta_layers.py reads every name of every `__all__`, so a name mapped to the
wrong module fails there.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose names live in the private modules
    `homes` maps to them (module name relative to the package -> the names it defines)."""
    where = {name: module for module, names in homes.items() for name in names}
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value  # the next read is an ordinary attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
