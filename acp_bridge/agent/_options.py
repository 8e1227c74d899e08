"""What a session offers the editor to choose: its modes and its config options."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.errors import InvalidParams
from acp_bridge.turn import SessionMode

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = [
    "MODEL_OPTION",
    "REASONING_OPTION",
    "checked_choice",
    "config_options",
    "config_options_wire",
    "mode_state",
    "mode_state_wire",
]

MODEL_OPTION = "model"
REASONING_OPTION = "reasoning_effort"
_MODEL_HELP = "The model that answers in this session."
_REASONING_HELP = (
    "How much the model thinks before it answers "
    "(default: the configured thinking budget or the model's own)."
)


def mode_state(current: SessionMode) -> acp.SessionModeState:
    """`modes`: ask, auto-edit and read-only (AGENT-MODE-001)."""
    return acp.SessionModeState(
        current_mode_id=current.value,
        available_modes=[
            acp.SessionMode(id=m.value, name=m.label, description=m.description)
            for m in SessionMode
        ],
    )


def mode_state_wire(current: SessionMode) -> JsonObject:
    """`to_wire(mode_state(current))`, built without the models (the light path)."""
    return {
        "currentModeId": current.value,
        "availableModes": [
            {"id": m.value, "name": m.label, "description": m.description} for m in SessionMode
        ],
    }


def _select_wire(
    option_id: str, name: str, description: str, category: str, current: str, values: Sequence[str]
) -> JsonObject:
    return {
        "type": "select",
        "id": option_id,
        "name": name,
        "description": description,
        "category": category,
        "currentValue": current,
        "options": [{"value": v, "name": v} for v in values],
    }


def config_options_wire(
    model: str, models: Sequence[str], reasoning: str = "", levels: Sequence[str] = ()
) -> list[JsonValue]:
    """`[to_wire(o) for o in config_options(...)]`, built without the models."""
    options: list[JsonValue] = [
        _select_wire(MODEL_OPTION, "Model", _MODEL_HELP, "model", model, models)
    ]
    if levels:
        options.append(
            _select_wire(
                REASONING_OPTION,
                "Reasoning effort",
                _REASONING_HELP,
                "thought_level",
                reasoning,
                levels,
            )
        )
    return options


def config_options(
    model: str, models: Sequence[str], reasoning: str = "", levels: Sequence[str] = ()
) -> list[acp.SessionConfigOption]:
    """The complete option set: the model, as a stable select (AGENT-MODEL-001), then the
    reasoning effort where the provider takes one (`levels` not empty: REASON-001)."""
    options: list[acp.SessionConfigOption] = [
        acp.SessionConfigSelect(
            id=MODEL_OPTION,
            name="Model",
            description=_MODEL_HELP,
            category="model",
            current_value=model,
            options=[acp.SessionConfigSelectOption(value=m, name=m) for m in models],
        )
    ]
    if levels:
        options.append(
            acp.SessionConfigSelect(
                id=REASONING_OPTION,
                name="Reasoning effort",
                description=_REASONING_HELP,
                category="thought_level",
                current_value=reasoning,
                options=[acp.SessionConfigSelectOption(value=v, name=v) for v in levels],
            )
        )
    return options


def checked_choice(
    config_id: str, value: object, models: Sequence[str], levels: Sequence[str]
) -> str:
    """The value of a `session/set_config_option`, refused with -32602 naming what is offered."""
    offered = {MODEL_OPTION: ("model", models), REASONING_OPTION: ("reasoning effort", levels)}
    if config_id not in offered or not offered[config_id][1]:
        known = ", ".join(k for k, (_, values) in offered.items() if values)
        raise InvalidParams.at(
            "configId", f"Unknown config option (offered: {known})", got=config_id
        )
    what, values = offered[config_id]
    if not isinstance(value, str) or value not in values:
        raise InvalidParams.at("value", f"Unknown {what} (offered: {', '.join(values)})", got=value)
    return value
