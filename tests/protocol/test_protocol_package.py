"""The package surface: an exact, sorted `__all__`, a layer that imports nothing above it,
and an import that builds no validator (cold start)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import acp_bridge.protocol as acp


def _isort_key(name: str) -> tuple[int, str]:
    # The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions.
    group = 0 if name.isupper() else 1 if name[0].isupper() else 2
    return group, name


def test_all_is_sorted_and_exact() -> None:
    assert acp.__all__ == sorted(set(acp.__all__), key=_isort_key)
    public = sorted((name for name in vars(acp) if not name.startswith("_")), key=_isort_key)
    assert public == acp.__all__


def test_no_numbered_or_root_model_names() -> None:
    from pydantic import RootModel

    for name in acp.__all__:
        assert not any(char.isdigit() for char in name), name
        value = getattr(acp, name)
        assert not (isinstance(value, type) and issubclass(value, RootModel)), name


_PROBE = """
import json, sys
import acp_bridge.protocol as p
from pydantic import BaseModel
models = [v for v in vars(p).values() if isinstance(v, type) and issubclass(v, BaseModel)]
adapters = [v for v in vars(p).values() if type(v).__name__ == "TypeAdapter"]
print(json.dumps({
    "models": len(models),
    "built": [m.__name__ for m in models if m.__pydantic_complete__],
    "adapters": len(adapters),
    "adapters_built": sum(bool(a.pydantic_complete) for a in adapters),
    "modules": sorted(m for m in sys.modules if m.split(".")[0] in (
        "acp_bridge", "anyio", "httpx", "jsonrpc_base", "jsonschema")),
}))
"""


@pytest.mark.requirement("PROTO-COLD-001")
def test_importing_the_package_builds_no_validator_and_nothing_above_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    probe = json.loads(done.stdout)
    assert probe["models"] > 100
    assert probe["built"] == []
    assert (probe["adapters"], probe["adapters_built"]) == (7, 0)
    assert [m for m in probe["modules"] if not m.startswith("acp_bridge.protocol")] == [
        "acp_bridge",
        "acp_bridge._json",
    ] or [m for m in probe["modules"] if not m.startswith("acp_bridge.protocol")] == ["acp_bridge"]


def test_first_use_builds_the_validator() -> None:
    request = acp.from_wire(acp.CancelNotification, {"sessionId": "s"})
    assert acp.CancelNotification.__pydantic_complete__
    assert request.session_id == "s"
