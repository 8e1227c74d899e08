"""Which stream a request plays: stateless call and attempt counting, slash commands, files."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from acp_bridge.providers import (
    AssistantTurn,
    FinishReason,
    Message,
    ModelProvider,
    ModelRequest,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers.scripted import (
    DEFAULT_SCRIPT,
    Script,
    ScriptedProvider,
    ScriptError,
    builtin_scripts,
    create_scripted_provider,
    parse_script,
)

Player = Callable[[ModelProvider, ModelRequest], Awaitable[Any]]
RequestFor = Callable[..., ModelRequest]


def numbered(name: str = "numbered", calls: int = 2, attempts: int = 3) -> Script:
    """A script whose every attempt says which call and attempt it is."""
    return parse_script(
        {
            "name": name,
            "description": f"{name}: says where it is",
            "calls": [
                {
                    "attempts": [
                        [{"text": [f"{name} call {c} attempt {a}"]}, {"finish": "stop"}]
                        for a in range(1, attempts + 1)
                    ]
                }
                for c in range(1, calls + 1)
            ],
        }
    )


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-010")
@pytest.mark.requirement("SCRIPT-011")
async def test_call_and_attempt_come_from_the_request(
    play: Player, request_for: RequestFor
) -> None:
    provider = ScriptedProvider(numbered())
    for call in (1, 2):
        for attempt in (1, 2, 3):
            played = await play(provider, request_for("go", call=call, attempt=attempt))
            assert played.text == f"numbered call {call} attempt {attempt}"
    # SCRIPT-011: past the listed attempts, the last one repeats.
    played = await play(provider, request_for("go", call=2, attempt=7))
    assert played.text == "numbered call 2 attempt 3"


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-010")
async def test_earlier_turns_do_not_count(play: Player) -> None:
    provider = ScriptedProvider(numbered())
    history: list[Message] = [
        UserTurn(("first",)),
        AssistantTurn("a"),
        ToolResults(()),
        AssistantTurn("b"),
        UserTurn(("second",)),
        AssistantTurn("c"),
        ToolResults(()),
    ]
    played = await play(provider, ModelRequest("m", history, attempt=2))
    assert played.text == "numbered call 2 attempt 2"
    played = await play(provider, ModelRequest("m", [*history, UserTurn(("third",))]))
    assert played.text == "numbered call 1 attempt 1"


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-010")
async def test_the_same_request_plays_the_same_stream_in_any_order(
    play: Player, request_for: RequestFor
) -> None:
    provider = ScriptedProvider()
    first = request_for("/help-desk-refund", attempt=1)
    second = request_for("/help-desk-refund", attempt=2)
    a1 = await play(provider, first)
    a2 = await play(provider, second)
    a2_again = await play(provider, second)
    a1_again = await play(provider, first)
    assert a1.trace() == a1_again.trace()
    assert a2.trace() == a2_again.trace()
    assert a1.trace() != a2.trace()


@pytest.mark.requirement("SCRIPT-010")
def test_select_reports_turn_call_attempt(request_for: RequestFor) -> None:
    provider = ScriptedProvider()
    history = [UserTurn(("earlier",)), AssistantTurn("done")]
    selection = provider.select(
        request_for("/broken-twice  the  rest ", call=3, attempt=2, history=history)
    )
    assert selection.script.name == "broken-twice"
    assert (selection.turn, selection.call, selection.attempt) == (2, 3, 2)
    assert selection.prompt == "the rest"
    # A request without any user turn still plays something sensible.
    empty = provider.select(ModelRequest("m", []))
    assert (empty.script.name, empty.turn, empty.call, empty.prompt) == ("hello", 1, 1, "(empty)")


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-013")
async def test_slash_command_picks_a_builtin(play: Player, request_for: RequestFor) -> None:
    provider = ScriptedProvider()
    played = await play(provider, request_for("  /broken-mid-word please"))
    assert played.text == "The stream broke in the middle of a wo"
    assert played.error is not None


@pytest.mark.requirement("SCRIPT-013")
@pytest.mark.parametrize(
    ("prompt", "script", "echo"),
    [
        ("what is ACP?", "hello", "what is ACP?"),
        ("/hello echo me", "hello", "echo me"),
        ("/hello", "hello", "(empty)"),
        ("/no-such-script x", "hello", "/no-such-script x"),
        ("/broken-mid-wordy", "hello", "/broken-mid-wordy"),
        ("/Broken-mid-word", "hello", "/Broken-mid-word"),
        ("say /broken-mid-word", "hello", "say /broken-mid-word"),
        ("/rate-limited\nsecond line", "rate-limited", "second line"),
    ],
)
def test_prompt_selects_script(
    prompt: str, script: str, echo: str, request_for: RequestFor
) -> None:
    selection = ScriptedProvider().select(request_for(prompt))
    assert (selection.script.name, selection.prompt) == (script, echo)


def test_prompt_parts_are_joined_and_long_prompts_shortened() -> None:
    provider = ScriptedProvider()
    request = ModelRequest("m", [UserTurn(("/hello", "from a resource"))])
    assert provider.select(request).prompt == "from a resource"
    long = provider.select(ModelRequest("m", [UserTurn(("word " * 40,))])).prompt
    assert len(long) == 80
    assert long.endswith("…")


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-013")
@pytest.mark.requirement("SCRIPT-040")
async def test_default_hello_acknowledges_the_prompt(play: Player, request_for: RequestFor) -> None:
    played = await play(ScriptedProvider(), request_for("Is   it\nworking?"))
    assert played.text.startswith("Hello! You said: “Is it working?”. I am acp-bridge's scripted")
    assert sum(1 for e in played.trace() if e[0] == "text") > 5
    assert ("usage", 24, 32) in played.trace()
    assert played.trace()[-1] == ("finish", "stop")


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-012")
async def test_calls_past_the_script_end_the_turn(play: Player, request_for: RequestFor) -> None:
    played = await play(ScriptedProvider(), request_for("/hello", call=2))
    assert played.text == "That is all: the script hello has no model call 2."
    assert played.trace()[0] == ("start",)
    assert played.trace()[-1] == ("finish", "stop")
    assert played.error is None


@dataclass(frozen=True)
class Settings:
    script_path: str | None = None
    model: str = "scripted"


def write_script(path: Path, name: str, text: str) -> Path:
    data = {
        "name": name,
        "description": f"user script {name}",
        "calls": [{"attempts": [[{"text": text}, {"finish": "stop"}]]}],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-014")
async def test_script_file_becomes_the_default(
    tmp_path: Path, play: Player, request_for: RequestFor
) -> None:
    path = write_script(tmp_path / "mine.json", "mine", "mine speaks")
    provider = create_scripted_provider(Settings(script_path=str(path), model="my-model"))
    assert (provider.name, provider.model) == ("scripted", "my-model")
    assert provider.default_script.name == "mine"
    assert (await play(provider, request_for("anything"))).text == "mine speaks"
    assert (await play(provider, request_for("/mine"))).text == "mine speaks"
    # Built-ins stay selectable by name, and are offered next to the user's script.
    assert (await play(provider, request_for("/hello x"))).text.startswith("Hello! ")
    assert set(provider.available_scripts()) == {*builtin_scripts(), "mine"}


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-014")
async def test_script_file_replaces_a_builtin_of_the_same_name(
    tmp_path: Path, play: Player, request_for: RequestFor
) -> None:
    path = write_script(tmp_path / "x.json", "broken-mid-word", "not broken at all")
    provider = create_scripted_provider(SimpleNamespace(script_path=str(path), model=""))
    assert provider.model == "scripted"
    played = await play(provider, request_for("/broken-mid-word"))
    assert (played.text, played.error) == ("not broken at all", None)
    assert provider.available_scripts()["broken-mid-word"].description.startswith("user script")


@pytest.mark.requirement("SCRIPT-014")
@pytest.mark.requirement("SCRIPT-051")
def test_invalid_script_file_fails_at_creation(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"name": "bad", "description": "d", "calls": [{"attempts": [[]]}]}')
    with pytest.raises(ScriptError, match=r"bad\.json: call 1, attempt 1: an attempt must be"):
        create_scripted_provider(Settings(script_path=str(path)))
    with pytest.raises(ScriptError, match="cannot read"):
        create_scripted_provider(Settings(script_path=str(tmp_path / "missing.json")))


def test_settings_without_a_script_use_the_builtins() -> None:
    provider = create_scripted_provider(Settings())
    assert provider.default_script.name == DEFAULT_SCRIPT
    assert provider.available_scripts() == builtin_scripts()


@pytest.mark.anyio
async def test_request_model_wins_over_the_providers(play: Player, request_for: RequestFor) -> None:
    provider = ScriptedProvider(model="scripted-default")
    played = await play(provider, request_for("hi", model="picked"))
    assert played.events[0].model == "picked"
    assert played.events[0].request_id == "hello/1.1.1"
    played = await play(provider, request_for("hi"))
    assert played.events[0].model == "scripted-default"


@pytest.mark.anyio
async def test_own_script_catalog(play: Player, request_for: RequestFor) -> None:
    one, two = numbered("one", 1, 1), numbered("two", 1, 1)
    provider = ScriptedProvider(scripts={"one": one, "two": two})
    assert provider.default_script is one  # no `hello` among them: the first one
    assert (await play(provider, request_for("/two"))).text == "two call 1 attempt 1"
    assert (await play(provider, request_for("/hello"))).text == "one call 1 attempt 1"
    with pytest.raises(ValueError, match="at least one script"):
        ScriptedProvider(scripts={}).available_scripts()


@pytest.mark.anyio
async def test_finish_is_the_last_event_of_a_complete_attempt(
    play: Player, request_for: RequestFor
) -> None:
    played = await play(ScriptedProvider(), request_for("/tool-loop-break-second-call"))
    assert played.finish is not None
    assert played.finish.reason is FinishReason.TOOL_CALLS
