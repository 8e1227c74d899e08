"""The compiled code of `dataclasses`' generated methods, kept across starts (STARTUP-008).

`@dataclass` writes each class's methods (`__init__`, `__repr__`, `__eq__`; for a frozen class
also `__setattr__`, `__delattr__` and `__hash__`) as Python source and `exec`s it. Parsing and
compiling those small functions, about 850 of them before the first chunk of a first prompt,
is some 40% of the agent's start on CPython 3.11 (callgrind: 455M of 1,025M instructions; see
benchmarks/README.md). The source of a method depends only on the shape of its class, so its
code is cached like byte code in `__pycache__`: the first start compiles and saves it, later
starts load it and `exec` the code instead of the text.

The one hook is the name `exec` in the `dataclasses` module's namespace, which its code looks
up before the builtin. `CodeCache.exec` runs exactly what the builtin would run:
`compile(source, "<string>", "exec", dont_inherit=True)` is what `exec(source)` compiles when
the caller (`dataclasses`) has no `from __future__` flags, and a missing `globals` is the
`dataclasses` module's own, as for the builtin called there. Anything else (code objects, a
`closure`, another caller's use) goes to the builtin untouched.

The file is `$XDG_CACHE_HOME/acp-bridge/dataclass-code-<magic>.marshal` (default `~/.cache`),
one per byte-code format (`importlib.util.MAGIC_NUMBER`). It is only a cache: never synced,
replaced atomically, and ignored (then rewritten) when it is missing, unreadable, damaged or
of another format; a folder that cannot be written only costs the speed-up.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import marshal
import os
from collections.abc import Iterator, Mapping
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["CodeCache", "default_cache_path", "install", "save_installed"]

_FORMAT = b"acp-bridge dataclass code 1"
_MAX_SOURCE = 64 * 1024  # a generated method is a few hundred bytes
_MAX_ENTRIES = 20_000  # far above what the package's classes generate
_MAX_FILE = 32 * 1024 * 1024


def default_cache_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the cache lives: `$XDG_CACHE_HOME/acp-bridge/` (default `~/.cache`)."""
    env = os.environ if environ is None else environ
    root = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "acp-bridge" / f"dataclass-code-{MAGIC_NUMBER.hex()}.marshal"


class CodeCache:
    """Source text of a generated method -> its compiled code, loaded from and saved to `path`.

    The file holds one marshalled table per module whose classes generated the code; a table
    is decoded when that module first builds a class, so `initialize` decodes only the few
    modules loaded before it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.hits = 0
        self.misses = 0  # compiled here: saved by the next `save()`
        self._tables: dict[str, bytes] = {}  # module -> marshalled {source: code}
        self._code: dict[str, dict[str, CodeType]] = {}  # the tables decoded so far
        self._grown: set[str] = set()
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as file:
                data = file.read(_MAX_FILE + 1)
            if len(data) > _MAX_FILE:
                return
            loaded = marshal.loads(data)
        except (OSError, ValueError, EOFError, TypeError):
            return  # no cache yet, or not one this interpreter can read: start afresh
        if (
            isinstance(loaded, tuple)
            and len(loaded) == 3
            and loaded[0] == _FORMAT
            and loaded[1] == MAGIC_NUMBER
            and isinstance(loaded[2], dict)
        ):
            self._tables = {
                module: table
                for module, table in loaded[2].items()
                if isinstance(module, str) and isinstance(table, bytes)
            }

    def _table(self, module: str) -> dict[str, CodeType]:
        table = self._code.get(module)
        if table is None:
            table = {}
            with contextlib.suppress(KeyError, ValueError, EOFError, TypeError):
                decoded = marshal.loads(self._tables[module])
                if isinstance(decoded, dict):
                    table = {
                        source: code
                        for source, code in decoded.items()
                        if isinstance(source, str) and isinstance(code, CodeType)
                    }
            self._code[module] = table
        return table

    def code(self, source: str, module: str = "") -> CodeType:
        """The code `exec(source)` would compile in `dataclasses`, from the cache if there;
        `module` is the one whose class it is for (its table in the file)."""
        table = self._table(module)
        found = table.get(source)
        if found is not None:
            self.hits += 1
            return found
        compiled = compile(source, "<string>", "exec", dont_inherit=True)
        if len(table) < _MAX_ENTRIES:
            table[source] = compiled
            self._grown.add(module)
            self.misses += 1
        return compiled

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /, **kw: Any) -> None:
        """`exec` as `dataclasses` calls it, with the source's code taken from the cache."""
        if not isinstance(source, str) or kw or len(source) > _MAX_SOURCE:
            builtins.exec(source, globals, locals, **kw)
            return
        if globals is None:  # the builtin would take its caller's, dataclasses' own
            globals = vars(dataclasses)
        module = globals.get("__name__") if isinstance(globals, dict) else None
        builtins.exec(self.code(source, module if isinstance(module, str) else ""), globals, locals)

    def save(self) -> None:
        """Writes the cache when this process compiled anything new (atomically, no sync)."""
        if not self.misses:
            return
        for module in self._grown:
            self._tables[module] = marshal.dumps(self._code[module])
        data = marshal.dumps((_FORMAT, MAGIC_NUMBER, self._tables))
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with open(partial, "wb") as file:
                file.write(data)
            os.replace(partial, self.path)  # readers see the old file or the new one
        except OSError:
            with contextlib.suppress(OSError):
                partial.unlink()
            return  # a cache that cannot be written only costs the next start its speed-up
        self.misses = 0
        self._grown.clear()

    @contextlib.contextmanager
    def installed(self) -> Iterator[CodeCache]:
        """Within the block, the classes `@dataclass` builds take their code from this cache."""
        namespace = vars(dataclasses)
        before = namespace.get("exec")
        namespace["exec"] = self.exec
        try:
            yield self
        finally:
            if before is None:
                namespace.pop("exec", None)
            else:
                namespace["exec"] = before


_installed: list[CodeCache] = []


def install(path: Path | None = None) -> CodeCache | None:
    """For the rest of this process, `@dataclass` takes its generated code from the cache at
    `path` (default `default_cache_path()`), saved again at exit when it grew. None when a
    cache (this one or another hook) is installed already."""
    namespace = vars(dataclasses)
    if "exec" in namespace:
        return None
    cache = CodeCache(path or default_cache_path())
    namespace["exec"] = cache.exec
    _installed.append(cache)
    atexit.register(cache.save)
    return cache


def save_installed() -> None:
    """Saves the installed cache now if it grew (once the agent is loaded: an editor may end
    the process without letting it exit normally)."""
    for cache in _installed:
        cache.save()
