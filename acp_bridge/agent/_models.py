"""The models the picker offers: the configured ones, then the provider's list once fetched.

The list is fetched in the background after the first session/new's response (never
delaying it), once per connection; when it arrives every open session gets a
`config_option_update`. Any failure keeps the configured models, with a debug log line
(spec/daily-use.md#pick-001).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from anyio.abc import TaskGroup

from acp_bridge.agent._sink import send_session_update
from acp_bridge.jsonrpc import JsonRpcPeer

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["ModelList"]

_log = logging.getLogger(__name__)


class ModelList:
    def __init__(
        self,
        configured: tuple[str, ...],
        fetch: Callable[[], Awaitable[Sequence[str]]] | None,
        background: TaskGroup | None,
    ) -> None:
        self.models = configured
        self._fetch = fetch
        self._background = background

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
                listed = tuple(await fetch())
            except Exception as exc:  # any failure: the configured models stay
                _log.debug("the provider's model list is unavailable: %r", exc)
                return
            offered = tuple(dict.fromkeys((*self.models, *listed)))
            if offered != self.models:
                self.models = offered
                for session_id, config_options in options().items():
                    update = acp.ConfigOptionUpdate(config_options=config_options)
                    await send_session_update(peer, session_id, update)

        self._background.start_soon(run)
