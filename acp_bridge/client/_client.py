"""A small ACP client over the project's JSON-RPC peer: the editor side, for reference.

`connect(transport)` runs an `AcpClient` on any byte transport; `spawn_bridge` (in
`_process`) launches acp-bridge the way editors do and connects to it. The client:

- sends `initialize` advertising `fs` and `terminal`, which it serves on the real disk and
  real subprocesses, confined to each session's directories;
- answers `session/request_permission` with a `PermissionPolicy` (allow once by default);
- records every message in both directions, in wire order (`transcript`), and per session
  the events an editor reduces to a view (`events`; see `acp_bridge.client.reduce`).

Events are recorded by the peer's trace hook, which sees inbound messages in the order they
were read; the handlers themselves run concurrently, so they would not keep that order.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import anyio
from anyio.abc import TaskGroup

from acp_bridge import __version__
from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.client._events import EditorEvent, PermissionAsked, PromptSent
from acp_bridge.client._fs import read_text_file, write_text_file
from acp_bridge.client._outcome import PromptOutcome, WireMessage
from acp_bridge.client._permission import PermissionPolicy, allow_once
from acp_bridge.client._terminals import TerminalHost
from acp_bridge.client._view import EditorView, ReduceMode, reduce
from acp_bridge.errors import InvalidParams, MethodNotFound, PeerError, PeerGone
from acp_bridge.jsonrpc import JsonRpcPeer, Reply
from acp_bridge.wire import Transport

__all__ = ["AcpClient", "connect"]

PROTOCOL_VERSION = 1


class AcpClient:
    """The client side of one ACP connection (it is the peer's `jsonrpc.Handler`)."""

    def __init__(self, transport: Transport, *, policy: PermissionPolicy = allow_once) -> None:
        self.policy = policy
        self.transcript: list[WireMessage] = []
        self.agent_info: JsonObject = {}
        self._peer = JsonRpcPeer(transport, trace=self._trace)
        self._roots: dict[str, tuple[Path, ...]] = {}
        self._events: dict[str, list[EditorEvent]] = {}
        self._asked: dict[int, tuple[str, int]] = {}
        self._terminals: TerminalHost | None = None

    # -- the client's requests -------------------------------------------------------------

    async def initialize(self, extra: JsonObject | None = None) -> JsonObject:
        """`initialize`, advertising file system and terminal support, and the `extra`
        client capabilities (such as `{"session": {"notices": {}}}`)."""
        result = await self._call(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": {
                    "fs": {"readTextFile": True, "writeTextFile": True},
                    "terminal": True,
                    **(extra or {}),
                },
                "clientInfo": {
                    "name": "acp-bridge-reference-client",
                    "title": "acp-bridge reference client",
                    "version": __version__,
                },
            },
        )
        info = result.get("agentInfo")
        self.agent_info = info if isinstance(info, dict) else {}
        return result

    async def new_session(self, cwd: Path | str, additional: Sequence[Path | str] = ()) -> str:
        """`session/new` in `cwd` (absolute); fs and terminals stay inside these directories."""
        params: JsonObject = {"cwd": str(cwd), "mcpServers": []}
        if additional:
            params["additionalDirectories"] = [str(d) for d in additional]
        result = await self._call("session/new", params)
        session_id = str(result["sessionId"])
        roots = tuple([Path(await anyio.Path(d).resolve()) for d in (cwd, *additional)])
        self._roots[session_id] = roots
        self._events.setdefault(session_id, [])
        return session_id

    async def load_session(self, session_id: str, cwd: Path | str) -> JsonObject:
        """`session/load`: the agent replays the stored conversation as `session/update`s,
        recorded as the session's events, before it answers."""
        result = await self._call(
            "session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
        )
        roots = (Path(await anyio.Path(cwd).resolve()),)
        self._roots[session_id] = roots
        self._events.setdefault(session_id, [])
        return result

    async def prompt(
        self, session_id: str, text: str, extra: Sequence[JsonObject] = ()
    ) -> PromptOutcome:
        """`session/prompt` with one text block (then the `extra` content blocks, such as an
        image); returns the turn as the editor saw it."""
        events = self._events.setdefault(session_id, [])
        start = len(events)
        events.append(PromptSent(text))
        began = time.monotonic()
        blocks: list[JsonValue] = [{"type": "text", "text": text}, *extra]
        params: JsonObject = {"sessionId": session_id, "prompt": blocks}
        result: JsonObject | None = None
        error: JsonObject | None = None
        try:
            result = await self._call("session/prompt", params)
        except PeerGone:
            raise
        except PeerError as exc:
            error = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
        return PromptOutcome(
            session_id,
            text,
            tuple(events[start:]),
            result,
            error,
            time.monotonic() - began,
        )

    async def cancel(self, session_id: str) -> None:
        """`session/cancel`: the running turn ends with `stopReason: cancelled`."""
        await self._peer.notify("session/cancel", {"sessionId": session_id})

    async def _call(self, method: str, params: JsonObject) -> JsonObject:
        result = await self._peer.request(method, params)
        return result if isinstance(result, dict) else {}

    # -- what was seen ---------------------------------------------------------------------

    def events(self, session_id: str) -> tuple[EditorEvent, ...]:
        """Every event of the session so far (prompts, updates, permission prompts)."""
        return tuple(self._events.get(session_id, ()))

    def view(self, session_id: str, mode: ReduceMode | str = ReduceMode.RESET_AWARE) -> EditorView:
        """The whole session as an editor of kind `mode` shows it now."""
        return reduce(self.events(session_id), mode)

    @property
    def permission_prompts(self) -> tuple[PermissionAsked, ...]:
        return tuple(
            e for events in self._events.values() for e in events if isinstance(e, PermissionAsked)
        )

    def _trace(self, direction: str, message: JsonValue) -> None:
        if not isinstance(message, dict):
            return
        self.transcript.append(WireMessage("sent" if direction == "out" else "received", message))
        if direction != "in":
            return
        method, params = message.get("method"), message.get("params")
        if not isinstance(params, dict) or method not in (
            "session/update",
            "session/request_permission",
        ):
            return
        events = self._events.setdefault(str(params.get("sessionId")), [])
        if method == "session/request_permission":
            # Filled in with the answer by the handler, which gets this very params object.
            self._asked[id(params)] = (str(params.get("sessionId")), len(events))
            events.append(PermissionAsked(params))
        else:
            events.append(params)

    # -- the agent's requests (jsonrpc.Handler) ----------------------------------------------

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply:
        if not isinstance(params, dict):
            raise InvalidParams(f"params of {method} must be an object")
        if method == "session/request_permission":
            return self._answer_permission(params)
        roots = self._roots.get(str(params.get("sessionId")))
        if roots is None:
            raise InvalidParams("unknown session", {"field": "sessionId"})
        if method == "fs/read_text_file":
            return await read_text_file(params, roots)
        if method == "fs/write_text_file":
            return await write_text_file(params, roots)
        terminals = self._terminals
        if terminals is not None and method.startswith("terminal/"):
            if method == "terminal/create":
                return await terminals.create(params, roots)
            if method == "terminal/output":
                return await terminals.output(params)
            if method == "terminal/wait_for_exit":
                return await terminals.wait_for_exit(params)
            if method == "terminal/kill":
                return await terminals.kill(params)
            if method == "terminal/release":
                return await terminals.release(params)
        raise MethodNotFound(f"Method not found: {method}")

    async def handle_notification(self, method: str, params: JsonValue) -> None:
        """`session/update`s are recorded by the trace, in wire order; nothing else to do."""

    def _answer_permission(self, params: dict[str, JsonValue]) -> JsonObject:
        chosen = self.policy(params)
        where = self._asked.pop(id(params), None)
        if where is not None:
            session_id, index = where
            self._events[session_id][index] = PermissionAsked(params, chosen)
        if chosen is None:
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": chosen}}

    # -- running -------------------------------------------------------------------------

    async def _serve(self, task_group: TaskGroup, done: anyio.Event) -> None:
        self._terminals = TerminalHost(task_group)
        try:
            await self._peer.serve(self)
        finally:
            done.set()

    def _close_terminals(self) -> None:
        if self._terminals is not None:
            self._terminals.close()


@contextlib.asynccontextmanager
async def connect(
    transport: Transport, *, policy: PermissionPolicy = allow_once, close_timeout: float = 10.0
) -> AsyncIterator[AcpClient]:
    """Runs an `AcpClient` on `transport` for the duration of the block.

    On exit the client closes its side (the agent sees end of input), waits up to
    `close_timeout` seconds for the agent to finish and close its side, then stops.
    """
    client = AcpClient(transport, policy=policy)
    done = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(client._serve, tg, done)
        try:
            yield client
        finally:
            client._close_terminals()
            with anyio.CancelScope(shield=True):
                await transport.aclose()
                with anyio.move_on_after(close_timeout):
                    await done.wait()
            tg.cancel_scope.cancel()
