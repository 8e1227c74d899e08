"""Shared test configuration: anyio on asyncio, and the official-schema validator fixture."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
