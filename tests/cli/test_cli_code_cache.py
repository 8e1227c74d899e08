"""The cache of dataclasses' generated code (STARTUP-008): exactly what `@dataclass` builds.

The classes built through the cache, on a miss (compiled here) and on a hit (read back from
the file by another cache), have the very code objects `@dataclass` compiles itself, and
behave alike; a damaged, foreign or unwritable cache only costs the speed-up; and a real
agent's second start compiles none of its dataclasses' methods before its first chunk.
"""

from __future__ import annotations

import dataclasses
import json
import marshal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from subprocess_util import LineProcess, isolated_env

from acp_bridge.cli._code_cache import CodeCache, default_cache_path


def _shapes() -> list[type]:
    """Classes of every shape the package uses: frozen, slots, defaults, factories, keyword
    only, InitVar, ClassVar, __post_init__, order, unsafe_hash, no fields, inheritance."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Frozen:
        """A frozen record."""

        name: str
        size: int = 0
        tags: tuple[str, ...] = ()

    @dataclasses.dataclass(slots=True)
    class Mutable:
        items: list[int] = dataclasses.field(default_factory=list)
        note: str | None = dataclasses.field(default=None, repr=False, compare=False)

    @dataclasses.dataclass(frozen=True, kw_only=True, order=True)
    class Keyword:
        rank: int
        label: str = "x"

    @dataclasses.dataclass
    class Derived:
        seed: dataclasses.InitVar[int]
        limit: ClassVar[int] = 3
        value: int = 0

        def __post_init__(self, seed: int) -> None:
            self.value = seed * 2

    @dataclasses.dataclass(eq=True, unsafe_hash=True)
    class Hashed:
        key: str

    @dataclasses.dataclass(frozen=True)
    class Empty:
        pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class Child(Frozen):
        extra: bool = False

    return [Frozen, Mutable, Keyword, Derived, Hashed, Empty, Child]


METHODS = ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__", "__hash__", "__lt__")


def _codes(classes: list[type]) -> list[tuple[str, str, Any]]:
    found = []
    for cls in classes:
        for name in METHODS:
            method = cls.__dict__.get(name)
            code = getattr(method, "__code__", None)
            if code is not None:
                found.append((cls.__name__, name, code))
    return found


def _instances(classes: list[type]) -> list[object]:
    frozen, mutable, keyword, derived, hashed, empty, child = classes
    return [
        frozen("a", 2, ("t",)),
        mutable([1]),
        keyword(rank=1),
        derived(5),
        hashed("k"),
        empty(),
        child("c", extra=True),
    ]


def _behaviour(classes: list[type]) -> list[Any]:
    seen: list[Any] = []
    for a, b in zip(_instances(classes), _instances(classes), strict=True):
        seen.append((repr(a), a == b, hash(a) if a.__hash__ is not None else None))
    frozen = _instances(classes)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen.name = "b"  # type: ignore[attr-defined]
    seen.append(_instances(classes)[2] < classes[2](rank=2))
    seen.append([f.name for f in dataclasses.fields(classes[6])])
    return seen


@pytest.mark.requirement("STARTUP-008")
def test_classes_built_through_the_cache_have_dataclasses_own_code(tmp_path: Path) -> None:
    plain = _shapes()
    path = tmp_path / "cache.marshal"
    with CodeCache(path).installed() as first:
        compiled = _shapes()
    compiled_here = first.misses
    assert compiled_here > 0
    assert first.hits == 0
    first.save()
    with CodeCache(path).installed() as second:
        read_back = _shapes()
    assert (second.misses, second.hits) == (0, compiled_here)  # every one read back
    for built in (compiled, read_back):
        assert _codes(built) == _codes(plain)  # code objects compare by their contents
        assert _behaviour(built) == _behaviour(plain)
    assert "exec" not in vars(dataclasses)  # the block put dataclasses back as it was


@pytest.mark.requirement("STARTUP-008")
@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(b"not marshal data"),
        lambda path: path.write_bytes(marshal.dumps(("another format", b"x", {}))),
        lambda path: path.write_bytes(path.read_bytes()[:-40]),
        lambda path: path.write_bytes(
            marshal.dumps((b"acp-bridge dataclass code 1", b"\x00\x00\r\n", {"m": b"x"}))
        ),
    ],
)
def test_a_damaged_or_foreign_cache_is_ignored_and_rewritten(
    tmp_path: Path, damage: Callable[[Path], object]
) -> None:
    path = tmp_path / "cache.marshal"
    with CodeCache(path).installed() as cache:
        _shapes()
    cache.save()
    damage(path)
    with CodeCache(path).installed() as again:
        rebuilt = _shapes()
    assert _codes(rebuilt) == _codes(_shapes())
    again.save()
    with CodeCache(path).installed() as third:
        _shapes()
    assert third.misses == 0  # the rewritten file is whole again


@pytest.mark.requirement("STARTUP-008")
def test_a_cache_that_cannot_be_written_only_costs_the_speed_up(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("in the way of the cache folder")
    cache = CodeCache(blocked / "acp-bridge" / "cache.marshal")
    with cache.installed():
        built = _shapes()
    cache.save()  # no error: nothing written
    assert not (blocked / "acp-bridge").exists()
    assert _codes(built) == _codes(_shapes())


@pytest.mark.requirement("STARTUP-008")
def test_the_cache_lives_under_the_xdg_cache_folder(tmp_path: Path) -> None:
    path = default_cache_path({"XDG_CACHE_HOME": str(tmp_path)})
    assert path.parent == tmp_path / "acp-bridge"
    assert path.name.startswith("dataclass-code-")
    assert path.suffix == ".marshal"


# Inside a real `python -m acp_bridge`: how many generated methods the installed cache
# compiled (misses) and took from the file (hits) when the first chunk was written.
_PROBE = """
import dataclasses, json, os, sys
seen = {}
real_write = os.write

def write(fd, data):
    if "chunk" not in seen and b"agent_message_chunk" in bytes(data):
        cache = vars(dataclasses)["exec"].__self__
        seen["chunk"] = (cache.misses, cache.hits)
    return real_write(fd, data)

os.write = write
import atexit
atexit.register(lambda: open(sys.argv[1], "w").write(json.dumps(seen)))
from acp_bridge.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _first_chunk_counts(tmp_path: Path, home: Path, run: int) -> tuple[int, int]:
    out = tmp_path / f"counts-{run}.json"
    argv = [sys.executable, "-c", _PROBE, str(out), "--state-dir", str(tmp_path / "state")]
    with LineProcess(argv, env=isolated_env(home), wait=120) as agent:
        agent.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        )
        new = {"cwd": str(tmp_path), "mcpServers": []}
        agent.send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new})
        session_id = None
        while session_id is None:
            message = agent.read_message()
            if message.get("id") == 2:
                session_id = message["result"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        agent.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
        while agent.read_message().get("id") != 3:
            pass
        agent.close_stdin()
        agent.read_to_eof()
        assert agent.process.wait(timeout=60) == 0, agent.stderr_text()
    misses, hits = json.loads(out.read_text())["chunk"]
    return misses, hits


@pytest.mark.requirement("STARTUP-008")
def test_a_second_start_compiles_no_dataclass_method_before_its_first_chunk(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    misses, hits = _first_chunk_counts(tmp_path, home, 1)
    assert misses > hits  # a first start compiles them (saved once the agent is loaded)
    assert default_cache_path(isolated_env(home)).is_file()
    misses, hits = _first_chunk_counts(tmp_path, home, 2)
    assert misses == 0
    assert hits > 300  # every dataclass loaded by the first chunk
