"""The bounds of a session's MCP servers (its own module: configuring them loads nothing)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["McpLimits"]


@dataclass(frozen=True, slots=True)
class McpLimits:
    """Bounds, in seconds (and the model's share of a result, in bytes)."""

    connect_timeout: float = 60.0
    ready_timeout: float = 30.0
    call_timeout: float = 120.0
    model_output_bytes: int = 30_000
