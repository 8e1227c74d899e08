"""Project instructions and the system prompt of a turn (spec/daily-use.md#instr-001).

The system prompt is built for every turn, in this order: the base (the user's
`system_prompt`, which replaces the built-in one), the user's `append_system_prompt`, where
the workspace is, the session's additional directories, and then the project instructions:
`AGENTS.md` and the files peers use for the same purpose (`CLAUDE.md`, `GEMINI.md`) at the
root of the workspace and of each additional directory, read from disk, size-bounded. What
was loaded is told to the user once per session on this connection (a notice).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from acp_bridge.turn import UserNotice

__all__ = [
    "INSTRUCTION_FILES",
    "LoadedFile",
    "ProjectInstructions",
    "load_instructions",
    "system_prompt",
]

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
_FILE_LIMIT = 32 * 1024  # bytes of one file given to the model
_TOTAL_LIMIT = 64 * 1024  # bytes of every file together
_TRUNCATED = "\n[... truncated: the rest of this file was not loaded (size limit) ...]"
_PLANS = (
    "For work of three or more steps, keep a plan with update_plan and update it as each "
    "step starts and ends."
)


@dataclass(frozen=True, slots=True)
class LoadedFile:
    """One instructions file as given to the model."""

    path: Path
    size: int  # bytes on disk
    loaded: int  # bytes given to the model
    text: str

    @property
    def truncated(self) -> bool:
        return self.loaded < self.size


@dataclass(frozen=True, slots=True)
class ProjectInstructions:
    """The project's instructions files found for a session, in the order they apply."""

    files: tuple[LoadedFile, ...]

    def section(self) -> str:
        """The system-prompt section holding the files, each under its path."""
        parts = [
            f'<project_instructions path="{f.path}">\n{f.text}\n</project_instructions>'
            for f in self.files
        ]
        if not parts:
            return ""
        head = (
            "Project instructions from the workspace follow. Follow them unless the user "
            "asks otherwise."
        )
        return "\n\n".join([head, *parts])

    def notice(self) -> UserNotice | None:
        """What the user is told was loaded (None when nothing was)."""
        if not self.files:
            return None
        names = ", ".join(
            f"{f.path} ({_size(f.size)}{', truncated' if f.truncated else ''})" for f in self.files
        )
        return UserNotice(
            severity="info",
            title=f"Loaded project instructions: {', '.join(f.path.name for f in self.files)}",
            description=f"Given to the model with every prompt: {names}.",
            kind="instructions",
        )


def _size(size: int) -> str:
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KiB"


def load_instructions(roots: tuple[Path, ...]) -> ProjectInstructions:
    """The instruction files at each root, in root order then `INSTRUCTION_FILES` order.

    Each file is bounded (32 KiB), all together too (64 KiB); a file that cannot be read or
    is not UTF-8 is skipped (logged by nobody: it is the user's own file, and the notice
    lists what was loaded). A file reached twice (a root inside another, a link) loads once.
    """
    files: list[LoadedFile] = []
    seen: set[Path] = set()
    budget = _TOTAL_LIMIT
    for root in roots:
        for name in INSTRUCTION_FILES:
            path = root / name
            try:
                real = path.resolve()
                if real in seen or not real.is_file():
                    continue
                size = real.stat().st_size
                with real.open("rb") as handle:
                    data = handle.read(min(_FILE_LIMIT, budget))
            except OSError:
                continue
            text = data.decode("utf-8", errors="ignore")  # a cut multi-byte tail is dropped
            if not text.strip():
                continue
            seen.add(real)
            loaded = len(data)
            budget -= loaded
            files.append(
                LoadedFile(path, size, loaded, text + (_TRUNCATED if loaded < size else ""))
            )
            if budget <= 0:
                return ProjectInstructions(tuple(files))
    return ProjectInstructions(tuple(files))


def system_prompt(
    base: str | None,
    append: str | None,
    cwd: Path,
    additional: tuple[Path, ...],
    instructions: ProjectInstructions,
) -> str:
    """The whole system prompt of a turn (see the module docstring for the order)."""
    parts = [base or "", append or ""]
    parts.append(f"The user's workspace is {cwd}; relative paths resolve against it.")
    if additional:
        listed = ", ".join(str(d) for d in additional)
        parts.append(f"The session also has these directories, usable with the tools: {listed}.")
    parts.append(_PLANS)
    parts.append(instructions.section())
    return "\n\n".join(p.strip() for p in parts if p.strip())
