"""The models the picker offers, and what is known of each: its window, what it takes.

The offer is the configured models, then the provider's list once fetched. The list is fetched
in the background after the first session/new's response (never delaying it), once per
connection; when it arrives every open session gets a `config_option_update`. Any failure
keeps the configured models, with a debug log line (spec/daily-use.md#pick-001).

What is known of a model (USAGE-004, USAGE-005, MODEL-INFO-001), first match wins: the user's
`model_info` declaration, then (the window only) the `context_window` setting, then what the
provider's listing said of it, then the known-models tables, then a default. A listing of a
single model (a llama.cpp or LM Studio server serving one model under any name) also speaks
for the configured models it does not list.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from anyio.abc import TaskGroup

from acp_bridge.agent._prompt import PromptInputs
from acp_bridge.agent._sink import send_session_update
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.providers import (
    DEFAULT_CONTEXT_WINDOW,
    ModelInfo,
    declared_info,
    known_context_window,
)

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["ModelList"]

_log = logging.getLogger(__name__)

Fetch = Callable[[], Awaitable[Sequence[str] | Mapping[str, ModelInfo]]]


class ModelList:
    def __init__(
        self,
        configured: tuple[str, ...],
        fetch: Fetch | None,
        background: TaskGroup | None,
        *,
        kind: str = "scripted",
        declared: Mapping[str, ModelInfo] | None = None,
        context_window: int | None = None,
    ) -> None:
        self.models = configured
        self._fetch = fetch
        self._background = background
        self._kind = kind
        self._declared: Mapping[str, ModelInfo] = declared or {}
        self._context_window = context_window
        self.listed: dict[str, ModelInfo] = {}
        """What the provider's listing said of each model it listed (USAGE-005)."""

    def inputs(self) -> PromptInputs:
        """What the models take, for `user_turn` (CONTENT-003, AUDIO-003)."""
        return PromptInputs(self._kind, self._declared, self._listed_view())

    def window(self, model: str) -> tuple[int, str]:
        """The context window of `model` and where it came from (`sizeSource`)."""
        declared = declared_info(self._declared, model)
        if declared is not None and declared.context_window is not None:
            return declared.context_window, "config"
        if self._context_window is not None:
            return self._context_window, "config"
        listed = declared_info(self._listed_view(), model)
        if listed is not None and listed.context_window is not None:
            return listed.context_window, "provider"
        known = known_context_window(model)
        if known is not None:
            return known, "known_models"
        return DEFAULT_CONTEXT_WINDOW, "default"

    def _listed_view(self) -> Mapping[str, ModelInfo]:
        if len(self.listed) != 1:
            return self.listed
        (only,) = self.listed.values()
        return {**dict.fromkeys(self.models, only), **self.listed}

    def start(
        self, peer: JsonRpcPeer, options: Callable[[], dict[str, list[acp.SessionConfigOption]]]
    ) -> None:
        """Fetches the provider's list once; when it changes the offer, each open session
        (`options`: its id -> its config options) gets a `config_option_update` (PICK-001)."""
        fetch, self._fetch = self._fetch, None
        if fetch is None or self._background is None:
            return

        async def run() -> None:
            try:
                answer = await fetch()
                listed = tuple(answer)
            except Exception as exc:  # any failure: the configured models stay
                _log.debug("the provider's model list is unavailable: %r", exc)
                return
            if isinstance(answer, Mapping):
                self.listed = dict(answer)
            offered = tuple(dict.fromkeys((*self.models, *listed)))
            if offered != self.models:
                self.models = offered
                for session_id, config_options in options().items():
                    update = acp.ConfigOptionUpdate(config_options=config_options)
                    await send_session_update(peer, session_id, update)

        self._background.start_soon(run)
