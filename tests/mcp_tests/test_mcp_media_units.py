"""MCP result media, sans-IO: what the editor and the model get, each provider's request form,
the stored forms, and the bounds (MCP-MEDIA-001..004)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from acp_bridge.mcp import MEDIA_BUDGET, result_outcome
from acp_bridge.providers import (
    AssistantTurn,
    MediaPart,
    ModelRequest,
    ToolCall,
    ToolResult,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers.http import HttpProviderOptions
from acp_bridge.providers.http._anthropic import render_messages
from acp_bridge.providers.http._gemini import render_generate_content
from acp_bridge.providers.http._openai import render_chat_completions
from acp_bridge.sessions._codec import (
    content_from_json,
    content_to_json,
    message_from_json,
    message_to_json,
)
from acp_bridge.tools import MediaContent, TextContent, ToolOutcome
from acp_bridge.turn._ledger import outcome_from_json, outcome_to_json

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40).decode()
WAV = base64.b64encode(b"RIFF\x00\x00\x00\x00WAVEfmt ").decode()
PDF = base64.b64encode(b"%PDF-1.7\n").decode()
GZ = base64.b64encode(b"\x1f\x8b\x08\x00").decode()
OPTIONS = HttpProviderOptions("m", api_key="k")


def _result(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"content": list(blocks), **extra}


@pytest.mark.requirement("MCP-MEDIA-001")
def test_images_audio_and_resources_become_content_blocks_and_described_text() -> None:
    outcome = result_outcome(
        "s: t",
        _result(
            {"type": "text", "text": "Here:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///n.md", "text": "# N"}},
            {
                "type": "resource",
                "resource": {"uri": "x://a.gz", "blob": GZ, "mimeType": "application/gzip"},
            },
            {"type": "text", "text": "That is all."},
        ),
        30_000,
    )
    assert outcome.content == (
        TextContent("Here:"),
        MediaContent("image", "image/png", PNG),
        MediaContent("audio", "audio/wav", WAV),
        MediaContent("resource", "text/plain", uri="file:///n.md", text="# N"),
        MediaContent("resource", "application/gzip", GZ, uri="x://a.gz"),
        TextContent("That is all."),
    )
    assert outcome.for_model.splitlines() == [
        "Here:",
        "[image image/png, 48 bytes]",
        "[audio audio/wav, 16 bytes]",
        "[resource file:///n.md]",
        "# N",
        "[resource x://a.gz (application/gzip), 4 bytes]",
        "That is all.",
    ]
    # rawOutput keeps the result's shape, not its bytes a second time.
    assert PNG not in str(outcome.raw_output)
    assert outcome.raw_output["content"][1]["data"] == f"({len(PNG)} base64 characters)"  # type: ignore[index, call-overload]


@pytest.mark.requirement("MCP-MEDIA-004")
def test_media_past_the_budget_or_not_base64_are_described_and_carried_nowhere() -> None:
    big = base64.b64encode(b"\x00" * (MEDIA_BUDGET - 60)).decode()
    outcome = result_outcome(
        "s: t",
        _result(
            {"type": "image", "data": "@@not base64@@", "mimeType": "image/png"},
            {"type": "image", "data": PNG, "mimeType": "not a type"},
            {"type": "image", "data": big, "mimeType": "image/png"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},  # over what is left
        ),
        30_000,
    )
    kept = [c for c in outcome.content if isinstance(c, MediaContent)]
    assert [(c.mime_type, len(c.data)) for c in kept] == [
        ("application/octet-stream", len(PNG)),
        ("image/png", len(big)),
    ]
    assert outcome.for_model.splitlines() == [
        "[image image/png: its data is not base64, so it is not passed on]",
        "[image application/octet-stream, 48 bytes]",
        f"[image image/png, {MEDIA_BUDGET - 60} bytes]",
        f"[image image/png, 48 bytes: not passed on, over the {MEDIA_BUDGET}-byte limit for the "
        "media of one result]",
    ]
    assert big not in str(outcome.raw_output)  # rawOutput never repeats the bytes


@pytest.mark.requirement("MCP-MEDIA-001")
def test_an_error_result_keeps_its_media_after_the_failure_text() -> None:
    failed = result_outcome(
        "s: t",
        {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}], "isError": True},
        30_000,
    )
    assert not failed.ok
    assert failed.content == (
        TextContent("s: t failed: [image image/png, 48 bytes]"),
        MediaContent("image", "image/png", PNG),
    )


def _request(*media: MediaPart, model: str = "m") -> ModelRequest:
    call = ToolCall("call_1", "mcp__s__shot", {})
    result = ToolResult("call_1", "mcp__s__shot", "[image image/png, 48 bytes]", False, media)
    return ModelRequest(
        model=model,
        messages=(
            UserTurn(("shoot",)),
            AssistantTurn("", tool_calls=(call,)),
            ToolResults((result,)),
        ),
    )


ALL = (
    MediaPart("image/png", PNG),
    MediaPart("audio/wav", WAV),
    MediaPart("application/pdf", PDF),
    MediaPart("application/gzip", GZ),
    MediaPart("image/svg+xml", PNG),
)


@pytest.mark.requirement("MCP-MEDIA-002")
def test_openai_gets_the_images_in_a_user_message_after_the_tool_messages() -> None:
    body = render_chat_completions(_request(*ALL), "gpt-4o", OPTIONS)
    messages: Any = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2]["content"] == "[image image/png, 48 bytes]"  # text only, as the API says
    assert messages[3]["content"] == [
        {"type": "text", "text": "Images returned by the tool call call_1 (mcp__s__shot):"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]
    # A model known to take text only gets the description alone (CONTENT-003's table).
    text_only = render_chat_completions(_request(*ALL), "deepseek-chat", OPTIONS)
    assert [m["role"] for m in text_only["messages"]] == ["user", "assistant", "tool"]  # type: ignore[union-attr]


@pytest.mark.requirement("MCP-MEDIA-002")
def test_anthropic_gets_image_and_document_blocks_inside_the_tool_result() -> None:
    body = render_messages(_request(*ALL), "claude", OPTIONS)
    block: Any = body["messages"][-1]["content"][0]  # type: ignore[index]
    assert block["type"] == "tool_result"
    assert block["content"] == [
        {"type": "text", "text": "[image image/png, 48 bytes]"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
        },
    ]
    plain: Any = render_messages(_request(), "claude", OPTIONS)["messages"][-1]["content"][0]  # type: ignore[index]
    assert plain["content"] == "[image image/png, 48 bytes]"  # no media: the plain string


@pytest.mark.requirement("MCP-MEDIA-002")
def test_gemini_gets_function_response_parts_and_audio_beside_them() -> None:
    body = render_generate_content(_request(*ALL), OPTIONS)
    parts: Any = body["contents"][-1]["parts"]  # type: ignore[index]
    response = parts[0]["functionResponse"]
    assert response["response"] == {"output": "[image image/png, 48 bytes]"}
    assert response["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
    ]
    assert parts[1:] == [{"inlineData": {"mimeType": "audio/wav", "data": WAV}}]
    plain: Any = render_generate_content(_request(), OPTIONS)["contents"][-1]["parts"]  # type: ignore[index]
    assert "parts" not in plain[0]["functionResponse"]


@pytest.mark.requirement("MCP-MEDIA-003")
def test_the_journal_and_the_ledger_keep_media_exactly() -> None:
    results = ToolResults((ToolResult("c", "n", "o", False, ALL[:2]), ToolResult("d", "n", "p")))
    stored = message_to_json(results)
    assert message_from_json(stored) == results
    assert "media" not in stored["results"][1]  # type: ignore[index, call-overload]  # unchanged form
    content = (
        TextContent("t"),
        MediaContent("image", "image/png", PNG),
        MediaContent("resource", "text/markdown", uri="file:///r.md", text="# r"),
        MediaContent("resource", "application/gzip", GZ, uri="x://a.gz"),
    )
    assert content_from_json(content_to_json(content)) == content
    outcome = ToolOutcome(ok=True, for_model="x", content=content)
    assert outcome_from_json(outcome_to_json(outcome)) == outcome
