"""The provider's own model list, for the editor's model picker (spec/daily-use.md#pick-001),
with what it says of each model (USAGE-005): the context window and the input modalities.

One bounded GET: OpenAI-compatible `{base}/models`, Anthropic `/v1/models`, Gemini
`{base}/models` (only models that generate content). Any failure raises; the caller falls
back to the configured models. The metadata read, where the server gives it: OpenRouter's
`context_length` and `architecture.input_modalities`, llama.cpp's `meta.n_ctx` (the window
the server runs, not the training one) and `architecture.input_modalities`, vLLM's
`max_model_len`, Anthropic's `max_input_tokens`, Gemini's `inputTokenLimit`.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx

from acp_bridge.providers._conversation import ModelRequest
from acp_bridge.providers._modalities import INPUT_KINDS, ModelInfo
from acp_bridge.providers.http._provider import HttpModelProvider

__all__ = ["fetch_model_ids", "fetch_models", "listed_info"]

_PATHS = {
    "openai": ("/models", {}),
    "anthropic": ("/v1/models", {"limit": "1000"}),
    "gemini": ("/models", {"pageSize": "1000"}),
}


async def fetch_model_ids(provider: HttpModelProvider, bound: float = 10.0) -> tuple[str, ...]:
    """The ids the provider lists, in its order; raises on any failure or an empty list."""
    return tuple(await fetch_models(provider, bound))


async def fetch_models(provider: HttpModelProvider, bound: float = 10.0) -> dict[str, ModelInfo]:
    """The models the provider lists, in its order, each with what the listing says of it;
    raises on any failure or an empty list."""
    path, params = _PATHS[provider.name]
    # The provider's own auth headers, as its requests carry them.
    headers = dict(provider.render(ModelRequest(provider.model, ()), provider.model).headers)
    with anyio.fail_after(bound):
        async with httpx.AsyncClient(timeout=bound) as client:
            response = await client.get(provider.endpoint(path, params), headers=headers)
    response.raise_for_status()
    data: Any = response.json()
    listed: dict[str, ModelInfo] = {}
    if provider.name == "gemini":
        for m in data["models"]:
            if "generateContent" in m.get("supportedGenerationMethods", ["generateContent"]):
                name = str(m["name"]).removeprefix("models/")
                listed.setdefault(name, ModelInfo(context_window=_tokens(m.get("inputTokenLimit"))))
    else:
        for m in data["data"]:
            listed.setdefault(str(m["id"]), listed_info(m))
    if not listed:
        raise ValueError("the provider listed no models")
    return listed


def listed_info(entry: Any) -> ModelInfo:
    """What one `data[]` entry of a models listing says of its model (unknown: None)."""
    if not isinstance(entry, dict):
        return ModelInfo()
    meta: Any = entry.get("meta")
    if not isinstance(meta, dict):
        meta = {}
    window = None
    for value in (
        meta.get("n_ctx"),
        entry.get("context_length"),
        entry.get("max_model_len"),
        entry.get("max_input_tokens"),
    ):
        if (window := _tokens(value)) is not None:
            break
    architecture = entry.get("architecture")
    modalities = architecture.get("input_modalities") if isinstance(architecture, dict) else None
    inputs = None
    if isinstance(modalities, list) and "text" in modalities:
        inputs = frozenset(m for m in modalities if m in INPUT_KINDS)
    return ModelInfo(inputs=inputs, context_window=window)


def _tokens(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value
