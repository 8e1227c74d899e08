"""Project instructions in the system prompt, per provider, shown to the user (14.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from loopback_http import LoopbackServer, sse, sse_reply

from acp_bridge.agent._instructions import load_instructions
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpProviderOptions,
    OpenAIProvider,
)

pytestmark = pytest.mark.anyio


def _openai_answer() -> Any:
    chunk = sse({"id": "c", "choices": [{"index": 0, "delta": {"content": "ok"}}]})
    stop = sse({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return sse_reply(chunk, stop, sse("[DONE]"))


def _anthropic_answer() -> Any:
    def event(kind: str, **fields: Any) -> str:
        return sse({"type": kind, **fields}, event=kind)

    message = {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": []}
    return sse_reply(
        event("message_start", message=message),
        event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        event("content_block_delta", index=0, delta={"type": "text_delta", "text": "ok"}),
        event("content_block_stop", index=0),
        event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 1}),
        event("message_stop"),
    )


def _gemini_answer() -> Any:
    candidate = {"content": {"parts": [{"text": "ok"}], "role": "model"}, "finishReason": "STOP"}
    return sse_reply(sse({"candidates": [candidate], "responseId": "r"}))


PROVIDERS = {
    "openai": (OpenAIProvider, _openai_answer),
    "anthropic": (AnthropicProvider, _anthropic_answer),
    "gemini": (GeminiProvider, _gemini_answer),
}


def system_of(kind: str, body: dict[str, Any]) -> str:
    """The system prompt as each provider's request body carries it."""
    if kind == "openai":
        (system,) = [m["content"] for m in body["messages"] if m["role"] == "system"]
        return str(system)
    if kind == "anthropic":
        return str(body["system"])
    return str(body["systemInstruction"]["parts"][0]["text"])


def workspace(tmp_path: Path) -> tuple[Path, Path]:
    work, extra = tmp_path / "work", tmp_path / "extra"
    work.mkdir()
    extra.mkdir()
    (work / "AGENTS.md").write_text("Use tabs. Run make check before you finish.\n")
    (work / "CLAUDE.md").write_text("Never touch vendor/.\n")
    (extra / "AGENTS.md").write_text("The extra dir is the docs site.\n")
    return work, extra


@pytest.mark.requirement("INSTR-001")
@pytest.mark.requirement("INSTR-002")
@pytest.mark.requirement("INSTR-003")
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
async def test_instructions_reach_each_provider_in_its_format(tmp_path: Path, kind: str) -> None:
    work, extra = workspace(tmp_path)
    provider_type, answer = PROVIDERS[kind]
    async with LoopbackServer([answer()]) as server:
        options = HttpProviderOptions("m", base_url=server.base_url, api_key="k")
        provider = provider_type(options)
        config = scripted_config(
            tmp_path / "s",
            provider,
            system_prompt="You are the team's agent.",
            append_system_prompt="Answer in French.",
        )
        async with running_bridge(config) as ed:
            await ed.call(
                "initialize",
                {"protocolVersion": 1, "clientCapabilities": {"session": {"notices": {}}}},
            )
            result = await ed.call(
                "session/new",
                {"cwd": str(work), "additionalDirectories": [str(extra)], "mcpServers": []},
            )
            session = result["sessionId"]
            reply = await ed.prompt(session, "hi")
            assert reply["result"]["stopReason"] == "end_turn"
            notices = [u for u in ed.updates(session) if u["sessionUpdate"] == "notice"]
        body = server.requests[0].json()
    system = system_of(kind, body)
    order = [
        "You are the team's agent.",
        "Answer in French.",
        f"The user's workspace is {work}",
        str(extra),
        "Use tabs. Run make check",
        "Never touch vendor/.",
        "The extra dir is the docs site.",
    ]
    positions = [system.index(part) for part in order]
    assert positions == sorted(positions)
    assert f'path="{work / "AGENTS.md"}"' in system
    (notice,) = notices  # INSTR-003: told once, on the first prompt
    assert notice["title"] == "Loaded project instructions: AGENTS.md, CLAUDE.md, AGENTS.md"
    assert str(extra / "AGENTS.md") in notice["description"]


@pytest.mark.requirement("INSTR-002")
def test_instruction_files_are_size_bounded(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("x" * 100_000)
    (tmp_path / "CLAUDE.md").write_text("y" * 100_000)
    (tmp_path / "GEMINI.md").write_text("z" * 10)
    loaded = load_instructions((tmp_path,))
    assert [f.loaded for f in loaded.files] == [32 * 1024, 32 * 1024]  # 64 KiB in all
    assert all(f.truncated for f in loaded.files)
    assert "truncated" in loaded.section()
    assert "(97.7 KiB, truncated)" in (loaded.notice().description or "")  # type: ignore[union-attr]
    assert load_instructions((tmp_path / "nowhere",)).notice() is None


@pytest.mark.requirement("INSTR-004")
def test_system_prompt_settings(tmp_path: Path) -> None:
    from acp_bridge.cli._run import DEFAULT_SYSTEM_PROMPT, build_config
    from acp_bridge.cli._settings import resolve

    config_file = tmp_path / "config.toml"
    config_file.write_text('append_system_prompt = "from the file"\n')
    env = {"ACP_BRIDGE_SYSTEM_PROMPT": "from the environment"}
    config = build_config(resolve({}, env, str(config_file)))
    assert config.system_prompt == "from the environment"  # replaces the built-in one
    assert config.append_system_prompt == "from the file"
    flagged = build_config(resolve({"append_system_prompt": "flag"}, {}, str(config_file)))
    assert flagged.system_prompt == DEFAULT_SYSTEM_PROMPT
    assert flagged.append_system_prompt == "flag"
