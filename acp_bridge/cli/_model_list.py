"""The model picker's fetch of the provider's list, with the key current at that moment."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from acp_bridge.providers import ModelProvider

__all__ = ["model_lister"]


def model_lister(
    build: Callable[[str | None], ModelProvider], key: Callable[[], str | None]
) -> Callable[[], Awaitable[Sequence[str]]]:
    """A fetch of the provider's model ids (PICK-001) through a provider of its own."""

    async def list_models() -> Sequence[str]:
        from acp_bridge.providers.http import HttpModelProvider
        from acp_bridge.providers.http._models import fetch_model_ids

        provider = build(key())
        if not isinstance(provider, HttpModelProvider):
            return ()
        async with provider:
            return await fetch_model_ids(provider)

    return list_models
