"""`ScriptedProvider`: the embedded default model (no key, no network).

It is stateless across calls (SCRIPT-010): everything it needs comes from the request.
The model call of the turn is one more than the `AssistantTurn`s after the last `UserTurn`;
the attempt is `request.attempt`; the script is the one the prompt names as `/name`, else
the default. The same request therefore always plays the same stream, however many
sessions or retries are in flight.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

import anyio
import anyio.lowlevel

from acp_bridge.providers._conversation import (
    AssistantTurn,
    Message,
    ModelRequest,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers._events import StreamEvent
from acp_bridge.providers.scripted._builtins import DEFAULT_SCRIPT, builtin_scripts
from acp_bridge.providers.scripted._model import Script
from acp_bridge.providers.scripted._parse import load_script
from acp_bridge.providers.scripted._play import Pause, PlayContext, play_attempt, play_epilogue

__all__ = [
    "ScriptSelection",
    "ScriptedProvider",
    "ScriptedSettings",
    "create_scripted_provider",
]

logger = logging.getLogger(__name__)

PROVIDER_NAME = "scripted"
_SLASH_COMMAND = re.compile(r"/([a-z0-9][a-z0-9-]*)(?=\s|$)")
_PROMPT_LIMIT = 80
_RESULT_LIMIT = 160


class ScriptedSettings(Protocol):
    """What `create_scripted_provider` reads; any object with these attributes fits."""

    @property
    def script_path(self) -> str | None: ...

    @property
    def model(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ScriptSelection:
    """What a request plays: which script, which 1-based turn, call and attempt."""

    script: Script
    turn: int
    call: int
    attempt: int
    prompt: str
    tool_failed: bool = False
    tool_result: str = ""


class ScriptedProvider:
    """A `ModelProvider` that plays scripts.

    `default` is played when a prompt names no script (the built-in `hello` when None) and
    is also selectable by its own name, over a built-in of the same name. `scripts` replaces
    the built-ins (read lazily on first use when None). `delay_ms`, when set, replaces every
    pause the scripts ask for: 0 for tests, a few dozen milliseconds for a lively demo.
    """

    def __init__(
        self,
        default: Script | None = None,
        *,
        scripts: Mapping[str, Script] | None = None,
        model: str = PROVIDER_NAME,
        delay_ms: int | None = None,
    ) -> None:
        self._default = default
        self._scripts = scripts
        self._model = model
        self._delay_ms = delay_ms
        self._catalog: Mapping[str, Script] | None = None

    @property
    def name(self) -> str:
        return PROVIDER_NAME

    @property
    def model(self) -> str:
        return self._model

    @property
    def default_script(self) -> Script:
        """The script a prompt without `/name` plays."""
        if self._default is not None:
            return self._default
        catalog = self.available_scripts()
        if DEFAULT_SCRIPT in catalog:
            return catalog[DEFAULT_SCRIPT]
        return next(iter(catalog.values()))

    def available_scripts(self) -> Mapping[str, Script]:
        """Every script a prompt can name as `/name` (for `available_commands_update`)."""
        if self._catalog is None:
            catalog = dict(builtin_scripts() if self._scripts is None else self._scripts)
            if self._default is not None:
                catalog[self._default.name] = self._default
            if not catalog:
                raise ValueError("a ScriptedProvider needs at least one script")
            self._catalog = MappingProxyType(catalog)
        return self._catalog

    def select(self, request: ModelRequest) -> ScriptSelection:
        """Decide, from the request alone, what to play (SCRIPT-010, SCRIPT-011, SCRIPT-013)."""
        messages = list(request.messages)
        users = [index for index, message in enumerate(messages) if isinstance(message, UserTurn)]
        last_user = users[-1] if users else -1
        # SCRIPT-010: the call number is counted, never remembered.
        call = 1 + sum(isinstance(m, AssistantTurn) for m in messages[last_user + 1 :])
        text = last_part = ""
        if last_user >= 0:
            user = messages[last_user]
            assert isinstance(user, UserTurn)
            text = "\n".join(user.parts).strip()
            last_part = user.parts[-1].strip() if user.parts else ""
            if user.images:  # SCRIPT-IMAGE: the scripted model takes images and says so
                count = len(user.images)
                text = f"{text} [{count} image{'s' if count != 1 else ''} attached]".strip()
            if user.audio:  # AUDIO-002: and audio clips
                count = len(user.audio)
                text = f"{text} [{count} audio clip{'s' if count != 1 else ''} attached]".strip()
        script, prompt = self.default_script, text
        command = _SLASH_COMMAND.match(text)
        if command is None and _SLASH_COMMAND.match(last_part) is not None:
            # A prompt joined after an unanswered one (SESS-CANCEL-001) ends with its own.
            text = last_part
            command = _SLASH_COMMAND.match(text)
        if command is not None and command.group(1) in self.available_scripts():
            # SCRIPT-013: `/name rest` plays that script; `rest` is its prompt.
            script = self.available_scripts()[command.group(1)]
            prompt = text[command.end() :].strip()
        failed, result = _last_results(messages[last_user + 1 :])
        return ScriptSelection(
            script=script,
            turn=max(len(users), 1),
            call=call,
            attempt=max(request.attempt, 1),
            prompt=_summarize(prompt),
            tool_failed=failed,
            tool_result=result,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Play one attempt; raise `ModelStreamError` where the script breaks."""
        selection = self.select(request)
        script = selection.script
        context = PlayContext(
            script=script.name,
            provider=PROVIDER_NAME,
            model=request.model or self._model,
            turn=selection.turn,
            call=selection.call,
            attempt=selection.attempt,
            prompt=selection.prompt,
            delay_ms=script.delay_ms,
            pace_ms=self._delay_ms,
            tool_result=selection.tool_result,
        )
        logger.debug(
            "scripted: playing %r turn %d call %d attempt %d",
            script.name,
            selection.turn,
            selection.call,
            selection.attempt,
        )
        call = script.call(selection.call)
        items: Iterator[StreamEvent | Pause] = (
            play_epilogue(context)
            if call is None
            else play_attempt(
                call.attempt(selection.attempt, tool_failed=selection.tool_failed), context
            )
        )
        for item in items:
            if isinstance(item, Pause):
                await anyio.sleep(item.seconds)
                continue
            # Cancellable between events, as a network stream is, even without pauses.
            await anyio.lowlevel.checkpoint()
            yield item


def create_scripted_provider(settings: ScriptedSettings) -> ScriptedProvider:
    """The provider for the CLI: `settings.script_path` (if set) becomes the default script.

    Raises `ScriptError` when the file cannot be read or is not a valid script.
    """
    path = getattr(settings, "script_path", None)
    model = getattr(settings, "model", None) or PROVIDER_NAME
    default = load_script(path) if path else None
    return ScriptedProvider(default, model=model)


def _last_results(messages: Sequence[Message]) -> tuple[bool, str]:
    """SCRIPT-015: whether a result of the round just before this call failed, and the
    result the script may quote (the first failed one, else the first), on one line."""
    last = messages[-1] if messages else None
    if not isinstance(last, ToolResults) or not last.results:
        return False, ""
    failed = [r for r in last.results if r.is_error]
    chosen = (failed or list(last.results))[0]
    return bool(failed), _summarize(chosen.output, limit=_RESULT_LIMIT)


def _summarize(prompt: str, limit: int = _PROMPT_LIMIT) -> str:
    """The prompt as `${prompt}` shows it: one line, at most 80 characters (`limit`)."""
    line = " ".join(prompt.split())
    if not line:
        return "(empty)"
    if len(line) > limit:
        return line[: limit - 1].rstrip() + "…"
    return line
