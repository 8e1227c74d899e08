"""The model picker's fetch of the provider's list, with the key current at that moment,
and what the listing says of each model (its window, what it takes)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_bridge.providers import ModelInfo, ModelProvider

__all__ = ["model_lister"]


def model_lister(
    build: Callable[[str | None], ModelProvider], key: Callable[[], str | None]
) -> Callable[[], Awaitable[Mapping[str, ModelInfo]]]:
    """A fetch of the provider's models (PICK-001, USAGE-005) through a provider of its own."""

    async def list_models() -> Mapping[str, ModelInfo]:
        from acp_bridge.providers.http import HttpModelProvider
        from acp_bridge.providers.http._models import fetch_models

        provider = build(key())
        if not isinstance(provider, HttpModelProvider):
            return {}
        async with provider:
            return await fetch_models(provider)

    return list_models
