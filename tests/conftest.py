"""Shared test configuration: anyio on asyncio, and the official-schema validator fixture."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def acp_wire() -> object:
    """Validates every message the agent writes against the official ACP v1 schema."""
    from acp_schema import AgentWireValidator

    return AgentWireValidator(strict_roots=True)
