"""MCP servers the editor passes in `session/new`, `session/load` and `session/resume`.

Layer: above `tools` (an MCP tool is a `Tool`), below `agent` (which runs a session's
`SessionServers` in the connection's task group). The official MCP Python SDK is imported
only when a server is connected (`_connection`), never by importing this package. See
spec/mcp.md.
"""

from typing import TYPE_CHECKING

from acp_bridge._exports import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from acp_bridge.mcp._connection import OutcomeUnknown, ServerConnection
    from acp_bridge.mcp._content import MEDIA_BUDGET, MalformedResult, result_outcome
    from acp_bridge.mcp._limits import McpLimits
    from acp_bridge.mcp._names import MAX_TOOL_NAME, offered_name
    from acp_bridge.mcp._schema import SchemaRejected, offered_schema
    from acp_bridge.mcp._servers import SessionServers
    from acp_bridge.mcp._tool import McpTool, McpToolInfo, ServerCaller
    from acp_bridge.mcp._transport import ServerSpec

__all__ = [
    "MAX_TOOL_NAME",
    "MEDIA_BUDGET",
    "MalformedResult",
    "McpLimits",
    "McpTool",
    "McpToolInfo",
    "OutcomeUnknown",
    "SchemaRejected",
    "ServerCaller",
    "ServerConnection",
    "ServerSpec",
    "SessionServers",
    "offered_name",
    "offered_schema",
    "result_outcome",
]

__getattr__, __dir__ = _lazy_exports(__name__)
