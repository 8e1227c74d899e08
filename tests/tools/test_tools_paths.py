"""Workspace confinement: no path outside the session roots, by `..`, absolute path or link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_bridge.errors import ToolError
from acp_bridge.tools import EditFile, ListDirectory, ReadFile, SearchFiles, WriteFile, resolve_path

pytestmark = pytest.mark.anyio


@pytest.mark.requirement("TOOLS-005")
def test_relative_and_absolute_paths_inside_are_accepted(workspace: Path, make_ctx) -> None:
    ctx = make_ctx()
    inside = resolve_path("src/../src/app.py", ctx)
    assert inside.path == workspace / "src" / "app.py"
    assert inside.display == "src/app.py"
    assert resolve_path(str(workspace / "notes.txt"), ctx).display == "notes.txt"
    assert resolve_path(".", ctx).display == "."


@pytest.mark.requirement("TOOLS-005")
def test_dot_dot_escape_is_refused_with_a_readable_message(workspace: Path, make_ctx) -> None:
    with pytest.raises(ToolError) as refused:
        resolve_path("../outside/secret.txt", make_ctx())
    message = str(refused.value)
    assert "../outside/secret.txt is outside the workspace" in message
    assert f"allowed roots: {workspace}" in message


@pytest.mark.requirement("TOOLS-005")
def test_absolute_path_outside_is_refused(workspace: Path, make_ctx) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path(str(workspace.parent / "outside" / "secret.txt"), make_ctx())
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("/etc/passwd", make_ctx())


@pytest.mark.requirement("TOOLS-005")
def test_containment_is_by_components_not_string_prefix(workspace: Path, make_ctx) -> None:
    sibling = workspace.parent / (workspace.name + "2")
    sibling.mkdir()
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path(str(sibling / "x.txt"), make_ctx())


@pytest.mark.requirement("TOOLS-005")
def test_symlink_pointing_out_is_refused(workspace: Path, make_ctx) -> None:
    (workspace / "leak.txt").symlink_to(workspace.parent / "outside" / "secret.txt")
    with pytest.raises(ToolError, match="through a symbolic link"):
        resolve_path("leak.txt", make_ctx())


@pytest.mark.requirement("TOOLS-005")
def test_path_through_a_symlinked_directory_is_refused(workspace: Path, make_ctx) -> None:
    (workspace / "linked").symlink_to(workspace.parent / "outside", target_is_directory=True)
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("linked/secret.txt", make_ctx())


@pytest.mark.requirement("TOOLS-005")
def test_dangling_symlink_pointing_out_is_refused(workspace: Path, make_ctx) -> None:
    (workspace / "later.txt").symlink_to(workspace.parent / "outside" / "not-yet.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("later.txt", make_ctx())


async def test_symlink_inside_pointing_inside_is_followed(workspace: Path, make_ctx) -> None:
    (workspace / "alias.py").symlink_to(workspace / "src" / "app.py")
    outcome = await ReadFile().run({"path": "alias.py"}, make_ctx())
    assert outcome.for_model.startswith("def main():")


async def test_additional_directories_are_roots(workspace: Path, make_ctx) -> None:
    extra = workspace.parent / "outside"
    ctx = make_ctx(extra_roots=(extra,))
    outcome = await ReadFile().run({"path": str(extra / "secret.txt")}, ctx)
    assert outcome.for_model == "top secret\n"
    assert resolve_path("../outside/secret.txt", ctx).path == extra / "secret.txt"


@pytest.mark.requirement("TOOLS-005")
async def test_new_file_under_a_symlinked_directory_is_refused(workspace: Path, make_ctx) -> None:
    outside = workspace.parent / "outside"
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    tool = WriteFile()
    arguments = {"path": "linked/new/planted.txt", "content": "x"}
    with pytest.raises(ToolError, match="outside the workspace"):
        await tool.preview(arguments, make_ctx())
    with pytest.raises(ToolError, match="outside the workspace"):
        await tool.run(arguments, make_ctx())
    assert not (outside / "new").exists()


@pytest.mark.requirement("TOOLS-005")
@pytest.mark.requirement("TOOLS-006")
async def test_every_file_tool_refuses_escapes_also_through_the_editor(
    workspace: Path, make_ctx, make_editor
) -> None:
    (workspace / "linked").symlink_to(workspace.parent / "outside", target_is_directory=True)
    editor = make_editor()
    ctx = make_ctx(editor)
    calls = [
        (ReadFile(), {"path": "../outside/secret.txt"}),
        (ReadFile(), {"path": "linked/secret.txt"}),
        (WriteFile(), {"path": "/tmp/../etc/acp-bridge-test", "content": "x"}),
        (EditFile(), {"path": "linked/secret.txt", "old_text": "top", "new_text": "no"}),
        (ListDirectory(), {"path": "linked"}),
        (SearchFiles(), {"pattern": "secret", "path": ".."}),
    ]
    for tool, arguments in calls:
        with pytest.raises(ToolError, match="outside the workspace"):
            await tool.preview(arguments, ctx)
        with pytest.raises(ToolError, match="outside the workspace"):
            await tool.run(arguments, ctx)
    assert editor.calls == []  # the editor's fs is not a way out
    assert (workspace.parent / "outside" / "secret.txt").read_text() == "top secret\n"


@pytest.mark.requirement("TOOLS-005")
async def test_search_does_not_follow_links_out(workspace: Path, make_ctx) -> None:
    (workspace / "linked").symlink_to(workspace.parent / "outside", target_is_directory=True)
    (workspace / "leak.txt").symlink_to(workspace.parent / "outside" / "secret.txt")
    outcome = await SearchFiles().run({"pattern": "secret"}, make_ctx())
    assert outcome.for_model.splitlines()[0] == "No matches."
    assert "secret" not in outcome.for_model.replace("pattern", "")


def test_nul_in_path_is_refused(make_ctx) -> None:
    with pytest.raises(ToolError, match="NUL"):
        resolve_path("a\x00b", make_ctx())


def test_cwd_given_through_a_link_still_confines(workspace: Path, make_ctx, tmp_path: Path) -> None:
    link = tmp_path / "ws-link"
    link.symlink_to(workspace, target_is_directory=True)
    ctx = make_ctx()
    ctx.cwd = link
    ctx.roots = (link,)
    assert resolve_path("notes.txt", ctx).real == Path(os.path.realpath(workspace / "notes.txt"))
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path("../outside/secret.txt", ctx)
