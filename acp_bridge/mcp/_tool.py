"""An MCP server's tool behind the bridge's tool seam (`acp_bridge.tools.Tool`).

So an MCP call goes through the turn engine like every tool (MCP-TOOL-001): held until its
attempt finished, shown as a `tool_call` (title ``<server>: <tool>``, kind, rawInput), behind
the permission gate, keyed and recorded in the effect ledger unless the server annotated it
`readOnlyHint` (MCP-EFFECT-001). The permission scopes are the tool and the whole server
(MCP-PERM-001). The arguments are checked against the server's schema before anyone is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.mcp._content import MalformedResult, result_outcome
from acp_bridge.tools._base import ToolContext, ToolKind, ToolOutcome, ToolPreview

__all__ = ["McpTool", "McpToolInfo", "ServerCaller"]


@dataclass(frozen=True, slots=True)
class McpToolInfo:
    """One tool as a server listed it. `parameters` is the schema offered to the model;
    `input_schema` the server's own (arguments are checked against it)."""

    server: str
    tool: str
    name: str
    title: str
    description: str
    parameters: JsonObject
    input_schema: JsonObject
    read_only: bool


class ServerCaller(Protocol):
    """Calls a tool on its server. Returns the `CallToolResult` as JSON.

    Raises `ToolError` when the call certainly did not run (server not connected, refused
    by the server with a JSON-RPC error) and any other exception when its outcome is unknown
    (the server crashed or hung mid-call), so the effect stays `started` (EFFECT-009).
    """

    async def call_tool(self, tool: str, arguments: JsonObject) -> Any: ...


class McpTool:
    """Implements `acp_bridge.tools.Tool` for one MCP tool."""

    __slots__ = ("_caller", "_limit", "info")

    def __init__(self, info: McpToolInfo, caller: ServerCaller, model_limit: int) -> None:
        self.info = info
        self._caller = caller
        self._limit = model_limit

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def description(self) -> str:
        where = f"(tool {self.info.tool!r} of the MCP server {self.info.server!r})"
        return f"{self.info.description}\n\n{where}".strip()

    @property
    def parameters(self) -> JsonObject:
        return self.info.parameters

    @property
    def kind(self) -> ToolKind:
        return ToolKind.READ if self.info.read_only else ToolKind.OTHER

    @property
    def side_effect(self) -> bool:
        return not self.info.read_only

    @property
    def label(self) -> str:
        return f"{self.info.server}: {self.info.title}"

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        _check(self.info.input_schema, arguments)
        return ToolPreview(
            title=self.label,
            kind=self.kind,
            permission_scope=self.name,
            scope_label=f"{self.info.tool} of {self.info.server}",
            group_scope=f"mcp-server:{self.info.server}",
            group_label=f"MCP server {self.info.server}",
        )

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        result = await self._caller.call_tool(self.info.tool, arguments)
        try:
            return result_outcome(self.label, result, self._limit)
        except MalformedResult as error:
            # The server may have acted before it answered: final (EFFECT-FINAL-001).
            raise ToolError(
                f"{self.label} returned a malformed result: {error}", may_have_changed=True
            ) from None


def _check(schema: JsonObject, arguments: JsonObject) -> None:
    import jsonschema  # a dependency of the MCP SDK; loaded only when a server is used

    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    except (jsonschema.exceptions.SchemaError, jsonschema.exceptions.RefResolutionError):
        return  # the server validates with its own schema
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(arguments)"
        raise ToolError(f"{where}: {error.message}")
