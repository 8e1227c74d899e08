"""`TurnSink` over JSON-RPC: each turn update becomes one `session/update`, in order."""

from __future__ import annotations

from collections.abc import Sequence

from acp_bridge import protocol as acp
from acp_bridge.agent._translate import permission_options, tool_call_fields, update_model
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.turn import PermissionDecision, PermissionOption, ToolCallShown, TurnUpdate

__all__ = ["PeerTurnSink", "send_session_update"]


async def send_session_update(
    peer: JsonRpcPeer, session_id: str, update: acp.SessionUpdate
) -> None:
    """Writes one `session/update` notification and returns once it is on the wire."""
    note = acp.SessionNotification(session_id=session_id, update=update)
    await peer.notify("session/update", acp.to_wire(note))


class PeerTurnSink:
    """Sends a turn's updates and permission prompts for one session."""

    def __init__(self, peer: JsonRpcPeer, session_id: str) -> None:
        self._peer = peer
        self._session_id = session_id

    async def send_update(self, update: TurnUpdate) -> None:
        await send_session_update(self._peer, self._session_id, update_model(update))

    async def request_permission(
        self, call: ToolCallShown, options: Sequence[PermissionOption]
    ) -> PermissionDecision:
        # When the turn is cancelled while we wait, the peer sends $/cancel_request for
        # this request and the cancellation propagates (acp-protocol: cancellation).
        request = acp.RequestPermissionRequest(
            session_id=self._session_id,
            tool_call=tool_call_fields(call),
            options=permission_options(tuple(options)),
        )
        result = await self._peer.request("session/request_permission", acp.to_wire(request))
        outcome = acp.from_wire(acp.RequestPermissionResponse, result).outcome
        if isinstance(outcome, acp.SelectedPermissionOutcome):
            known = {o.option_id for o in options}
            if outcome.option_id in known:
                return PermissionDecision(outcome.option_id)
            # An option we never offered: treat it as the safest answer, a one-time reject.
            return PermissionDecision(_reject_once(options))
        return PermissionDecision(None)


def _reject_once(options: Sequence[PermissionOption]) -> str | None:
    for option in options:
        if option.kind.value == "reject_once":
            return option.option_id
    return None
