"""Fixtures of the per-turn tests."""

from __future__ import annotations

import anyio
import pytest


@pytest.fixture
async def cancels(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The reason of every `CancelScope.cancel()` call made while the test runs."""
    backend = type(anyio.CancelScope())
    calls: list[str] = []
    real_cancel = backend.cancel

    def cancel(self: anyio.CancelScope, reason: str | None = None) -> None:
        calls.append(reason or "")
        real_cancel(self, reason)

    monkeypatch.setattr(backend, "cancel", cancel)
    return calls
