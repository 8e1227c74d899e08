"""Shared pieces of the MCP tests: our SDK fault server, a recording provider, scripts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import bridge

from acp_bridge.providers import ToolResults
from acp_bridge.providers.scripted import ScriptedProvider, loads_script

HERE = Path(__file__).resolve().parent
FAULT_SERVER = HERE / "fault_server.py"
REFUND = "mcp__faults__refund"
MCP_WAIT = 90.0
"""How long the scripted editor waits for a request: a prompt waits for the session's MCP
servers to connect (the SDK's import and the server's start), slow on a loaded machine."""


def fault_server(log: Path, name: str = "faults") -> dict[str, Any]:
    """The `mcpServers` entry (ACP stdio) of our fault server, logging calls to `log`."""
    return {
        "name": name,
        "command": sys.executable,
        "args": [str(FAULT_SERVER)],
        "env": [{"name": "FAULT_SERVER_LOG", "value": str(log)}],
    }


def calls(log: Path, tool: str | None = None) -> list[dict[str, Any]]:
    """What reached the fault server (one JSON line per call)."""
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [c for c in lines if tool is None or c["tool"] == tool]


def broken_refund_script(tool: str = REFUND) -> dict[str, Any]:
    """The seed's help-desk stream with the refund as an MCP tool: attempt 1 calls it and
    breaks mid-word; the retry calls it again under another id and finishes."""
    arguments = {"order_id": "ORD-7781", "amount": "full"}
    return {
        "name": "mcp-refund",
        "description": "the seed's broken refund stream, the refund an MCP tool",
        "calls": [
            {
                "attempts": [
                    [
                        {"text": "Checking order ORD-7781. "},
                        {"tool_call": tool, "id": "c1", "arguments": arguments},
                        {"text": ["Refunding ", "the ", "dam"]},
                        {"break": "stream_interrupted", "message": "connection reset by peer"},
                    ],
                    [
                        {"text": "Looking up order ORD-7781. "},
                        {"tool_call": tool, "id": "c7", "arguments": arguments},
                        {"text": "The book arrived damaged, so I have started a full refund."},
                        {"finish": "auto"},
                    ],
                ]
            },
            {"attempts": [[{"text": "Your refund is on its way."}, {"finish": "stop"}]]},
        ],
    }


def one_call_script(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "one-call",
        "description": f"calls {tool} once",
        "calls": [
            {"attempts": [[{"tool_call": tool, "arguments": arguments}, {"finish": "auto"}]]},
            {"attempts": [[{"text": "Done."}, {"finish": "stop"}]]},
        ],
    }


class RecordingProvider(bridge.RecordingProvider):
    """The scripted provider playing `script`, remembering every request it was asked to stream."""

    def __init__(self, script: dict[str, Any]) -> None:
        super().__init__(ScriptedProvider(loads_script(json.dumps(script)), delay_ms=0))

    def tool_results(self) -> list[tuple[str, str, bool]]:
        """(name, output, is_error) of every tool result the model was sent, last request."""
        if not self.requests:
            return []
        return [
            (r.name, r.output, r.is_error)
            for m in self.requests[-1].messages
            if isinstance(m, ToolResults)
            for r in m.results
        ]


NPM_DIR = HERE / "npm"


def npm_servers() -> Path:
    """tests/mcp_tests/npm/node_modules, installed with `npm ci` on first use.

    The reference MCP servers are npm packages, so they need Node.js: without it these tests
    are skipped with that reason, except under CI (`CI=true`, where .ci/run installs them
    first), where a missing server fails.
    """
    import os
    import shutil
    import subprocess

    import pytest

    modules = NPM_DIR / "node_modules"
    marker = modules / "@modelcontextprotocol" / "server-everything" / "package.json"
    if marker.exists():
        return modules
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        if os.environ.get("CI"):
            raise AssertionError(
                f"the npm MCP servers are required in CI: install Node.js and run `npm ci` in "
                f"{NPM_DIR}"
            )
        pytest.skip(
            "Node.js is not installed: these tests need the reference MCP servers from npm "
            f"(install Node.js, then `npm ci` in {NPM_DIR}; .ci/run does it)"
        )
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=NPM_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not marker.exists():
        raise AssertionError(f"`npm ci` in {NPM_DIR} failed:\n{done.stderr[-2000:]}")
    return modules
