"""What a session offers the editor to choose: its modes and its config options."""

from __future__ import annotations

from collections.abc import Sequence

from acp_bridge import protocol as acp
from acp_bridge.turn import SessionMode

__all__ = ["MODEL_OPTION", "config_options", "mode_state"]

MODEL_OPTION = "model"


def mode_state(current: SessionMode) -> acp.SessionModeState:
    """`modes`: ask, auto-edit and read-only (AGENT-MODE-001)."""
    return acp.SessionModeState(
        current_mode_id=current.value,
        available_modes=[
            acp.SessionMode(id=m.value, name=m.label, description=m.description)
            for m in SessionMode
        ],
    )


def config_options(model: str, models: Sequence[str]) -> list[acp.SessionConfigOption]:
    """The complete option set: the model, as a stable select (AGENT-MODEL-001)."""
    return [
        acp.SessionConfigSelect(
            id=MODEL_OPTION,
            name="Model",
            description="The model that answers in this session.",
            category="model",
            current_value=model,
            options=[acp.SessionConfigSelectOption(value=m, name=m) for m in models],
        )
    ]
