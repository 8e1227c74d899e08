"""The demo's run: one real acp-bridge process, spawned as an editor spawns it, playing scripts.

Each scenario gets its own workspace and session (side by side, like editor tabs); the run
keeps what the reference client saw and what the effect ledger recorded, for `_demo_report`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from acp_bridge.client import PromptOutcome, WireMessage, spawn_bridge
from acp_bridge.turn import EffectLedger, EffectRecord

__all__ = ["DemoRun", "Played", "play"]

_HELLO_PROMPT = "Hello, bridge!"
_SEED_README = (
    "# Demo workspace\n\nA scratch folder acp-bridge's demo made; it is deleted afterwards.\n"
)


@dataclass(frozen=True, slots=True)
class Played:
    """One scenario: its script name, its workspace, what the client saw of its turn."""

    name: str
    workspace: Path
    outcome: PromptOutcome


@dataclass(frozen=True, slots=True)
class DemoRun:
    """The whole run: how the bridge was spawned and ended, and every scenario and effect."""

    argv: tuple[str, ...]
    returncode: int | None
    stderr: str
    agent: Mapping[str, Any]
    played: tuple[Played, ...]
    effects: tuple[EffectRecord, ...]


def _bridge_environment() -> dict[str, str]:
    # The user's own ACP_BRIDGE_* settings must not turn the demo into a real model run.
    return {k: v for k, v in os.environ.items() if not k.startswith("ACP_BRIDGE_")}


async def play(names: Sequence[str], root: Path, transcript: list[WireMessage]) -> DemoRun:
    state = root / "state"
    config = root / "config.toml"
    config.write_text("# empty: the demo uses only its flags\n", encoding="utf-8")
    args = ["--provider", "scripted", "--state-dir", str(state), "--config", str(config)]
    played: dict[str, Played] = {}
    async with spawn_bridge(args, env=_bridge_environment()) as bridge:
        client = bridge.client
        await client.initialize()

        async def scenario(name: str) -> None:
            workspace = root / "workspaces" / name
            workspace.mkdir(parents=True)
            (workspace / "README.md").write_text(_SEED_README, encoding="utf-8")
            session_id = await client.new_session(workspace)
            prompt = _HELLO_PROMPT if name == "hello" else f"/{name}"
            played[name] = Played(name, workspace, await client.prompt(session_id, prompt))

        # Each scenario has its own session; they run side by side like editor tabs.
        async with anyio.create_task_group() as tg:
            for name in names:
                tg.start_soon(scenario, name)
        transcript.extend(client.transcript)
    with EffectLedger(state) as ledger:
        effects = tuple(ledger.records())
    return DemoRun(
        argv=bridge.argv,
        returncode=bridge.returncode,
        stderr=bridge.stderr_text,
        agent=client.agent_info,
        played=tuple(played[name] for name in names),
        effects=effects,
    )
