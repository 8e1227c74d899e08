"""Running a command in an editor terminal (`terminal/*`), for a client that advertised it.

Order of calls: `terminal/create` (shielded and bounded, so a cancel never loses the id of a
terminal the editor made), then at once the terminal is reported to the editor as tool
content so it shows the command live (TOOLS-003), `terminal/wait_for_exit` bounded by the
timeout (`terminal/kill` when it passes), `terminal/output`, and always `terminal/release`,
also on error and cancellation: shielded and bounded (TOOLS-004, ACP: "the Agent MUST
always release").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio
import anyio.lowlevel

from acp_bridge.errors import PeerError, PeerGone, ToolError
from acp_bridge.tools._base import EditorClient, ExitStatus, TerminalContent, ToolContext
from acp_bridge.tools._process import CommandResult

__all__ = ["EDITOR_CALL_TIMEOUT_SECONDS", "run_in_terminal"]

logger = logging.getLogger(__name__)

# How long a terminal/create, a post-kill wait, or a release may take before we move on.
EDITOR_CALL_TIMEOUT_SECONDS = 10.0


async def _release(editor: EditorClient, terminal_id: str) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(EDITOR_CALL_TIMEOUT_SECONDS):
        try:
            await editor.terminal_release(terminal_id)
        except PeerError as error:
            logger.warning("terminal/release of %s failed: %s", terminal_id, error)


async def _create(
    editor: EditorClient, program: str, args: Sequence[str], ctx: ToolContext, output_limit: int
) -> str:
    terminal_id: str | None = None
    with anyio.CancelScope(shield=True), anyio.move_on_after(EDITOR_CALL_TIMEOUT_SECONDS):
        terminal_id = await editor.terminal_create(
            program, args=args, cwd=str(ctx.cwd), output_byte_limit=output_limit
        )
    if terminal_id is None:
        # The editor may have started it after all: the outcome is final (EFFECT-FINAL-001).
        raise ToolError("the editor did not create a terminal in time", may_have_changed=True)
    return terminal_id


async def _wait(
    editor: EditorClient, terminal_id: str, time_limit: float
) -> tuple[ExitStatus | None, bool]:
    with anyio.move_on_after(time_limit):
        return await editor.terminal_wait_for_exit(terminal_id), False
    # Only reached when the timeout passed: the command is still running.
    await editor.terminal_kill(terminal_id)
    with anyio.move_on_after(EDITOR_CALL_TIMEOUT_SECONDS):
        return await editor.terminal_wait_for_exit(terminal_id), True
    return None, True


async def run_in_terminal(
    editor: EditorClient,
    ctx: ToolContext,
    program: str,
    args: Sequence[str],
    *,
    time_limit: float,
    output_limit: int,
) -> tuple[str, CommandResult]:
    """Run `program args` in an editor terminal; return its id and how the command ended.

    `time_limit` is not a cancel scope: when it passes the command is killed and the result
    says so (`timed_out`), so the model learns it.
    """
    try:
        terminal_id = await _create(editor, program, args, ctx, output_limit)
        try:
            # Cancelled while the (shielded) create ran: release at once, ask nothing more.
            await anyio.lowlevel.checkpoint_if_cancelled()
            if ctx.report is not None:
                await ctx.report((TerminalContent(terminal_id),))
            exit_status, timed_out = await _wait(editor, terminal_id, time_limit)
            output = await editor.terminal_output(terminal_id)
        finally:
            await _release(editor, terminal_id)
    except PeerGone:
        raise
    except PeerError as error:
        raise ToolError(
            f"the editor's terminal failed: {error.message}", may_have_changed=True
        ) from None
    status = exit_status or output.exit_status or ExitStatus()
    return terminal_id, CommandResult(
        output=output.output,
        exit_code=status.exit_code,
        signal=status.signal,
        timed_out=timed_out,
        output_truncated=output.truncated,
    )
