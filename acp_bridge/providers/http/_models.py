"""The provider's own model list, for the editor's model picker (spec/daily-use.md#pick-001).

One bounded GET: OpenAI-compatible `{base}/models`, Anthropic `/v1/models`, Gemini
`{base}/models` (only models that generate content). Any failure raises; the caller falls
back to the configured models.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx

from acp_bridge.providers._conversation import ModelRequest
from acp_bridge.providers.http._provider import HttpModelProvider

__all__ = ["fetch_model_ids"]

_PATHS = {
    "openai": ("/models", {}),
    "anthropic": ("/v1/models", {"limit": "1000"}),
    "gemini": ("/models", {"pageSize": "1000"}),
}


async def fetch_model_ids(provider: HttpModelProvider, bound: float = 10.0) -> tuple[str, ...]:
    """The ids the provider lists, in its order; raises on any failure or an empty list."""
    path, params = _PATHS[provider.name]
    # The provider's own auth headers, as its requests carry them.
    headers = dict(provider.render(ModelRequest(provider.model, ()), provider.model).headers)
    with anyio.fail_after(bound):
        async with httpx.AsyncClient(timeout=bound) as client:
            response = await client.get(provider.endpoint(path, params), headers=headers)
    response.raise_for_status()
    data: Any = response.json()
    if provider.name == "gemini":
        ids = [
            str(m["name"]).removeprefix("models/")
            for m in data["models"]
            if "generateContent" in m.get("supportedGenerationMethods", ["generateContent"])
        ]
    else:
        ids = [str(m["id"]) for m in data["data"]]
    if not ids:
        raise ValueError("the provider listed no models")
    return tuple(dict.fromkeys(ids))
