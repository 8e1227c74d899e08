"""The lazy packages' homes, read by a scan of their `if TYPE_CHECKING:` blocks (STARTUP-009),
are exactly the imports the syntax tree holds there: the scan is a cold-start shortcut for
`ast.parse`, never a second opinion."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from acp_bridge._exports import _homes

PACKAGE = Path(__file__).resolve().parents[2] / "acp_bridge"
LAZY = sorted(
    ".".join(("acp_bridge", *path.parent.relative_to(PACKAGE).parts))
    for path in PACKAGE.rglob("__init__.py")
    if "_lazy_exports(__name__)" in path.read_text(encoding="utf-8")
)


def _imports_in_the_tree(package: str, source: str) -> dict[str, str]:
    homes: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and f"{statement.module}".startswith(
                    f"{package}."
                ):
                    homes.update(
                        (a.asname or a.name, f"{statement.module}") for a in statement.names
                    )
    return homes


def test_the_lazy_packages_are_found() -> None:
    assert {
        "acp_bridge.agent",
        "acp_bridge.providers",
        "acp_bridge.tools",
        "acp_bridge.turn",
    } <= set(LAZY)


@pytest.mark.requirement("STARTUP-009")
@pytest.mark.parametrize("package", LAZY)
def test_the_scan_finds_the_imports_the_syntax_tree_holds(package: str) -> None:
    importlib.import_module(package)
    source = (PACKAGE.joinpath(*package.split(".")[1:]) / "__init__.py").read_text(encoding="utf-8")
    expected = _imports_in_the_tree(package, source)
    assert expected  # a lazy package names its homes
    assert _homes(package) == expected


@pytest.mark.requirement("STARTUP-009")
def test_the_scan_reads_aliases_comments_and_wrapped_lists(tmp_path: Path) -> None:
    source = """from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pkg._a import One, Two as Deux  # a comment
    from pkg._b import (
        Three,  # why
        four as quatre,
    )
    from elsewhere import Ignored

    from pkg._c import five
x = 1
"""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(source, encoding="utf-8")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module("pkg")
        assert (
            _homes("pkg")
            == _imports_in_the_tree("pkg", source)
            == {
                "One": "pkg._a",
                "Deux": "pkg._a",
                "Three": "pkg._b",
                "quatre": "pkg._b",
                "five": "pkg._c",
            }
        )
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("pkg", None)
