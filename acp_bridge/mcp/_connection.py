"""One MCP server of a session, connected with the official MCP Python SDK (`mcp`).

This module and `_transport` (the spec of a server and the SDK parts that reach it) are the
only ones that import the SDK, and only inside `ServerConnection.run`: a session without MCP
servers never loads it (MCP-LIFE-005). `run` connects (stdio through the
lifeline supervisor, so the server and its children die with the bridge: MCP-LIFE-004;
streamable HTTP; SSE), lists the tools, and serves until `stop()`; a `tools/list_changed`
notification lists them again (MCP-LIFE-006). Every failure is contained: it becomes the
connection's `problem` and an event for the user, never an exception out of `run`
(MCP-FAIL-001). Env values and headers never appear in a message (MCP-SECRET-001).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.mcp._names import offered_name
from acp_bridge.mcp._schema import SchemaRejected, offered_schema
from acp_bridge.mcp._tool import McpTool, McpToolInfo
from acp_bridge.mcp._transport import ServerSpec, client_info, open_transport, roots_answer

__all__ = ["OutcomeUnknown", "Report", "ServerConnection"]

_log = logging.getLogger("acp_bridge.mcp")

Report = Callable[[str, str], Awaitable[None]]
"""`report(severity, message)`: tells the user about a server (a `notice`)."""


class OutcomeUnknown(Exception):
    """A call reached the server and no answer came back (crash, hang)."""


class ServerConnection:
    """A server's connection; `state` is pending, ready, failed or stopped."""

    def __init__(
        self,
        spec: ServerSpec,
        report: Report,
        *,
        connect_timeout: float,
        call_timeout: float,
        model_limit: int,
    ) -> None:
        self.spec = spec
        self.state = "pending"
        self.problem: str | None = None
        self.tools: tuple[McpTool, ...] = ()
        self.ready = anyio.Event()  # set once ready, failed or stopped
        self._report = report
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._limit = model_limit
        self._client: Any = None
        self._stop = anyio.Event()
        self._changed = anyio.Event()
        self._scope: anyio.CancelScope | None = None

    def stop(self) -> None:
        self._stop.set()
        if self._scope is not None and self.state != "ready":
            self._scope.cancel()  # still connecting: nothing to wind down politely

    async def run(self) -> None:
        """Connects and serves until `stop()`; never raises (a failure is reported)."""
        try:
            async with anyio.create_task_group() as tg:
                self._scope = tg.cancel_scope
                if self._stop.is_set():
                    tg.cancel_scope.cancel()
                tg.start_soon(self._watch_connect, tg.cancel_scope)
                await self._serve()
                tg.cancel_scope.cancel()
        except Exception as error:
            await self._fail(f"could not be started: {_describe(error)}")
        finally:
            self._client = None
            if self.state in ("pending", "ready"):
                self.state = "stopped"
            self.ready.set()

    async def _watch_connect(self, scope: anyio.CancelScope) -> None:
        with anyio.move_on_after(self._connect_timeout):
            await self.ready.wait()
            return
        if self.state == "pending":
            await self._fail(f"did not connect within {self._connect_timeout:g} s")
            scope.cancel()

    async def _serve(self) -> None:
        from mcp import Client

        async with AsyncExitStack() as stack:
            client = Client(
                open_transport(self.spec),
                mode="legacy",  # the initialize handshake: every server speaks it
                cache=None,  # tools/list_changed must always reach the server
                message_handler=self._on_message,
                client_info=client_info(),
                # MCP-ROOTS-001: a local server is told the session's directories; sampling
                # and elicitation are refused by the SDK (MCP-SERVER-REQ-001).
                list_roots_callback=roots_answer(self.spec.roots) if self._roots else None,
            )
            await stack.enter_async_context(client)
            self._client = client
            await self._list_tools()
            if self.state == "pending":
                self.state = "ready"
                self.ready.set()
                _log.info("MCP server %r ready with %d tools", self.spec.name, len(self.tools))
            async with anyio.create_task_group() as inner:
                inner.start_soon(self._relist_on_change)
                await self._stop.wait()
                inner.cancel_scope.cancel()

    @property
    def _roots(self) -> bool:
        return self.spec.transport == "stdio" and bool(self.spec.roots)

    async def _list_tools(self) -> None:
        listed: list[Any] = []
        cursor: str | None = None
        for _ in range(100):  # a paginator that never ends cannot hang the session
            page = await self._client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        tools: dict[str, McpTool] = {}
        for item in listed:
            info = self._tool_info(item)
            if info is None:
                continue
            if info.name in tools:
                await self._report("warning", f"{self._label}: two tools named {item.name!r}")
                continue
            tools[info.name] = McpTool(info, self, self._limit)
        self.tools = tuple(tools.values())

    def _tool_info(self, item: Any) -> McpToolInfo | None:
        schema = item.input_schema if isinstance(item.input_schema, dict) else {}
        try:
            parameters = offered_schema(schema)
        except SchemaRejected as error:
            _log.warning("%s: tool %r not offered: %s", self._label, item.name, error)
            return None
        annotations = item.annotations
        return McpToolInfo(
            server=self.spec.name,
            tool=item.name,
            name=offered_name(self.spec.name, item.name),
            title=item.title or (annotations.title if annotations else None) or item.name,
            description=item.description or "",
            parameters=parameters,
            input_schema=schema,
            read_only=bool(annotations and annotations.read_only_hint),
        )

    async def _relist_on_change(self) -> None:
        # Not in the message handler: it runs in the SDK's receive loop, which must stay free
        # to deliver the answer to tools/list.
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            try:
                await self._list_tools()
            except Exception as error:
                _log.warning("%s: listing changed tools failed: %s", self._label, _describe(error))

    async def _on_message(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self._changed.set()
        elif isinstance(message, Exception):
            _log.warning("%s: %s", self._label, _describe(message))

    @property
    def _label(self) -> str:
        return f"MCP server {self.spec.name!r}"

    async def _fail(self, why: str) -> None:
        if self.state == "failed":
            return
        self.state = "failed"
        self.problem = why
        _log.warning("%s %s", self._label, why)
        try:  # told before a waiting prompt goes on without it
            await self._report("error", f"{self._label} {why}")
        finally:
            self.ready.set()

    # -- ServerCaller ----------------------------------------------------------------------

    async def call_tool(self, tool: str, arguments: JsonObject) -> Any:
        client = self._client
        if client is None or self.state != "ready":
            why = self.problem or "is not connected"
            raise ToolError(f"Not run: the {self._label} {why}.")
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED
        from pydantic import ValidationError

        try:
            with anyio.fail_after(self._call_timeout):
                result = await client.call_tool(tool, arguments)
        except TimeoutError:
            await self._report(
                "warning", f"{self._label} did not answer {tool} within {self._call_timeout:g} s"
            )
            raise OutcomeUnknown(
                f"the {self._label} did not answer within {self._call_timeout:g} s"
            ) from None
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                await self._fail("stopped during a call (it crashed or exited)")
                self.stop()
                raise OutcomeUnknown(f"the {self._label} went away during the call") from None
            raise ToolError(f"The {self._label} refused the call: {error.message}") from None
        except (ValidationError, RuntimeError) as error:  # RuntimeError: off its outputSchema
            _log.warning("%s: malformed result of %s: %s", self._label, tool, _describe(error))
            # It answered, so it may have acted: final, never run again (EFFECT-FINAL-001).
            raise ToolError(
                f"The {self._label} answered with a malformed result.", may_have_changed=True
            ) from None
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def _describe(error: BaseException) -> str:
    """A short reason, without the values of env or headers (MCP-SECRET-001)."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in error.exceptions[:3])
    if isinstance(error, OSError):
        return error.strerror or type(error).__name__
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:300]
