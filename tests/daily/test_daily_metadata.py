"""What is known of a model: the provider's listing, the user's `model_info`, the tables (14.2)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from loopback_http import LoopbackServer, json_reply, sse, sse_reply
from turn.turnkit import FakeProvider, finish, start, text

from acp_bridge.cli._model_list import model_lister
from acp_bridge.cli._settings import SettingsError, resolve
from acp_bridge.providers import ModelInfo, Usage
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpProviderOptions,
    OpenAIProvider,
)
from acp_bridge.providers.http._models import listed_info

pytestmark = pytest.mark.anyio

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-pixels").decode()
IMAGE_PROMPT = [
    {"type": "text", "text": "What is this?"},
    {"type": "image", "data": PNG, "mimeType": "image/png"},
]


def _openai_answer() -> Any:
    chunk = sse({"id": "c", "choices": [{"index": 0, "delta": {"content": "ok"}}]})
    stop = sse({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    # OpenRouter's usage chunk carries the call's cost (USAGE-004).
    used = sse(
        {
            "id": "c",
            "choices": [],
            "usage": {"prompt_tokens": 900, "completion_tokens": 12, "cost": 0.002},
        }
    )
    return sse_reply(chunk, stop, used, sse("[DONE]"))


def _anthropic_answer() -> Any:
    def event(kind: str, **fields: Any) -> str:
        return sse({"type": kind, **fields}, event=kind)

    message = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "c",
        "content": [],
        "usage": {"input_tokens": 900, "output_tokens": 1},
    }
    return sse_reply(
        event("message_start", message=message),
        event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        event("content_block_delta", index=0, delta={"type": "text_delta", "text": "ok"}),
        event("content_block_stop", index=0),
        event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 12}),
        event("message_stop"),
    )


def _gemini_answer() -> Any:
    candidate = {"content": {"parts": [{"text": "ok"}], "role": "model"}, "finishReason": "STOP"}
    meta = {"promptTokenCount": 900, "candidatesTokenCount": 12}
    return sse_reply(sse({"candidates": [candidate], "usageMetadata": meta, "responseId": "r"}))


# Each provider's listing, with the window in the field that provider (or server) uses.
LISTINGS: dict[str, tuple[type[Any], Any, str, dict[str, Any], int]] = {
    "llama.cpp": (
        OpenAIProvider,
        _openai_answer,
        "/tmp/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",  # a single-model server's id
        {
            "object": "list",
            "data": [
                {
                    "id": "/tmp/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                    "owned_by": "llamacpp",
                    "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]},
                    "meta": {"n_ctx": 8192, "n_ctx_train": 32768},
                }
            ],
        },
        8192,
    ),
    "openrouter": (
        OpenAIProvider,
        _openai_answer,
        "mistralai/devstral-small",
        {
            "data": [
                {"id": "openai/gpt-4o", "context_length": 128000},
                {
                    "id": "mistralai/devstral-small",
                    "context_length": 262144,
                    "architecture": {"input_modalities": ["text"]},
                },
            ]
        },
        262144,
    ),
    "anthropic": (
        AnthropicProvider,
        _anthropic_answer,
        "claude-mine-1",
        {"data": [{"id": "claude-mine-1", "type": "model", "max_input_tokens": 500000}]},
        500000,
    ),
    "gemini": (
        GeminiProvider,
        _gemini_answer,
        "gemini-mine",
        {
            "models": [
                {
                    "name": "models/gemini-mine",
                    "inputTokenLimit": 65536,
                    "supportedGenerationMethods": ["generateContent"],
                }
            ]
        },
        65536,
    ),
}


def kinds(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


@pytest.mark.requirement("USAGE-005")
@pytest.mark.parametrize("server_kind", sorted(LISTINGS))
async def test_usage_size_from_the_providers_model_metadata(
    tmp_path: Path, server_kind: str
) -> None:
    provider_type, answer, listed_model, listing, window = LISTINGS[server_kind]
    # A llama.cpp server serves its one model under any name the user gives it.
    configured = "local-model" if server_kind == "llama.cpp" else listed_model
    async with LoopbackServer([answer()], models=json_reply(200, listing)) as server:
        options = HttpProviderOptions(configured, base_url=server.base_url, api_key="k")
        fetched = anyio.Event()
        real = model_lister(lambda key: provider_type(options), lambda: "k")

        async def list_models() -> Mapping[str, ModelInfo]:
            try:
                return await real()
            finally:
                fetched.set()

        config = scripted_config(
            tmp_path / "s", provider_type(options), models=(configured,), list_models=list_models
        )
        async with running_bridge(config) as ed:
            await ed.initialize()
            session = await ed.new_session(tmp_path)
            with anyio.fail_after(30):
                await fetched.wait()
            await anyio.wait_all_tasks_blocked()
            if server_kind in ("llama.cpp", "openrouter"):
                # The listing says the model takes text only (no table knows these names):
                # the image is refused by name, before any model call.
                refused = await ed.request(
                    "session/prompt", {"sessionId": session, "prompt": IMAGE_PROMPT}
                )
                assert refused["error"]["code"] == -32602
                assert f"{configured!r} takes text only" in refused["error"]["message"]
            reply = await ed.prompt(session, "hi")
            assert reply["result"]["stopReason"] == "end_turn"
            (update,) = kinds(ed.updates(session), "usage_update")
        assert len(server.requests) == 1  # the refused image never reached the server
    assert update["used"] == 912
    assert update["size"] == window
    assert update["_meta"]["acpBridge"]["sizeSource"] == "provider"
    if provider_type is OpenAIProvider:
        assert update["cost"] == {"amount": 0.002, "currency": "USD"}


@pytest.mark.requirement("USAGE-005")
def test_listing_entries_without_metadata_say_nothing() -> None:
    assert listed_info({"id": "gpt-4o", "object": "model"}) == ModelInfo()
    assert listed_info({"id": "m", "max_model_len": 32768}) == ModelInfo(context_window=32768)
    vision = listed_info({"id": "m", "architecture": {"input_modalities": ["image", "text"]}})
    assert vision.inputs == frozenset({"text", "image"})
    assert listed_info({"id": "m", "context_length": "big"}) == ModelInfo()


def _config_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.requirement("MODEL-INFO-001")
def test_model_info_is_read_from_the_config_file(tmp_path: Path) -> None:
    path = _config_file(
        tmp_path,
        '[model_info."my-coder"]\ninput = ["text"]\ncontext_window = 16384\n'
        '[model_info."deepseek-vl"]\ninput = ["text", "image"]\n',
    )
    settings = resolve({}, {}, path)
    assert settings.model_info == {
        "my-coder": ModelInfo(frozenset({"text"}), 16384),
        "deepseek-vl": ModelInfo(frozenset({"text", "image"}), None),
    }
    from acp_bridge.cli._run import build_config

    assert build_config(settings).model_info == settings.model_info


@pytest.mark.requirement("MODEL-INFO-001")
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('model_info = "x"', "must be a table of model ids"),
        ('[model_info."m"]\ninput = ["image"]', "list `text` and any of `image`, `audio`"),
        ('[model_info."m"]\ninput = ["text", "video"]', "(unknown: video)"),
        ('[model_info."m"]\ncontext_window = 0', "context_window must be a whole number"),
        ('[model_info."m"]\nwindow = 5', "unknown key(s) window; the keys are input"),
    ],
)
def test_a_malformed_model_info_names_the_fix(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(SettingsError) as raised:
        resolve({}, {}, _config_file(tmp_path, text))
    assert expected in str(raised.value)
    assert "key model_info" in str(raised.value)


@pytest.mark.requirement("MODEL-INFO-001")
async def test_declarations_win_over_the_tables(tmp_path: Path) -> None:
    # deepseek- is in the text-only table; the user declares their deepseek-vl2 takes images.
    # gpt-4o is not; the user declares it text only (say, a local server under that name).
    declared = {
        "deepseek-vl2": ModelInfo(frozenset({"text", "image"}), 4096),
        "gpt-4o": ModelInfo(frozenset({"text"}), None),
    }
    provider = FakeProvider(
        [start(), *text("A cat."), Usage(100, 5), finish()],
        [start(), *text("ok"), Usage(100, 5), finish()],
    )
    config = scripted_config(
        tmp_path / "s", provider, models=("deepseek-vl2", "gpt-4o"), model_info=declared
    )
    async with running_bridge(config) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        reply = await ed.call("session/prompt", {"sessionId": session, "prompt": IMAGE_PROMPT})
        assert reply["stopReason"] == "end_turn"
        (update,) = kinds(ed.updates(session), "usage_update")
        assert (update["size"], update["_meta"]["acpBridge"]["sizeSource"]) == (4096, "config")
        await ed.call(
            "session/set_config_option",
            {"sessionId": session, "configId": "model", "value": "gpt-4o"},
        )
        refused = await ed.request("session/prompt", {"sessionId": session, "prompt": IMAGE_PROMPT})
        assert refused["error"]["code"] == -32602
        assert "'gpt-4o' takes text only" in refused["error"]["message"]


@pytest.mark.requirement("PICK-003")
@pytest.mark.requirement("USAGE-005")
async def test_by_default_the_real_bridge_lists_the_servers_models(tmp_path: Path) -> None:
    """The command as an editor launches it, no fetch setting: the picker gets the server's
    models and usage its window, at a loopback llama.cpp-like server."""
    from e2e.stdio_editor import StdioEditor, spawned_bridge
    from subprocess_util import bridge_argv, isolated_env

    _, answer, listed_model, listing, window = LISTINGS["llama.cpp"]
    with anyio.fail_after(90), (tmp_path / "stderr.log").open("w+b") as stderr:
        async with LoopbackServer([answer()], models=json_reply(200, listing)) as server:
            argv = bridge_argv(
                *("--provider", "openai", "--base-url", f"{server.base_url}/v1"),
                *("--model", "local-model", "--state-dir", str(tmp_path / "state")),
            )
            env = isolated_env(tmp_path / "home")
            async with spawned_bridge(argv, env=env, cwd=tmp_path, stderr=stderr) as proc:
                editor = StdioEditor(proc)
                await editor.initialize()
                session = await editor.new_session(tmp_path)
                while not any(u["sessionUpdate"] == "config_option_update" for u in editor.updates):
                    message = await editor._receive()
                    if "method" in message:
                        await editor._handle(message)
                reply = await editor.prompt(session, "hi")
                assert reply["stopReason"] == "end_turn"
                await editor.close()
        (listed,) = server.model_requests
    assert listed.path == "/v1/models"
    (picker,) = [u for u in editor.updates if u["sessionUpdate"] == "config_option_update"]
    (model,) = [o for o in picker["configOptions"] if o["id"] == "model"]
    assert [o["value"] for o in model["options"]] == ["local-model", listed_model]
    (usage,) = [u for u in editor.updates if u["sessionUpdate"] == "usage_update"]
    assert (usage["size"], usage["_meta"]["acpBridge"]["sizeSource"]) == (window, "provider")
