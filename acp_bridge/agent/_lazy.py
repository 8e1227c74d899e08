"""`acp`: the protocol package, imported on first use (cold start, STARTUP-001).

The agent's modules name ACP models everywhere, but a session's start never needs them
(`acp_bridge.agent._light` answers it): importing `acp_bridge.protocol` means importing
pydantic and creating a hundred model classes, the largest cost of a cold start. Modules
write

    if TYPE_CHECKING:
        from acp_bridge import protocol as acp
    else:
        from acp_bridge.agent._lazy import acp

and use `acp.Model` inside functions as before: the first attribute read imports the package.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["acp"]


class _LazyProtocol:
    """Stands for `acp_bridge.protocol` until an attribute is read, then forwards to it."""

    __slots__ = ("__dict__",)

    def __getattr__(self, name: str) -> Any:
        value = getattr(importlib.import_module("acp_bridge.protocol"), name)
        setattr(self, name, value)  # the next read skips __getattr__
        return value


acp: Any = _LazyProtocol()
