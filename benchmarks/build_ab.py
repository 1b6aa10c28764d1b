"""Benchmark: the first search index build against a full check, this checkout against another revision, in rounds.

    python benchmarks/build_ab.py --tree DIR [--against REV] [--repeat 3]

On a demo tree (``okstra demo --tasks N``), each round times as fresh processes, without watchman, in turn:

1. **check**: ``okstra check TREE --no-cache`` of this checkout (every rule, every core);
2. **build**: ``okstra search TREE --reindex`` of this checkout, into a cache folder emptied first;
3. **build, REV**: the same with the revision ``--against`` (checked out into a temporary worktree).

The order of the three turns from round to round; a first round that is not counted warms the page cache. The
target (``docs/performance.md``) is the build at most 1.0x the check; each ratio is taken within a round (the
machine is shared and its load drifts between rounds far more than within one), and the median over the rounds
is reported. Prints Markdown for ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _checkout import CHECKOUT, other_revision

STEPS = ("check", "build", "build, other")


def _timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[2:5])} failed in {cwd} ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed


def _compiled(checkout: Path) -> None:
    """Byte-compile *checkout*'s product, as installing it does (each start would otherwise compile it)."""
    import compileall

    compileall.compile_dir(checkout / "okstra_core", quiet=1)


def measure(tree: Path, against: str, repeat: int, work: Path) -> dict[str, list[float]]:
    """Seconds of each step in each counted round."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["OKSTRA_WATCHMAN"] = "off"
    cli = [sys.executable, "-m", "okstra_core.cli"]
    check = [*cli, "check", str(tree), "--no-cache", "--quiet", "--format", "json"]
    cache = work / "cache"
    times: dict[str, list[float]] = {step: [] for step in STEPS}
    with other_revision(against, "build_ab") as other:
        _compiled(CHECKOUT)
        _compiled(other)
        sides = {"check": (check, CHECKOUT), "build": (None, CHECKOUT), "build, other": (None, other)}
        for n in range(repeat + 1):
            order = STEPS[n % 3 :] + STEPS[: n % 3]
            for step in order:
                cmd, cwd = sides[step]
                if cmd is None:
                    shutil.rmtree(cache, ignore_errors=True)
                    cmd = [*cli, "search", str(tree), "--reindex", "--cache-dir", str(cache), "-q"]
                took = _timed(cmd, cwd, {**env, "PYTHONPATH": str(cwd)})
                if n:
                    times[step].append(took)
                print(f"round {n} {step}: {took:.2f} s", file=sys.stderr)
    return times


def _ratios(times: dict[str, list[float]], top: str, bottom: str) -> list[float]:
    return [a / b for a, b in zip(times[top], times[bottom], strict=True)]


def report(times: dict[str, list[float]], tree: Path, against: str, head: str, load: tuple[float, float]) -> str:
    median = statistics.median
    rows = [
        f"`python benchmarks/build_ab.py --tree DEMO --against {against} --repeat {len(times['check'])}`, on "
        f"{tree.name} (this checkout at {head}; machine: {platform.machine()}, {os.cpu_count()} cores, shared; "
        f"load average {load[0]:.1f} at the start, {load[1]:.1f} at the end).",
        "",
        "| step | median | rounds |",
        "|---|---:|---|",
    ]
    labels = {
        "check": "`okstra check --no-cache`",
        "build": "`okstra search --reindex`",
        "build, other": f"`okstra search --reindex` at {against}",
    }
    for step in STEPS:
        label = labels[step]
        rows.append(f"| {label} | {median(times[step]):.2f} s | {', '.join(f'{t:.2f}' for t in times[step])} |")
    rows += [
        "",
        "| ratio, within each round | median | rounds |",
        "|---|---:|---|",
    ]
    for label, top, bottom in (
        ("build / check (target 1.0)", "build", "check"),
        (f"build at {against} / check", "build, other", "check"),
        (f"build / build at {against}", "build", "build, other"),
    ):
        each = _ratios(times, top, bottom)
        rows.append(f"| {label} | {median(each):.3f} | {', '.join(f'{r:.3f}' for r in each)} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="a demo tree (okstra demo --tasks N)")
    parser.add_argument("--against", default="main", help="the revision whose build is timed beside (main)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds counted (3)")
    args = parser.parse_args()
    head = subprocess.run(
        ["git", "-C", str(CHECKOUT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    start_load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="okstra-build-ab-") as work:
        times = measure(args.tree.resolve(), args.against, args.repeat, Path(work))
    print(report(times, args.tree.resolve(), args.against, head or "?", (start_load, os.getloadavg()[0])))


if __name__ == "__main__":
    main()
