"""Waiting people can see: retry notices, a stalled-stream notice, and a cap on the waiting.

A `ProgressWatch` follows one model call across its attempts. The runner counts the events
it receives (`seen`); a watcher task wakes a few times per `stall_notice_after` and, when no
event arrived for that long, tells the user once per stall ("no data from the model for
15 s"). Waiting is the time since the model call last made progress (its start, or the last
event received), back-offs included; when it exceeds `max_wait` the watcher cancels the
attempt and the turn ends with an error that names what to check (spec/usage-and-compaction.md
#wait-003). SSE keep-alive comments are not events, so they never count as progress.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from acp_bridge.providers import FaultKind, ModelStreamError
from acp_bridge.turn._updates import UserNotice

_NOTIFY_LIMIT = 10.0
logger = logging.getLogger(__name__)

__all__ = [
    "AfterStream",
    "ProgressWatch",
    "retry_notice",
    "run_watched",
    "wait_exceeded",
    "wait_exceeded_message",
]


def retry_notice(
    error: ModelStreamError | None, attempt: int, max_attempts: int, delay: float
) -> UserNotice:
    """The words of a retry: what broke, which attempt comes, and when."""
    if error is None:
        what = "The answer was filtered"
    elif error.status == 429 or error.kind.value == "rate_limited":
        what = "Rate limited by the model provider"
    elif error.kind.value in ("idle_timeout", "first_token_timeout"):
        what = "The model stopped sending data"
    elif error.kind.value == "unparsed_output":  # UNPARSED-002
        what = "The model server could not read the model's reply; asking again with the format"
    elif error.kind.value in ("connection_failed",):
        what = "Could not reach the model provider"
    elif error.status is not None:
        what = f"The model provider answered HTTP {error.status}"
    else:
        what = "The connection to the model broke"
    when = f"retrying in {delay:.0f} s" if delay >= 1.0 else "retrying now"
    return UserNotice(
        severity="warning",
        title=f"{what}; {when}, attempt {attempt} of {max_attempts}",
        description=None if error is None else error.message,
        kind="retry",
    )


def wait_exceeded_message(provider: str, waited: float, max_wait: float) -> str:
    return (
        f"Gave up waiting for the model: no progress from {provider} for {waited:.0f} s "
        f"(the limit is {max_wait:g} s, setting max_wait). Check that the provider's server "
        "is running and reachable (base_url, network, proxy), or raise max_wait for a slow "
        "local model."
    )


class ProgressWatch:
    """One model call's progress clock (see the module docstring)."""

    __slots__ = (
        "_clock",
        "_notified",
        "exceeded",
        "last_progress",
        "max_wait",
        "seen",
        "stall_after",
    )

    def __init__(
        self,
        *,
        stall_after: float | None,
        max_wait: float | None,
        clock: Callable[[], float] = anyio.current_time,
    ) -> None:
        self.stall_after = stall_after
        self.max_wait = max_wait
        self._clock = clock
        self.seen = 0
        self.last_progress = clock()
        self.exceeded = False
        self._notified = False

    def waited(self) -> float:
        return self._clock() - self.last_progress

    def would_exceed(self, delay: float) -> bool:
        """A back-off of `delay` s would take the call past `max_wait`."""
        return self.max_wait is not None and self.waited() + delay > self.max_wait

    async def watch(
        self,
        scope: anyio.CancelScope,
        notify: Callable[[UserNotice], Awaitable[None]],
        done: anyio.Event,
    ) -> None:
        """Runs beside one attempt's stream until `done` is set (or it is cancelled); cancels
        `scope` past max_wait. Ending on `done` rather than by a cancellation spares every
        model call's end a `CancelScope.cancel()` (which formats the task's repr: issue 15.2)."""
        limits = [x for x in (self.stall_after, self.max_wait) if x is not None and x > 0]
        if not limits:
            await done.wait()
            return
        period = max(min(limits) / 4, 0.01)
        seen = self.seen
        while True:
            with anyio.move_on_after(period):
                await done.wait()
            if done.is_set():
                return
            if self.seen != seen:  # progress since the last look
                seen = self.seen
                self.last_progress = self._clock()
                self._notified = False
                continue
            waited = self.waited()
            if self.max_wait is not None and waited >= self.max_wait:
                self.exceeded = True
                scope.cancel()
                return
            if self.stall_after is not None and waited >= self.stall_after and not self._notified:
                self._notified = True
                limit = "" if self.max_wait is None else f"; giving up after {self.max_wait:g} s"
                notice = UserNotice(
                    severity="warning",
                    title=f"No data from the model for {waited:.0f} s; still waiting{limit}",
                    kind="stalled",
                )
                # Shielded: a notice is never cut half-written when the attempt ends.
                with anyio.CancelScope(shield=True), anyio.move_on_after(_NOTIFY_LIMIT):
                    await notify(notice)


