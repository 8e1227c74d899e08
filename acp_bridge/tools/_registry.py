"""The tools offered to the model: `ToolRegistry` and `default_tools()`.

`specs()` is what a `ModelRequest` carries. `for_read_only()` keeps only the tools without
side effects: in the read-only session mode the others are not offered (and the engine
refuses a call to them, TOOLS-013).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from acp_bridge.errors import ToolError
from acp_bridge.providers import ToolSpec
from acp_bridge.tools._base import Tool
from acp_bridge.tools._command import RunCommand
from acp_bridge.tools._edit import EditFile
from acp_bridge.tools._files import ReadFile, WriteFile
from acp_bridge.tools._listing import ListDirectory
from acp_bridge.tools._plan import UpdatePlan
from acp_bridge.tools._search import SearchFiles
from acp_bridge.tools._text import ToolLimits

__all__ = ["ToolRegistry", "default_tools"]


class ToolRegistry:
    """An ordered set of tools with unique names."""

    __slots__ = ("_tools",)

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None."""
        return self._tools.get(name)

    def require(self, name: str) -> Tool:
        """The tool called `name`; `ToolError` (for the model) when there is none."""
        tool = self._tools.get(name)
        if tool is None:
            offered = ", ".join(self._tools) or "none"
            raise ToolError(f"there is no tool named {name!r}; the tools are: {offered}")
        return tool

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is offered: name, description and parameter schema of each tool."""
        return tuple(ToolSpec(t.name, t.description, t.parameters) for t in self._tools.values())

    def for_read_only(self) -> ToolRegistry:
        """The same registry without the tools that have side effects."""
        return ToolRegistry(tool for tool in self._tools.values() if not tool.side_effect)


def default_tools(limits: ToolLimits | None = None) -> ToolRegistry:
    """The tools of acp-bridge, in the order the model sees them."""
    bounds = limits or ToolLimits()
    return ToolRegistry(
        [
            ReadFile(bounds),
            WriteFile(bounds),
            EditFile(bounds),
            ListDirectory(bounds),
            SearchFiles(bounds),
            RunCommand(bounds),
            UpdatePlan(),
        ]
    )
