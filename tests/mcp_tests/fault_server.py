"""A small MCP server (official Python SDK, stdio) for the bridge's fault tests.

Every call it receives is appended as one JSON line to the file named by FAULT_SERVER_LOG, so a
test counts what reached the server. Tools: refund (a side effect), echo (readOnlyHint), fail
(an isError result), crash (the process exits mid-call), hang (never answers), malformed (answers
with a result that is not a CallToolResult), add_tool (a new tool and tools/list_changed),
spawn_child (a grandchild process, for the orphan checks), snapshot (a side effect answering
with text, a PNG image and a binary resource), and ask_client (sends the client a
sampling/createMessage, elicitation/create or roots/list request and answers with what came
back: the roots as JSON, or the MCP error's code and message).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from typing import Literal

import anyio
from mcp.server import stdio as stdio_transport
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    SamplingMessage,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

server = MCPServer("fault-server")
LOG = os.environ.get("FAULT_SERVER_LOG")


def _log(tool: str, **arguments: object) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as out:
            out.write(json.dumps({"tool": tool, "pid": os.getpid(), **arguments}) + "\n")


@server.tool(description="Refund an order (a side effect: money moves).")
def refund(order_id: str, amount: str) -> str:
    _log("refund", order_id=order_id, amount=amount)
    return f"Refunded {amount} on order {order_id}."


@server.tool(description="Echo text back.", annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    _log("echo", text=text)
    return text


@server.tool(description="Always fails.")
def fail(reason: str) -> str:
    _log("fail", reason=reason)
    raise ToolError(f"refused: {reason}")


@server.tool(description="Exits the server process in the middle of the call.")
def crash() -> str:
    _log("crash")
    os._exit(3)


@server.tool(description="Never answers.")
async def hang() -> str:
    _log("hang")
    await anyio.sleep_forever()
    return "never"


@server.tool(description="Answers with a malformed result.")
async def malformed(ctx: Context) -> str:
    _log("malformed")
    line = {"jsonrpc": "2.0", "id": int(ctx.request_id), "result": {"content": "not a list"}}
    # The SDK moved the wire off fd 1 (print() goes to stderr); write on the wire itself.
    wire = stdio_transport._claims[1].private_fd
    os.write(wire if wire is not None else 1, (json.dumps(line) + "\n").encode())
    await anyio.sleep_forever()
    return "never"


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


@server.tool(description="Takes a snapshot (a side effect) and returns it as an image.")
def snapshot(name: str) -> list[TextContent | ImageContent | EmbeddedResource]:
    _log("snapshot", name=name)
    blob = BlobResourceContents(
        uri=f"snap://{name}.bin",
        blob=base64.b64encode(b"\x00\x01raw").decode(),
        mimeType="application/octet-stream",
    )
    return [
        TextContent(type="text", text=f"Snapshot {name}:"),
        ImageContent(type="image", data=base64.b64encode(PNG).decode(), mimeType="image/png"),
        EmbeddedResource(type="resource", resource=blob),
    ]


@server.tool(
    description="Sends the client a request; says what came back.",
    annotations=ToolAnnotations(readOnlyHint=True),
)
async def ask_client(request: str, ctx: Context) -> str:
    _log("ask_client", request=request)
    session = ctx.request_context.session
    try:
        if request == "sampling":
            message = SamplingMessage(role="user", content=TextContent(type="text", text="hi"))
            await session.create_message([message], max_tokens=10)
        elif request == "elicitation":
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            await session.elicit_form("Your name?", schema)
        else:
            listed = await session.list_roots()
            return json.dumps([{"uri": str(r.uri), "name": r.name} for r in listed.roots])
    except MCPError as error:
        return f"error {error.code}: {error.message}"
    return "answered"


class Item(BaseModel):
    sku: str = Field(pattern=r"^[A-Z]{3}-[0-9]+$", description="Stock code")
    qty: int = Field(ge=1, le=99, description="How many")


@server.tool(
    description="Prices an order (a schema with $defs, anyOf null, const, pattern).",
    annotations=ToolAnnotations(readOnlyHint=True),
)
def price(items: list[Item], note: str | None = None, speed: Literal["fast"] = "fast") -> str:
    _log("price", count=len(items))
    return f"{sum(i.qty for i in items)} item(s), {speed}"


def late(text: str) -> str:
    """A tool that exists only after add_tool ran."""
    _log("late", text=text)
    return f"late: {text}"


@server.tool(description="Adds the tool 'late' and tells the client the list changed.")
async def add_tool(ctx: Context) -> str:
    _log("add_tool")
    server.add_tool(late, name="late", annotations=ToolAnnotations(readOnlyHint=True))
    await ctx.request_context.session.send_tool_list_changed()
    return "added"


@server.tool(description="Starts a grandchild process and returns its pid.")
def spawn_child() -> str:
    child = subprocess.Popen(["sleep", "1000"], stdin=subprocess.DEVNULL)
    _log("spawn_child", child=child.pid)
    return str(child.pid)


if __name__ == "__main__":
    _log("started")
    server.run()