def wait_exceeded(
    failure: ModelStreamError | None, provider: str, watch: ProgressWatch, delay: float
) -> ModelStreamError:
    """The final error of a model call that waited past `max_wait` (WAIT-003)."""
    assert watch.max_wait is not None
    kind = FaultKind.IDLE_TIMEOUT if failure is None else failure.kind
    message = wait_exceeded_message(provider, watch.waited() + delay, watch.max_wait)
    return ModelStreamError(
        kind, message, retryable=False, status=None if failure is None else failure.status
    )


AfterStream = Callable[[], Awaitable[None]]
"""What a stream that ended well leaves to do once nothing waits for it: closing its
iterator (the rest of the body drained, the connection back to its pool: TAIL4-STREAM-001)."""


async def run_watched(
    run: Callable[[], Awaitable[AfterStream | None]],
    watch: ProgressWatch,
    notify: Callable[[UserNotice], Awaitable[None]],
    provider: str,
    background: TaskGroup | None = None,
) -> None:
    """`run()` (one attempt's stream) beside the watch's task (WAIT-002, WAIT-003): its own
    exception leaves unwrapped; cut off past `max_wait`, it ends as `wait_exceeded`. What
    `run` returns (`AfterStream`) is awaited after it: here, or in the watch's task.

    Given a `background` task group (the connection's), the watch runs there and its end is
    not joined (TAIL2-002): after one yield (the chunk writer puts the stream's last chunks
    on the wire), `done` tells it to return, so it ends at the caller's next yield, after
    whatever the caller does without one (the turn's end and its response), and the
    `AfterStream` runs there too, before it returns (TAIL4-STREAM-001). A watch that fails cancels
    the stream and its error is raised here, as when it runs beside it."""
    failure: Exception | None = None
    after: AfterStream | None = None
    apart = _Apart()
    with anyio.CancelScope() as scope:
        if background is None:
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch.watch, scope, notify, apart.done)
                try:
                    closing = await run()
                    if closing is not None:
                        await closing()  # shielded and bounded: whatever the watch does
                except Exception as exc:
                    failure = exc
                apart.done.set()  # the watch returns: no cancellation to deliver
        else:
            background.start_soon(_watch_apart, watch, scope, notify, apart)
            try:
                after = await run()
            except Exception as exc:
                failure = exc
            except BaseException:
                apart.end(None)
                raise
            # One yield, as the join gave: the chunk writer puts the stream's last chunks on
            # the wire now, not behind the rest of the call's end. Then the watch is told to
            # return; it does at the caller's next yield.
            await anyio.lowlevel.cancel_shielded_checkpoint()
            if apart.end(after):
                after = None  # the watch's task runs it
    if after is not None:
        await after()
    if apart.failure is not None:
        failure = apart.failure
    if failure is not None:
        raise failure
    if watch.exceeded:
        raise wait_exceeded(None, provider, watch, 0.0)


class _Apart:
    """Between `run_watched` and its watch's task in a background group: `done` (the stream
    ended), what is left to run after it, the watch's failure, and whether its task ended."""

    __slots__ = ("after", "done", "ended", "failure")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.after: AfterStream | None = None
        self.failure: Exception | None = None
        self.ended = False

    def end(self, after: AfterStream | None) -> bool:
        """The stream ended: the watch returns. True if its task takes `after` over (it has
        not ended yet); else the caller runs it."""
        if not self.ended:
            self.after = after
        self.done.set()
        return not self.ended and after is not None


async def _watch_apart(
    watch: ProgressWatch,
    scope: anyio.CancelScope,
    notify: Callable[[UserNotice], Awaitable[None]],
    apart: _Apart,
) -> None:
    """`watch.watch` in a background group: its error goes to `apart` and cancels the
    stream (`scope`), never the group. Then what the stream left (`apart.after`) runs, even
    when the group is being cancelled (each `AfterStream` is shielded and bounded)."""
    try:
        await watch.watch(scope, notify, apart.done)
    except Exception as exc:
        if not apart.done.is_set():
            apart.failure = exc
            scope.cancel()
        else:
            logger.debug("the progress watch failed after its stream ended", exc_info=exc)
    finally:
        apart.ended = True
        after, apart.after = apart.after, None
        if after is not None:
            try:
                await after()
            except Exception:
                logger.debug("closing a finished model stream failed", exc_info=True)
