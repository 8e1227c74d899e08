"""Resource links (@-mentions): workspace files read for the model, others described (14.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from daily.test_daily_instructions import PROVIDERS
from loopback_http import LoopbackServer

from acp_bridge.agent._links import link_path
from acp_bridge.providers.http import HttpProviderOptions

pytestmark = pytest.mark.anyio


def link(path: Path | str, name: str) -> dict[str, Any]:
    uri = path if isinstance(path, str) else path.as_uri()
    return {"type": "resource_link", "uri": uri, "name": name}


def user_text(kind: str, body: dict[str, Any]) -> str:
    """Every text part of the request body's user turns, joined."""
    if kind == "openai":
        turns = [m["content"] for m in body["messages"] if m["role"] == "user"]
        parts = [t if isinstance(t, str) else "".join(p.get("text", "") for p in t) for t in turns]
        return "\n".join(parts)
    if kind == "anthropic":
        return "\n".join(
            b["text"] for m in body["messages"] for b in m["content"] if b["type"] == "text"
        )
    return "\n".join(p.get("text", "") for c in body["contents"] for p in c["parts"])


async def send(
    tmp_path: Path, kind: str, prompt: list[dict[str, Any]], *, fs: bool = True
) -> tuple[str, list[dict[str, Any]]]:
    """Prompt once through `kind` at a loopback server; the user text it got, fs requests."""
    provider_type, answer = PROVIDERS[kind]
    async with LoopbackServer([answer()]) as server:
        options = HttpProviderOptions("m", base_url=server.base_url, api_key="k")
        config = scripted_config(tmp_path / "s", provider_type(options))
        async with running_bridge(config, fs=fs) as ed:
            await ed.initialize()
            session = await ed.new_session(tmp_path / "work")
            reply = await ed.call("session/prompt", {"sessionId": session, "prompt": prompt})
            assert reply["stopReason"] == "end_turn"
            reads = ed.requests_of("fs/read_text_file")
        body = server.requests[0].json()
    return user_text(kind, body), reads


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "work" / "src").mkdir(parents=True)
    (tmp_path / "work" / "src" / "app.py").write_text("def main():\n    return 42\n")
    (tmp_path / "outside.txt").write_text("SECRET outside the workspace\n")
    return tmp_path / "work"


@pytest.mark.requirement("CONTENT-006")
@pytest.mark.parametrize(("kind", "fs"), [("openai", True), ("anthropic", False), ("gemini", True)])
async def test_a_mentioned_workspace_file_reaches_the_model(
    tmp_path: Path, work: Path, kind: str, fs: bool
) -> None:
    app = work / "src" / "app.py"
    prompt = [{"type": "text", "text": "Explain"}, link(app, "app.py")]
    text, reads = await send(tmp_path, kind, prompt, fs=fs)
    assert f'<file path="src/app.py" uri="{app.as_uri()}" bytes="26">' in text
    assert "def main():\n    return 42\n" in text
    # Through the editor's fs/read_text_file when it offered it, else from the local disk.
    assert [r["params"]["path"] for r in reads] == ([str(app)] if fs else [])


@pytest.mark.requirement("CONTENT-006")
async def test_a_big_mentioned_file_is_cut_with_a_marker(tmp_path: Path, work: Path) -> None:
    big = work / "big.txt"
    big.write_text("".join(f"line {n:06d}\n" for n in range(10_000)))  # 120 000 bytes
    text, _ = await send(tmp_path, "openai", [link(big, "big.txt")])
    assert 'bytes="120000" truncated="true"' in text
    assert "more bytes truncated ...]" in text
    assert "Use read_file for the rest." in text
    assert len(text.encode()) < 64 * 1024 + 1024
    assert "line 009999" not in text


@pytest.mark.requirement("CONTENT-007")
async def test_links_outside_the_workspace_are_described_not_read(
    tmp_path: Path, work: Path
) -> None:
    outside = tmp_path / "outside.txt"
    prompt = [
        link(outside, "outside.txt"),
        link("https://example.com/spec.md", "spec.md"),
        link(work / "missing.py", "missing.py"),
    ]
    text, reads = await send(tmp_path, "openai", prompt)
    assert "SECRET" not in text
    assert f"[outside.txt]({outside.as_uri()}) (not read: path {outside} is outside" in text
    assert "[spec.md](https://example.com/spec.md) (not a local file; not read)" in text
    assert "[missing.py]" in text
    assert "(not read: the editor could not read missing.py" in text
    assert [r["params"]["path"] for r in reads] == [str(work / "missing.py")]


@pytest.mark.requirement("CONTENT-007")
def test_only_local_file_uris_have_a_path() -> None:
    assert link_path("file:///a/b%20c.py") == "/a/b c.py"
    assert link_path("file://localhost/a.py") == "/a.py"
    assert link_path("file://server/share/a.py") is None
    assert link_path("https://example.com/a.py") is None
    assert link_path("zed:///a.py") is None


@pytest.mark.requirement("CONTENT-006")
def test_the_session_title_shows_a_mention_as_its_path() -> None:
    from acp_bridge.agent._prompt import prompt_title
    from acp_bridge.providers import UserTurn

    turn = UserTurn(
        ('<file path="src/app.py" uri="file:///w/src/app.py" bytes="3">\nx\n</file>', "why?")
    )
    assert prompt_title(turn) == "@src/app.py why?"
