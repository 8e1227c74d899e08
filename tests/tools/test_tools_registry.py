"""The tool set offered to the model: names, schemas, kinds, the read-only subset, `__all__`."""

from __future__ import annotations

import jsonschema
import pytest

import acp_bridge.tools as tools
from acp_bridge.errors import ToolError
from acp_bridge.providers import ToolSpec
from acp_bridge.tools import ToolKind, ToolRegistry, default_tools

EXPECTED = {
    # name: (kind, side effect, properties, required)
    "read_file": (ToolKind.READ, False, {"path", "line", "limit"}, ["path"]),
    "write_file": (ToolKind.EDIT, True, {"path", "content"}, ["path", "content"]),
    "edit_file": (
        ToolKind.EDIT,
        True,
        {"path", "old_text", "new_text"},
        ["path", "old_text", "new_text"],
    ),
    "list_directory": (ToolKind.READ, False, {"path"}, ["path"]),
    "search_files": (ToolKind.SEARCH, False, {"pattern", "path", "glob"}, ["pattern"]),
    "run_command": (ToolKind.EXECUTE, True, {"command", "timeout_seconds"}, ["command"]),
    "update_plan": (ToolKind.THINK, False, {"entries"}, ["entries"]),  # spec/daily-use.md
}
# Keywords some provider refuses in function parameters (Gemini's schema subset, OpenAI).
NOT_PORTABLE = {
    "$ref",
    "$defs",
    "definitions",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "$schema",
    "additionalProperties",
    "patternProperties",
    "const",
    "if",
    "then",
    "else",
}


def _keywords(schema: object) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key == "properties":
                for inner in value.values():
                    found |= _keywords(inner)
            else:
                found |= _keywords(value)
    return found


def test_default_tools_are_the_named_tools() -> None:
    registry = default_tools()
    assert registry.names == tuple(EXPECTED)
    assert len(registry) == 7
    for name, (kind, side_effect, _, _) in EXPECTED.items():
        tool = registry.get(name)
        assert tool is not None
        assert tool.name == name
        assert tool.kind is kind
        assert tool.side_effect is side_effect
        assert name in registry
    assert registry.get("delete_everything") is None
    with pytest.raises(ToolError, match="no tool named 'nope'; the tools are: read_file,"):
        registry.require("nope")


@pytest.mark.requirement("TOOLS-012")
def test_parameters_are_valid_and_portable_json_schemas() -> None:
    for spec in default_tools().specs():
        assert isinstance(spec, ToolSpec)
        _, _, properties, required = EXPECTED[spec.name]
        schema = spec.parameters
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.Draft7Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert set(schema["properties"]) == properties
        assert schema["required"] == required
        assert not _keywords(schema) & NOT_PORTABLE
        for name, prop in schema["properties"].items():
            # Arrays of flat objects (update_plan's entries) are portable to all three.
            assert prop["type"] in {"string", "integer", "number", "array"}, name
            assert prop["description"], name
            if prop["type"] == "array":
                items = prop["items"]
                assert items["type"] == "object"
                assert {p["type"] for p in items["properties"].values()} == {"string"}
        assert spec.description


@pytest.mark.requirement("TOOLS-012")
def test_schemas_accept_good_arguments_and_reject_missing_ones() -> None:
    good = {
        "read_file": {"path": "a.py", "line": 3, "limit": 10},
        "write_file": {"path": "a.py", "content": ""},
        "edit_file": {"path": "a.py", "old_text": "a", "new_text": "b"},
        "list_directory": {"path": "."},
        "search_files": {"pattern": "def \\w+", "glob": "*.py"},
        "run_command": {"command": "ls", "timeout_seconds": 2.5},
        "update_plan": {"entries": [{"content": "a", "priority": "low", "status": "pending"}]},
    }
    for spec in default_tools().specs():
        validator = jsonschema.Draft202012Validator(spec.parameters)
        assert validator.is_valid(good[spec.name])
        assert not validator.is_valid({})


def test_parameters_cannot_be_mutated_through_a_spec() -> None:
    registry = default_tools()
    registry.specs()[0].parameters["properties"].clear()
    assert registry.specs()[0].parameters["properties"]


@pytest.mark.requirement("TOOLS-013")
def test_read_only_registry_offers_only_tools_without_side_effects() -> None:
    read_only = default_tools().for_read_only()
    assert read_only.names == ("read_file", "list_directory", "search_files", "update_plan")
    assert [spec.name for spec in read_only.specs()] == list(read_only.names)
    assert "write_file" not in read_only
    assert "run_command" not in read_only


def test_duplicate_names_are_refused() -> None:
    registry = default_tools()
    with pytest.raises(ValueError, match="two tools are named 'read_file'"):
        ToolRegistry([*registry, registry.require("read_file")])


def test_public_names_are_exact() -> None:
    assert tools.__all__ == sorted(tools.__all__)
    assert set(tools.__all__) == {
        name  # dir(): the names load lazily (acp_bridge/_exports.py)
        for name in dir(tools)
        if not name.startswith("_") and name not in ("annotations", "TYPE_CHECKING")
    } - {"tools"}
    for name in tools.__all__:
        assert getattr(tools, name) is not None
