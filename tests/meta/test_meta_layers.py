"""The package's layers depend downward only, and each public package has an exact `__all__`."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "acp_bridge"

# What each layer may import from acp_bridge (besides itself and the shared leaf modules).
SHARED = {"acp_bridge._json", "acp_bridge._exports", "acp_bridge.errors", "acp_bridge"}
ALLOWED: dict[str, set[str]] = {
    "wire": set(),
    "jsonrpc": {"wire"},
    "protocol": set(),
    "providers": set(),
    "tools": {"providers"},
    "turn": {"providers", "tools"},
    "sessions": {"providers", "tools", "turn"},
    "mcp": {"tools"},
    "agent": {"wire", "jsonrpc", "protocol", "providers", "tools", "turn", "sessions", "mcp"},
    "client": {"wire", "jsonrpc", "protocol"},
    "conformance": {
        "wire",
        "jsonrpc",
        "protocol",
        "providers",
        "tools",
        "turn",
        "sessions",
        "agent",
        "client",
    },
    "cli": {
        "wire",
        "jsonrpc",
        "protocol",
        "providers",
        "tools",
        "turn",
        "agent",
        "client",
        "conformance",
    },
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n.startswith("acp_bridge")}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_depends_downward_only(layer: str) -> None:
    allowed = {f"acp_bridge.{name}" for name in ALLOWED[layer] | {layer}}
    for path in (PACKAGE / layer).rglob("*.py"):
        for name in _imports(path) - SHARED:
            top = ".".join(name.split(".")[:2])
            assert top in allowed, f"{path.relative_to(PACKAGE)} imports {name}"


@pytest.mark.parametrize(
    "package",
    [
        "wire",
        "jsonrpc",
        "protocol",
        "providers",
        "tools",
        "turn",
        "sessions",
        "mcp",
        "agent",
        "client",
        "conformance",
        "cli",
    ],
)
def test_all_is_sorted_and_complete(package: str) -> None:
    module = importlib.import_module(f"acp_bridge.{package}")
    exported = list(module.__all__)
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n)) or exported == sorted(
        exported
    ), f"acp_bridge.{package}.__all__ is not sorted"
    for name in exported:
        assert hasattr(module, name), f"acp_bridge.{package}.{name} is exported but missing"
    public = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and getattr(v, "__module__", "").startswith("acp_bridge")
    }
    assert public <= set(exported), f"not in __all__: {sorted(public - set(exported))}"
