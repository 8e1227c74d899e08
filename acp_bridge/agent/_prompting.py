"""Prompt turns of one connection: `session/prompt` and `session/cancel`.

Every update of a turn is written before the `session/prompt` response (the sink awaits
each write, and the response is written after the turn engine returns); `session/cancel`
ends a turn with `stopReason: "cancelled"`, never an error, and a cancel for an idle or
unknown session is harmless. Each turn is journaled as it runs (SESS-010).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.agent._compacting import CompactCommand, context_budget, is_compact_command
from acp_bridge.agent._connection import Connection
from acp_bridge.agent._durable import store_errors
from acp_bridge.agent._ending import (
    cancelled_note,
    changed_usage,
    failed_note,
    outside_end,
    record_end,
)
from acp_bridge.agent._instructions import load_instructions, system_prompt
from acp_bridge.agent._light import notify_update, plain_prompt, session_info_update_wire
from acp_bridge.agent._links import prompt_turn
from acp_bridge.agent._prompt import prompt_title
from acp_bridge.agent._replay import iso_time
from acp_bridge.agent._report_json import prompt_response
from acp_bridge.agent._session import Session
from acp_bridge.agent._sink import PeerTurnSink
from acp_bridge.agent._unanswered import journal_response, marks_answered
from acp_bridge.errors import InvalidRequest
from acp_bridge.jsonrpc import Reply, RequestId, current_request_id
from acp_bridge.providers import UserTurn
from acp_bridge.sessions import TurnRecorder, TurnStart, TurnState
from acp_bridge.tools import default_tools
from acp_bridge.turn import StopReason, Turn, TurnFailed, TurnRequest

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

ReadPrompt = Callable[[Session], Awaitable[UserTurn]]
"""Reads the prompt's content into the model's turn, for the session it is sent to."""

__all__ = ["PromptTurns"]

_log = logging.getLogger("acp_bridge.agent")


class PromptTurns:
    """The prompt methods of one connection."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        tools = conn.config.tools
        self._tools = default_tools() if tools is None else tools

    async def session_prompt(self, params: JsonValue) -> Reply:
        request_id = current_request_id()
        try:
            plain = plain_prompt(params)  # STARTUP-002: text blocks only, no models
            if plain is not None:
                session_id, texts, blocks = plain
                turn = UserTurn(tuple(texts), ())

                async def read_text(session: Session) -> UserTurn:
                    return turn

                return await self._prompt(session_id, blocks, read_text, request_id)
            request = acp.from_wire(acp.PromptRequest, params)
            conn = self._conn

            async def read(session: Session) -> UserTurn:
                return await prompt_turn(
                    request.prompt, session.model, conn.tool_context(session), conn.models.inputs()
                )

            wire = [acp.to_wire(block) for block in request.prompt]
            return await self._prompt(request.session_id, wire, read, request_id)
        finally:
            self._conn.tickets.release(request_id)

    async def _prompt(
        self,
        session_id: str,
        blocks: list[JsonObject],
        read_prompt: ReadPrompt,
        request_id: RequestId | None,
    ) -> Reply:
        conn = self._conn
        scope = conn.tickets.scope(request_id, session_id)  # AGENT-CANCEL-002
        session = conn.session(session_id)
        prompt = await read_prompt(session)
        conn.auth.require()
        if session.running is not None or not session.idle.is_set():
            raise InvalidRequest(
                f"A prompt turn is already running in session {session.session_id}; "
                "cancel it or wait for its response",
                {"sessionId": session.session_id},
            )
        store = conn.durable.store
        command = is_compact_command(blocks)  # COMPACT-007: no model history of its own
        with store_errors():
            session.read_history()  # a loaded session's, on its first prompt (issue 15.3)
            # The turn and its prompt are durable before the model is called (SESS-010).
            start = store.begin_turn(
                session.session_id,
                conn.durable.owner,
                blocks,
                None if command else prompt,
            )
            if start.unanswered is not None:  # SESS-UNANSWERED-001: the same request again
                title = None if command else prompt_title(prompt)
                return await self._answer_from_journal(session, start, title)
            if start.retry_of is not None:
                # Sent again after it was interrupted: the same turn from its start (SESS-021).
                history = store.history(session.session_id)
                session.history = history if command else history[:-1]  # not the new prompt
        session.turns = start.ordinal
        live = session.live_updates(
            notices=conn.notices,
            context_window=conn.config.context_window,
            windows=conn.models.window,  # USAGE-004/005: declared, configured, listed, known
            compaction=conn.compaction,
        )
        sink = PeerTurnSink(
            conn.peer,
            session.session_id,
            live,
            merge=conn.config.merge_chunks,
            background=conn.background,  # no join of the writer in the tail (TAIL2-001)
        )
        recorder = TurnRecorder(store, session.session_id, start, sink)
        config = conn.config
        tools = await conn.mcp.tools_for(session.session_id, self._tools)
        system = self._system_prompt(session)
        turn = TurnRequest(
            turn_id=start.turn_id,
            id_prefix=start.id_prefix,
            session_id=session.session_id,
            history=session.history,
            prompt=prompt,
            provider=config.provider,
            model=session.model,
            tools=tools,
            make_context=lambda: conn.tool_context(session),
            sink=recorder,
            journal=recorder,
            ledger=conn.ledger,
            permissions=session.permissions,
            mode=session.mode,
            current_mode=lambda: session.mode,  # TURN-MODE-001: set_mode applies mid-turn
            system=system,
            policy=config.retry_policy,
            max_model_calls=config.max_model_calls,
            reasoning=session.reasoning or config.reasoning_effort,
            budget=context_budget(session, live, config, system, tools.values()),
            background=conn.background,  # the watches' ends not joined (TAIL2-002)
        )
        started = time.monotonic()
        engine = CompactCommand(turn) if command else Turn(turn)
        session.idle = anyio.Event()
        try:
            # Chunks are written behind the turn; leaving `running()` writes what is queued,
            # so every update is on the wire before the response (AGENT-ORDER-001).
            async with sink.running():
                with scope, store_errors():
                    session.running = scope
                    try:
                        result = await engine.run()
                    finally:
                        session.running = None
            if scope.cancelled_caught:
                # session/cancel: an outcome, never an error (prompt-turn.mdx#cancellation).
                result = engine.result(StopReason.CANCELLED)
            stop = result.stop_reason.value
            note = cancelled_note(result)  # SESS-CANCEL-001
            self._end_turn(session, recorder, TurnState.COMPLETED, stop, note, answered=False)
        except TurnFailed as error:
            self._end_turn(session, recorder, TurnState.FAILED, None, failed_note(error.message))
            raise
        except Exception:
            self._end_turn(session, recorder, TurnState.FAILED, None, failed_note("internal error"))
            raise
        except BaseException:  # AGENT-CANCEL-003: $/cancel_request, or the connection closed
            self._end_turn(session, recorder, *outside_end(conn.peer.closed))
            raise
        finally:
            session.idle.set()
        if session.title is None and not session.closed and not command:  # SESS-TITLE-001
            await self._announce_title(session, prompt_title(prompt))
        # `to_wire(PromptResponse(stop_reason=..., field_meta=...))`, encoded directly, and
        # written by the turn's own task before its return travels up (REPLY4-004).
        reply = Reply(
            prompt_response(stop, start, result), marks_answered(store, session.session_id, start)
        )
        await conn.peer.respond(reply)
        _log.info("turn %s ended: %s in %.3fs", start.turn_id, stop, time.monotonic() - started)
        return reply

    async def _answer_from_journal(
        self, session: Session, start: TurnStart, title: str | None
    ) -> Reply:
        """`title`: None for a command, which never titles a session (SESS-TITLE-001)."""
        session.turns = start.ordinal
        _log.info("turn %s completed before its response was written: answered", start.turn_id)
        if title is not None and session.title is None and not session.closed:
            await self._announce_title(session, title)  # SESS-033, if that was lost too
        store = self._conn.durable.store
        return Reply(journal_response(start), marks_answered(store, session.session_id, start))

    def _end_turn(
        self,
        session: Session,
        recorder: TurnRecorder,
        state: TurnState,
        *end: str | None,
        answered: bool = True,
    ) -> None:
        store = self._conn.durable.opened
        usage = changed_usage(session)  # USAGE-006
        answer = recorder.take_answer()  # the last kept answer, in the end's commit
        start = recorder.start
        record_end(
            store, session, start, state, *end, answered=answered, usage=usage, answer=answer
        )

    async def _announce_title(self, session: Session, title: str) -> None:
        """SESS-033: the title, once the first turn completed, before its response."""
        session.title = title
        with store_errors():
            self._conn.durable.store.update(session.session_id, title=title)
        update = session_info_update_wire(title, iso_time(session.updated_at))
        await notify_update(self._conn.peer, session.session_id, update)

    def _system_prompt(self, session: Session) -> str:
        """INSTR-001: the base, the user's addition, the directories, project instructions."""
        instructions = load_instructions(session.roots)
        if session.live is not None and not session.instructions_told:
            session.instructions_told = True  # INSTR-003: told once per session here
            session.live.announce(instructions.notice())
        config = self._conn.config
        return system_prompt(
            config.system_prompt,
            config.append_system_prompt,
            session.cwd,
            session.additional_directories,
            instructions,
        )

    async def session_cancel(self, params: JsonValue) -> None:
        conn = self._conn
        try:
            request = acp.from_wire(acp.CancelNotification, params)
        except Exception:
            _log.warning("ignoring malformed session/cancel")
            return
        pending = conn.tickets.cancel(request.session_id)  # also a turn not started yet
        session = conn.sessions.get(request.session_id)
        if not (session is not None and session.cancel()) and not pending:
            _log.debug("session/cancel for idle or unknown session %s", request.session_id)
