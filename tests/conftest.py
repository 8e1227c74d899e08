"""Shared test configuration: anyio on asyncio, the official-schema validator fixture, and the
Hypothesis settings profile every property test runs under.

The profile (spec/release.md#rel-002) is for a cold start on a slow shared machine: a fresh
clone has no example database and builds Hypothesis's caches (its Unicode tables, for text
strategies) during the first test that draws text, so the health checks that measure time
or size (`too_slow`, `data_too_large`, `large_base_example`) would fail a correct test by
chance; they are off, as is the per-example deadline. Under CI (`CI` set) the examples are
derandomized (the same for every run of the same code, so a run cannot fail by luck) and no
example database is read or written. `print_blob` prints how to reproduce any failure.
Select another profile with `HYPOTHESIS_PROFILE=<name>` (`acp-bridge`, `acp-bridge-ci`).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

_COLD_START = settings(
    deadline=None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
settings.register_profile("acp-bridge", _COLD_START)
settings.register_profile("acp-bridge-ci", _COLD_START, derandomize=True, database=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or ("acp-bridge-ci" if os.environ.get("CI") else "acp-bridge")
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def acp_wire() -> object:
    """Validates every message the agent writes against the official ACP v1 schema."""
    from acp_schema import AgentWireValidator

    return AgentWireValidator(strict_roots=True)
