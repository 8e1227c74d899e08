"""Which files a search skips, decided as ripgrep decides it (for the walk without ripgrep).

Sources, highest precedence first, as ripgrep applies them (with ``--no-require-git``):

1. the `glob` argument, an override: a file it matches is searched even if ignored, a file
   it does not match is skipped (a negated glob the other way round);
2. ``.rgignore``, then ``.ignore``, then ``.gitignore``, then ``.git/info/exclude``: for
   each kind the deepest directory with a matching rule decides, and a kind decides before
   the next one; ``.gitignore`` and ``exclude`` files above the nearest enclosing git
   repository do not apply; ignore files in the searched directory's parents apply too;
3. git's global excludes file (``core.excludesFile``, else ``$XDG_CONFIG_HOME/git/ignore``),
   relative to the searched directory;
4. hidden entries (a name starting with ``.``) are skipped unless a rule whitelists them.

Inside one file the last matching rule wins, ``!`` whitelists, and a rule matches an entry
itself, not what lies below it (the walk never enters an ignored directory). Patterns are
gitignore patterns compiled by `pathspec`.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["IgnoreFile", "IgnoreLevel", "IgnoreRules", "global_excludes", "level_for"]

_EXCLUDES_FILE = re.compile(r'(?im)^\s*excludesfile\s*=\s*"?\s*(\S+?)\s*"?\s*$')


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[str]
    ignore: bool
    # pathspec marks where a pattern matched a directory with the group `ps_d`; a match
    # that ends there before the path does matched a parent, not the entry itself.
    by_directory: bool
    contents_only: bool  # "dir/**" matches what is inside dir, not dir itself


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The rules of one ignore file; paths are matched relative to `base` (absolute)."""

    base: str
    rules: tuple[_Rule, ...]

    @classmethod
    def parse(cls, base: str, text: str) -> IgnoreFile | None:
        # Imported here: only the Python engine needs it, and never before a search (cold start).
        from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

        rules: list[_Rule] = []
        for line in text.splitlines():
            pattern = GitIgnoreSpecPattern(line)
            if pattern.include is None or pattern.regex is None:
                continue
            regex = pattern.regex
            rules.append(
                _Rule(
                    regex=regex,
                    ignore=pattern.include,
                    by_directory="ps_d" in regex.groupindex,
                    contents_only=line.rstrip().endswith("/**"),
                )
            )
        return cls(base.rstrip("/") or "/", tuple(rules)) if rules else None

    def match(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: whitelisted; None: no rule speaks of `path` (absolute)."""
        prefix = self.base if self.base == "/" else self.base + "/"
        if not path.startswith(prefix):
            return None
        test = path[len(prefix) :] + ("/" if is_dir else "")
        for rule in reversed(self.rules):
            found = rule.regex.match(test)
            if found is None:
                continue
            if rule.by_directory and -1 < found.end("ps_d") < len(test):
                continue
            if rule.contents_only and is_dir and found.end() == len(test):
                continue
            return rule.ignore
        return None


@dataclass(frozen=True, slots=True)
class IgnoreLevel:
    """The ignore files of one directory."""

    rgignore: IgnoreFile | None
    ignore: IgnoreFile | None
    gitignore: IgnoreFile | None
    exclude: IgnoreFile | None
    has_git: bool


def _read(path: str, dir_fd: int | None = None) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as file:
            return file.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def level_for(directory: str, dir_fd: int | None = None) -> IgnoreLevel:
    """The ignore files of `directory` (absolute), read through `dir_fd` when given."""

    def load(name: str) -> IgnoreFile | None:
        text = _read(name if dir_fd is not None else f"{directory}/{name}", dir_fd)
        return IgnoreFile.parse(directory, text) if text else None

    try:
        git = os.stat(".git" if dir_fd is not None else f"{directory}/.git", dir_fd=dir_fd)
        has_git = stat.S_ISDIR(git.st_mode)
    except OSError:
        has_git = False
    return IgnoreLevel(
        rgignore=load(".rgignore"),
        ignore=load(".ignore"),
        gitignore=load(".gitignore"),
        exclude=load(".git/info/exclude") if has_git else None,
        has_git=has_git,
    )


def global_excludes(root: str) -> IgnoreFile | None:
    """Git's global excludes file, its rules relative to the searched directory `root`."""
    home = os.environ.get("HOME", "")
    config_home = os.environ.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else "")
    path = ""
    for config in (f"{home}/.gitconfig", f"{config_home}/git/config"):
        text = _read(config) if home or config_home else None
        found = _EXCLUDES_FILE.findall(text or "")
        if found:
            path = found[-1]
    if path.startswith("~/") and home:
        path = home + path[1:]
    if not path and config_home:
        path = f"{config_home}/git/ignore"
    text = _read(path) if path else None
    return IgnoreFile.parse(root, text) if text else None


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The ignore decision for the entries of the directory of `levels[-1]`."""

    levels: tuple[IgnoreLevel, ...]
    global_file: IgnoreFile | None
    override: IgnoreFile | None
    whitelists: bool

    def searched(self, path: str, name: str, is_dir: bool) -> bool:
        """Whether the walk enters (a directory) or searches (a file) `path` (absolute)."""
        if self.override is not None:
            # A glob is a whitelist: matched means searched, unmatched files are skipped
            # (directories are still entered); "!glob" skips what it matches.
            matched = self.override.match(path, is_dir)
            if matched is not None:
                return matched
            if self.whitelists and not is_dir:
                return False
        decided = self._ignored(path, is_dir)
        if decided is not None:
            return not decided
        return not name.startswith(".")

    def _ignored(self, path: str, is_dir: bool) -> bool | None:
        found: list[bool | None] = [None, None, None, None]
        saw_git = False
        for level in reversed(self.levels):
            files = (level.rgignore, level.ignore) + (
                (level.gitignore, level.exclude) if not saw_git else (None, None)
            )
            for index, file in enumerate(files):
                if found[index] is None and file is not None:
                    found[index] = file.match(path, is_dir)
            saw_git = saw_git or level.has_git
        for decision in found:
            if decision is not None:
                return decision
        return None if self.global_file is None else self.global_file.match(path, is_dir)

    def below(self, level: IgnoreLevel) -> IgnoreRules:
        """The rules inside a directory whose own ignore files are `level`."""
        return IgnoreRules((*self.levels, level), self.global_file, self.override, self.whitelists)

    @classmethod
    def for_root(cls, root: Path, glob: str | None) -> IgnoreRules:
        """The rules for a walk of `root` from its parents' ignore files (add `below` it)."""
        levels = tuple(level_for(str(parent)) for parent in reversed(root.parents))
        # The glob parses as one gitignore rule: "matched" (True) means searched here.
        override = IgnoreFile.parse(str(root), glob) if glob else None
        whitelists = override is not None and any(rule.ignore for rule in override.rules)
        return cls(levels, global_excludes(str(root)), override, whitelists)
