"""Session modes and session config options, and the two methods that change them.

Modes (`session/set_mode`, `current_mode_update`) are the older mechanism; config options
(`session/set_config_option`, `config_option_update`) are the general one. A config option
is a `select` (options, possibly grouped) or a `boolean` (only when the client advertised
`session.configOptions.boolean`). `category` is a UX hint; unknown categories are kept.
The response to `session/set_config_option` and every `config_option_update` carry the
complete set of options.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self, TypeAlias

from pydantic import Field, TypeAdapter, model_validator

from acp_bridge.protocol._base import (
    UNION_CONFIG,
    AcpModel,
    Bool,
    DefaultOnError,
    EmptyOnError,
    SkipInvalidItems,
)

__all__ = [
    "SESSION_CONFIG_OPTION",
    "SessionConfigBoolean",
    "SessionConfigOption",
    "SessionConfigSelect",
    "SessionConfigSelectGroup",
    "SessionConfigSelectOption",
    "SessionMode",
    "SessionModeState",
    "SetSessionConfigOptionRequest",
    "SetSessionConfigOptionResponse",
    "SetSessionModeRequest",
    "SetSessionModeResponse",
]


class SessionMode(AcpModel):
    id: str
    name: str
    description: Annotated[str | None, DefaultOnError] = None


class SessionModeState(AcpModel):
    """`modes` of a session setup response."""

    current_mode_id: str
    available_modes: Annotated[list[SessionMode], SkipInvalidItems, EmptyOnError]


class SetSessionModeRequest(AcpModel):
    session_id: str
    mode_id: str


class SetSessionModeResponse(AcpModel):
    pass


class SessionConfigSelectOption(AcpModel):
    value: str
    name: str
    description: Annotated[str | None, DefaultOnError] = None


class SessionConfigSelectGroup(AcpModel):
    group: str
    name: str
    options: Annotated[list[SessionConfigSelectOption], SkipInvalidItems, EmptyOnError]


class SessionConfigSelect(AcpModel):
    """A config option `{"type": "select"}`: one value out of `options` (flat or grouped).
    `category` is one of mode, model, model_config, thought_level, or a custom string."""

    type: Literal["select"] = "select"
    id: str
    name: str
    description: Annotated[str | None, DefaultOnError] = None
    category: Annotated[str | None, DefaultOnError] = None
    current_value: str
    options: list[SessionConfigSelectOption] | list[SessionConfigSelectGroup]


class SessionConfigBoolean(AcpModel):
    """A config option `{"type": "boolean"}`: an on/off switch."""

    type: Literal["boolean"] = "boolean"
    id: str
    name: str
    description: Annotated[str | None, DefaultOnError] = None
    category: Annotated[str | None, DefaultOnError] = None
    current_value: Bool


SessionConfigOption: TypeAlias = Annotated[
    SessionConfigSelect | SessionConfigBoolean, Field(discriminator="type")
]

SESSION_CONFIG_OPTION: TypeAdapter[SessionConfigOption] = TypeAdapter(
    SessionConfigOption, config=UNION_CONFIG
)


class SetSessionConfigOptionRequest(AcpModel):
    """`value` is a select option's value id, or a bool when `type` is `"boolean"`."""

    session_id: str
    config_id: str
    type: str | None = None
    value: str | Bool

    @model_validator(mode="after")
    def _value_matches_type(self) -> Self:
        if self.type == "boolean" and not isinstance(self.value, bool):
            raise ValueError('a "boolean" config option takes a true/false value')
        if self.type != "boolean" and isinstance(self.value, bool):
            raise ValueError('a true/false value needs "type": "boolean"')
        return self


class SetSessionConfigOptionResponse(AcpModel):
    """The complete set of config options after the change."""

    config_options: Annotated[list[SessionConfigOption], SkipInvalidItems, EmptyOnError]
