"""The model picker offers the provider's model list when it can be fetched (14.8)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from loopback_http import LoopbackServer, json_reply

from acp_bridge.agent._models import ModelList
from acp_bridge.cli._model_list import model_lister
from acp_bridge.providers import ModelProvider
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpProviderOptions,
    OpenAIProvider,
)

pytestmark = pytest.mark.anyio

GENERATE = ["countTokens", "generateContent"]
LISTS: dict[str, tuple[type[Any], str, dict[str, Any]]] = {
    "openai": (
        OpenAIProvider,
        "/models",
        {"object": "list", "data": [{"id": "gpt-4o", "object": "model"}, {"id": "o3"}]},
    ),
    "anthropic": (
        AnthropicProvider,
        "/v1/models",
        {"data": [{"id": "claude-sonnet-4-5", "type": "model"}, {"id": "claude-opus-4-1"}]},
    ),
    "gemini": (
        GeminiProvider,
        "/models",
        {
            "models": [
                {"name": "models/gemini-2.5-pro", "supportedGenerationMethods": GENERATE},
                {"name": "models/embedding-001", "supportedGenerationMethods": ["embedContent"]},
                {"name": "models/gemini-2.5-flash"},
            ]
        },
    ),
}
LISTED = {
    "openai": ["gpt-4o", "o3"],
    "anthropic": ["claude-sonnet-4-5", "claude-opus-4-1"],
    "gemini": ["gemini-2.5-pro", "gemini-2.5-flash"],
}


def model_values(options: list[dict[str, Any]]) -> list[str]:
    (model,) = [o for o in options if o["id"] == "model"]
    return [o["value"] for o in model["options"]]


@pytest.mark.requirement("PICK-001")
@pytest.mark.parametrize("kind", sorted(LISTS))
async def test_the_picker_lists_the_servers_models(tmp_path: Path, kind: str) -> None:
    provider_type, path, listing = LISTS[kind]
    async with LoopbackServer([], models=json_reply(200, listing)) as server:
        options = HttpProviderOptions("mine", base_url=server.base_url, api_key="k")
        fetched = anyio.Event()
        real = model_lister(lambda key: provider_type(options), lambda: "k")

        async def list_models() -> Sequence[str]:
            try:
                return await real()
            finally:
                fetched.set()

        provider: ModelProvider = provider_type(options)
        config = scripted_config(
            tmp_path / "s", provider, models=("mine",), list_models=list_models
        )
        async with running_bridge(config) as ed:
            await ed.initialize()
            new = await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            session = new["sessionId"]
            assert model_values(new["configOptions"]) == ["mine"]  # session/new never waits
            with anyio.fail_after(30):
                await fetched.wait()
            await anyio.wait_all_tasks_blocked()  # the update is through the memory link
            updates = [
                u for u in ed.updates(session) if u["sessionUpdate"] == "config_option_update"
            ]
            assert len(updates) == 1
            assert model_values(updates[0]["configOptions"]) == ["mine", *LISTED[kind]]
            chosen = await ed.call(
                "session/set_config_option",
                {"sessionId": session, "configId": "model", "value": LISTED[kind][1]},
            )
            (model,) = [o for o in chosen["configOptions"] if o["id"] == "model"]
            assert model["currentValue"] == LISTED[kind][1]
        assert server.requests == []
        (request,) = server.model_requests
    assert request.method == "GET"
    assert request.path.split("?")[0] == path
    key_header = {"openai": "authorization", "anthropic": "x-api-key", "gemini": "x-goog-api-key"}
    assert "k" in request.headers[key_header[kind]]


@pytest.mark.requirement("PICK-002")
@pytest.mark.parametrize("status", [404, 500])
async def test_a_failed_fetch_keeps_the_configured_models(status: int) -> None:
    async with LoopbackServer([], models=json_reply(status, {"error": "no"})) as server:
        options = HttpProviderOptions("mine", base_url=server.base_url, api_key="k")
        lister = model_lister(lambda key: OpenAIProvider(options), lambda: "k")
        sent: list[object] = []

        class Peer:
            async def notify(self, method: str, params: object) -> None:
                sent.append(params)

        async with anyio.create_task_group() as tg:
            models = ModelList(("mine", "other"), lister, tg)
            models.start(Peer(), lambda: {"s": []})  # type: ignore[arg-type]
            models.start(Peer(), lambda: {"s": []})  # type: ignore[arg-type]  # once only
        assert models.models == ("mine", "other")
        assert sent == []
        assert len(server.model_requests) == 1


@pytest.mark.requirement("PICK-002")
async def test_an_unreachable_server_keeps_the_configured_models() -> None:
    async def refused() -> Sequence[str]:
        raise OSError("connection refused")

    async with anyio.create_task_group() as tg:
        models = ModelList(("mine",), refused, tg)
        models.start(None, dict)  # type: ignore[arg-type]
    assert models.models == ("mine",)


@pytest.mark.requirement("PICK-001")
@pytest.mark.requirement("PICK-003")
def test_the_fetch_is_the_fetch_models_setting(tmp_path: Path) -> None:
    from acp_bridge.cli._run import build_config
    from acp_bridge.cli._settings import resolve

    flags = {"provider": "openai", "base_url": "http://127.0.0.1:9", "state_dir": str(tmp_path)}
    # On by default (PICK-001); `no` makes no request beyond the model calls.
    assert build_config(resolve(flags, {}, "/dev/null")).list_models is not None
    declined = resolve({**flags, "fetch_models": "no"}, {}, "/dev/null")
    assert build_config(declined).list_models is None
    chosen = resolve({**flags, "fetch_models": "yes"}, {}, "/dev/null")
    assert build_config(chosen).list_models is not None
    scripted = resolve({"fetch_models": "yes", "state_dir": str(tmp_path)}, {}, "/dev/null")
    assert build_config(scripted).list_models is None
