"""An MCP tool's image reaches the editor and the model, per provider, and survives session/load.

server-everything (npm, stdio) answers `get-tiny-image` with a real PNG between two text
blocks. The bridge runs behind each provider's real HTTP adapter at a loopback server: the
first reply calls the tool, the second request must carry the image in that provider's
tool-result format (captured request bodies), the editor's `tool_call_update` must carry it as
an ACP image block (schema-validated), and `session/load` must replay it and send it again.
"""

from __future__ import annotations

import base64
import itertools
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import pytest
from bridge import running_bridge, scripted_config
from daily.test_daily_instructions import PROVIDERS
from loopback_http import LoopbackServer, sse, sse_reply
from mcp_tests.mcpkit import MCP_WAIT, RecordingProvider, npm_servers

from acp_bridge.providers.http import HttpProviderOptions

pytestmark = [pytest.mark.anyio, pytest.mark.npm]

TOOL = "mcp__everything__get-tiny-image"


def _openai_call() -> Any:
    call = {"index": 0, "id": "call_1", "type": "function"}
    call["function"] = {"name": TOOL, "arguments": "{}"}
    chunk = sse({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    stop = sse({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return sse_reply(chunk, stop, sse("[DONE]"))


def _anthropic_call() -> Any:
    def event(kind: str, **fields: Any) -> str:
        return sse({"type": kind, **fields}, event=kind)

    message = {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": []}
    use = {"type": "tool_use", "id": "toolu_1", "name": TOOL, "input": {}}
    return sse_reply(
        event("message_start", message=message),
        event("content_block_start", index=0, content_block=use),
        event(
            "content_block_delta", index=0, delta={"type": "input_json_delta", "partial_json": "{}"}
        ),
        event("content_block_stop", index=0),
        event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 1}),
        event("message_stop"),
    )


def _gemini_call() -> Any:
    part = {"functionCall": {"name": TOOL, "args": {}}}
    candidate = {"content": {"parts": [part], "role": "model"}, "finishReason": "STOP"}
    return sse_reply(sse({"candidates": [candidate], "responseId": "r"}))


CALLS = {"openai": _openai_call, "anthropic": _anthropic_call, "gemini": _gemini_call}


def tool_images(kind: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(media type, base64) of every image a request body carries as a tool's result."""
    found: list[tuple[str, str]] = []
    if kind == "openai":
        messages = body["messages"]
        for before, message in itertools.pairwise(messages):
            # After the batch's tool messages, one user message with image_url parts.
            if message["role"] == "user" and before["role"] == "tool":
                parts = message["content"]
                assert parts[0]["type"] == "text"
                assert parts[0]["text"].startswith("Images returned by the tool call ")
                for part in parts[1:]:
                    head, data = part["image_url"]["url"].split(",", 1)
                    found.append((head.removeprefix("data:").removesuffix(";base64"), data))
    elif kind == "anthropic":
        for message in body["messages"]:
            for block in message["content"]:
                if block["type"] == "tool_result" and isinstance(block["content"], list):
                    assert block["content"][0]["type"] == "text"
                    for inner in block["content"][1:]:
                        assert inner["type"] == "image"
                        source = inner["source"]
                        found.append((source["media_type"], source["data"]))
    else:
        for content in body["contents"]:
            for part in content["parts"]:
                response = part.get("functionResponse")
                if response is not None:
                    for inner in response.get("parts", []):
                        blob = inner["inlineData"]
                        found.append((blob["mimeType"], blob["data"]))
    return found


def _everything() -> dict[str, Any]:
    modules = npm_servers()
    node = shutil.which("node")
    assert node is not None
    entry = modules / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    return {"name": "everything", "command": node, "args": [str(entry), "stdio"], "env": []}


def _images_shown(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        item["content"]
        for u in updates
        if u["sessionUpdate"] in ("tool_call", "tool_call_update")
        for item in u.get("content") or []
        if item["type"] == "content" and item["content"]["type"] == "image"
    ]


@pytest.mark.requirement("MCP-MEDIA-001")
@pytest.mark.requirement("MCP-MEDIA-002")
@pytest.mark.requirement("MCP-MEDIA-003")
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
async def test_an_mcp_image_reaches_the_editor_and_each_provider(tmp_path: Path, kind: str) -> None:
    provider_type, answer = PROVIDERS[kind]
    server = _everything()
    async with LoopbackServer([CALLS[kind](), answer(), answer()]) as loopback:
        options = HttpProviderOptions("m", base_url=loopback.base_url, api_key="k")
        config = scripted_config(tmp_path / "s", provider_type(options), models=("gpt-4o",))
        async with running_bridge(config, wait=MCP_WAIT) as ed:
            await ed.initialize()
            made = await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": [server]})
            session = made["sessionId"]
            reply = await ed.prompt(session, "show me the tiny image")
            assert reply["result"]["stopReason"] == "end_turn"
            shown = _images_shown(ed.updates(session))
        # The editor saw the image as an ACP image block inside the tool call's content.
        assert len(shown) == 1
        image = shown[0]
        assert image["mimeType"] == "image/png"
        assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
        # The model's next request carries the same bytes as the tool's result.
        second = loopback.requests[1].json()
        assert tool_images(kind, second) == [("image/png", image["data"])]
        assert "[image image/png, " in str(second)  # the text describes it as well

        # session/load replays it from the journal; the next request sends it again.
        async with running_bridge(config, wait=MCP_WAIT) as ed:
            await ed.initialize()
            params = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
            await ed.call("session/load", params)
            assert _images_shown(ed.updates(session)) == [image]
            reply = await ed.prompt(session, "and again?")
            assert reply["result"]["stopReason"] == "end_turn"
        third = loopback.requests[2].json()
        assert tool_images(kind, third) == [("image/png", image["data"])]


@pytest.mark.requirement("MCP-ROOTS-001")
async def test_server_filesystem_is_confined_to_the_sessions_roots(tmp_path: Path) -> None:
    """server-filesystem started without directories takes the client's roots: the session's
    cwd and additional directories, and nothing else."""
    work, docs = tmp_path / "work", tmp_path / "docs"
    work.mkdir()
    docs.mkdir()
    (work / "hello.txt").write_text("hello from the workspace\n")
    (docs / "guide.md").write_text("# guide\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    read = "mcp__files__read_text_file"
    script = {
        "name": "roots",
        "description": "reads inside and outside the session's roots",
        "calls": [
            {
                "attempts": [
                    [
                        {"tool_call": read, "arguments": {"path": str(work / "hello.txt")}},
                        {"tool_call": read, "arguments": {"path": str(docs / "guide.md")}},
                        {"tool_call": read, "arguments": {"path": str(tmp_path / "secret.txt")}},
                        {"finish": "auto"},
                    ]
                ]
            },
            {"attempts": [[{"text": "Read."}, {"finish": "stop"}]]},
        ],
    }
    provider = RecordingProvider(script)
    node = shutil.which("node")
    assert node is not None
    entry = npm_servers() / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    # The server applies the roots it asked for asynchronously, after our answer; a call that
    # comes first is refused. A model takes seconds to call; the scripted one does not, so the
    # prompt waits for the server's own word that it took the roots (its stderr, via a FIFO).
    log = tmp_path / "files.stderr"
    os.mkfifo(log)
    wrapped = ["-c", 'exec "$0" "$1" 2>"$2"', node, str(entry), str(log)]
    files = {"name": "files", "command": "/bin/sh", "args": wrapped, "env": []}
    took_roots = anyio.Event()

    def drain() -> None:  # until the server exits, so its stderr never blocks it
        with log.open("rb") as err:
            for line in err:
                if b"Updated allowed directories from MCP roots" in line:
                    anyio.from_thread.run_sync(took_roots.set)

    config = scripted_config(tmp_path / "s", provider)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: anyio.to_thread.run_sync(drain, abandon_on_cancel=True))
        async with running_bridge(config, wait=MCP_WAIT) as ed:
            await ed.initialize()
            params = {"cwd": str(work), "additionalDirectories": [str(docs)], "mcpServers": [files]}
            session = (await ed.call("session/new", params))["sessionId"]
            with anyio.fail_after(MCP_WAIT):
                await took_roots.wait()
            reply = await ed.prompt(session, "read them")
            assert reply["result"]["stopReason"] == "end_turn"
        tg.cancel_scope.cancel()
    (hello, guide, secret) = provider.tool_results()
    assert hello[1].strip() == "hello from the workspace"
    assert guide[1].strip() == "# guide"
    assert secret[2] is True  # outside every root: refused by the server
    assert "outside\n" not in secret[1]
