"""A headless transcript: what an editor receives from acp-bridge, update by update.

    python editor_samples/python/transcript.py [--image FILE] [--load] PROMPT... -- BRIDGE-ARGS...

Spawns `acp-bridge-agent BRIDGE-ARGS` as an editor would (the reference client: file system and
terminal offered, every permission allowed once), opens a session in a fresh directory (or
`--cwd DIR`), sends each PROMPT in turn and prints every `session/update` as one line, in wire
order, with the seconds since its prompt was sent: text and thought chunks joined per message,
plans with each entry's status, tool calls with their status, usage, compaction and notices.
`--image FILE` attaches that PNG/JPEG to the first prompt; `--load` ends with a `session/load`
of the session and prints what it replays. Example, against llama.cpp's server:

    python editor_samples/python/transcript.py "Plan, then do: create a.txt, b.txt and c.txt" \\
        -- --provider openai --base-url http://127.0.0.1:18080/v1 --model qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import base64
import json
import mimetypes
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from acp_bridge.client import WireMessage, spawn_bridge

_TEXT_KINDS = {
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "compaction_summary_chunk": "compaction summary",
}
_SHORT = 160


def _short(text: str, limit: int = _SHORT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _meta(update: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = update.get("_meta")
    return meta if isinstance(meta, dict) else {}


def describe(update: Mapping[str, Any]) -> str:
    """One line for one `session/update`'s `update` (text chunks are joined by the caller)."""
    kind = str(update.get("sessionUpdate"))
    if kind == "plan":
        entries = update.get("entries") or []
        marks = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
        steps = "; ".join(
            f"{marks.get(e.get('status'), '[?]')} {e.get('content')}" for e in entries
        )
        return f"plan: {steps}"
    if kind in ("tool_call", "tool_call_update"):
        title = update.get("title")
        status = update.get("status")
        line = f"{kind} {update.get('toolCallId')}: " + " ".join(
            str(part) for part in (title, status) if part
        )
        raw = update.get("rawInput")
        return line + (f" {_short(json.dumps(raw), 100)}" if raw and kind == "tool_call" else "")
    if kind == "compaction_update":
        meta = _meta(update).get("acpBridge", {})
        return f"compaction {update.get('status')}: " + ", ".join(
            f"{key} {value}" for key, value in meta.items()
        )
    if kind == "notice":
        return f"notice ({update.get('severity')}): {update.get('title')}"
    if kind == "usage_update":
        return f"usage: {update.get('used')} of {update.get('size')} tokens"
    if kind == "user_message_chunk":
        content = update.get("content") or {}
        return f"user: {_short(str(content.get('text', content.get('type'))))}"
    rest = {k: v for k, v in update.items() if k != "sessionUpdate"}
    return f"{kind}: {_short(json.dumps(rest))}"


def lines(messages: Iterable[WireMessage], start: float) -> list[str]:
    """The updates among `messages` as lines, consecutive text chunks of a message joined."""
    out: list[str] = []
    text: tuple[str, str, float] | None = None  # (label, text so far, time of its first chunk)

    def flush() -> None:
        nonlocal text
        if text is not None:
            out.append(f"{text[2]:7.1f}s  {text[0]}: {_short(text[1], 400)}")
            text = None

    for wire in messages:
        message = wire.message
        method = message.get("method")
        if method == "session/request_permission":
            flush()
            title = (message.get("params") or {}).get("toolCall", {}).get("title")
            out.append(f"{wire.at - start:7.1f}s  permission asked: {title} (allowed once)")
            continue
        if method != "session/update":
            continue
        update = (message.get("params") or {}).get("update") or {}
        label = _TEXT_KINDS.get(str(update.get("sessionUpdate")))
        if label is not None:
            chunk = str((update.get("content") or {}).get("text", ""))
            meta = _meta(update)
            if meta.get("reset"):  # spec/reset-extension.md: drop the abandoned attempt's text
                flush()
                why = f"attempt {meta.get('attempt')}, {meta.get('reason')}"
                out.append(f"{wire.at - start:7.1f}s  {label}: [reset: {why}]")
            if text is not None and text[0] == label:
                text = (label, text[1] + chunk, text[2])
            elif chunk:
                flush()
                text = (label, chunk, wire.at - start)
            continue
        flush()
        out.append(f"{wire.at - start:7.1f}s  {describe(update)}")
    flush()
    return out


def _image_block(path: Path) -> dict[str, Any]:
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    return {"type": "image", "mimeType": mime, "data": base64.b64encode(path.read_bytes()).decode()}


async def run(
    prompts: Sequence[str], bridge_args: Sequence[str], cwd: Path, image: Path | None, load: bool
) -> None:
    async with spawn_bridge(bridge_args, capture_stderr=False) as bridge:
        client = bridge.client
        # As an editor that shows acp-bridge's notices and compactions (spec/daily-use.md).
        result = await client.initialize({"session": {"notices": {}, "compaction": {}}})
        print(
            "initialize: promptCapabilities",
            json.dumps(result.get("agentCapabilities", {}).get("promptCapabilities")),
        )
        session = await client.new_session(cwd)
        print(f"session {session} in {cwd}")
        for index, prompt in enumerate(prompts):
            extra = [_image_block(image)] if image is not None and index == 0 else []
            print(f"\n> {prompt}" + (f" [+ image {image.name}]" if extra else ""))
            seen = len(client.transcript)
            start = client.transcript[-1].at if client.transcript else 0.0
            outcome = await client.prompt(session, prompt, extra)
            sys.stdout.write(
                "".join(f"{line}\n" for line in lines(client.transcript[seen:], start))
            )
            if outcome.error is not None:
                print(f"  -> error {outcome.error.get('code')}: {outcome.error.get('message')}")
            else:
                print(f"  -> stopReason {outcome.stop_reason} ({outcome.seconds:.1f} s)")
        if load:
            print("\n> session/load (what a reopened editor shows)")
            seen = len(client.transcript)
            await client.load_session(session, cwd)
            start = client.transcript[seen].at if len(client.transcript) > seen else 0.0
            sys.stdout.write(
                "".join(f"{line}\n" for line in lines(client.transcript[seen:], start))
            )


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    bridge_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, bridge_args = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prompts", nargs="+")
    parser.add_argument("--image", type=Path, help="attach this image to the first prompt")
    parser.add_argument("--cwd", type=Path, help="the session's directory (default: a new one)")
    parser.add_argument("--load", action="store_true", help="end with a session/load")
    options = parser.parse_args(argv)
    cwd = options.cwd or Path(tempfile.mkdtemp(prefix="acp-bridge-transcript-"))
    anyio.run(run, options.prompts, bridge_args, cwd.resolve(), options.image, options.load)


if __name__ == "__main__":
    main()
