"""Benchmark: ``okstra check`` after one edited task against a full check, with watchman, this checkout against
another revision, in the same rounds.

    python benchmarks/check_watchman_ab.py [--tasks 2000] [--tree DIR] [--against main] [--repeat 5]

Makes (or reuses, ``--tree``) a demo tree of ``--tasks`` tasks, starts a watchman daemon of its own (as
``benchmarks/index_watchman.py`` does; stopped at the end), checks it a few times through each side's cache (each
side a cache folder of its own) until watchman vouches for a clock, then times as fresh processes, in rounds:

1. one task's file is edited;
2. **one edit**: ``okstra check TREE --format json`` through each side's cache, asking watchman
   (``OKSTRA_WATCHMAN=on``): the edited task is checked, the others reused;
3. **unchanged**: the same again, nothing edited since;
4. **full**: ``--no-cache`` on each side, every task checked.

The sides run in alternating order from round to round. Each ratio is taken within a round (the machine is
shared, and its load drifts between rounds far more than within one); the median over the rounds is reported.
Every report of a round must be the same bytes. Prints Markdown for ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _checkout import CHECKOUT, other_revision
from index_watchman import _private_daemon

from okstra_core import layout

STEPS = ("edit", "unchanged", "full")


def _timed(cmd: list[str], cwd: Path, env: dict[str, str], warming: bool = False) -> tuple[float, str]:
    """Wall time and stdout of one run of *cmd* in *cwd* (whose ``okstra_core`` is the one run); a word on stderr
    (watchman not used, a cache problem) stops the benchmark, except while *warming*."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1) or (proc.stderr and not warming):
        raise SystemExit(f"check failed in {cwd} ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def measure(tree: Path, against: str, repeat: int, work: Path) -> dict[str, dict[str, list[float]]]:
    """Per side, per step, the seconds of each round."""
    bin_dir = _private_daemon(work / "watchman")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "OKSTRA_WATCHMAN": "on"}
    env.pop("WATCHMAN_SOCK", None)
    env["OKSTRA_HOME"] = str(layout.demo_home(tree))
    check = [sys.executable, "-m", "okstra_core.cli", "check", str(tree), "--format", "json", "--quiet"]
    tasks = sorted((tree / ".okstra" / "tasks").glob("*/*"))
    timeline = tasks[len(tasks) // 2] / "history" / "timeline.json"
    try:
        with other_revision(against, "check_watchman_ab") as other:
            sides = {"this": CHECKOUT, against: other}
            cached = {name: [*check, "--cache-dir", str(work / f"cache-{i}")] for i, name in enumerate(sides)}
            for _ in range(3):  # the cache filled, and a clock watchman vouches for (its first crawl may be slow)
                for name, cwd in sides.items():
                    _timed(cached[name], cwd, env, warming=True)
            times: dict[str, dict[str, list[float]]] = {name: {step: [] for step in STEPS} for name in sides}
            for n in range(repeat):
                order = list(sides) if n % 2 == 0 else list(reversed(list(sides)))
                timeline.write_text(timeline.read_text(encoding="utf-8").rstrip("\n") + " \n", encoding="utf-8")
                reports = set()
                for step, cmd_of in (
                    ("edit", cached.__getitem__),
                    ("unchanged", cached.__getitem__),
                    ("full", lambda _name: [*check, "--no-cache"]),
                ):
                    for name in order:
                        elapsed, out = _timed(cmd_of(name), sides[name], env)
                        times[name][step].append(elapsed)
                        reports.add(out)
                if len(reports) != 1:
                    raise SystemExit(f"round {n + 1}: the reports differ")
    finally:
        subprocess.run([str(bin_dir / "watchman"), "--no-spawn", "shutdown-server"], capture_output=True, check=False)
    return times


def report(tree: Path, tasks: int, times: dict[str, dict[str, list[float]]]) -> str:
    rounds = range(len(times["this"]["full"]))

    def ratio(side: str, a: str, b: str) -> float:
        return statistics.median(times[side][a][i] / times[side][b][i] for i in rounds)

    lines = [
        f"{tasks:,} tasks ({tree}); {len(rounds)} rounds, load average {os.getloadavg()[0]:.1f} at the end; "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}.",
        "",
        "| side | one edit | unchanged | full (`--no-cache`) | one edit / full | unchanged / full |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for side, steps in times.items():
        med = {step: statistics.median(values) for step, values in steps.items()}
        lines.append(
            f"| {side} | {med['edit']:.2f} s | {med['unchanged']:.2f} s | {med['full']:.2f} s | "
            f"{ratio(side, 'edit', 'full'):.3f} | {ratio(side, 'unchanged', 'full'):.3f} |"
        )
    sides = list(times)
    this_over = statistics.median(times[sides[0]]["edit"][i] / times[sides[1]]["edit"][i] for i in rounds)
    lines += ["", f"one edit, {sides[0]} / {sides[1]}: median per-round ratio {this_over:.3f}", ""]
    for side, steps in times.items():
        for step, values in steps.items():
            lines.append(f"{side}, {step}: " + ", ".join(f"{v:.2f}" for v in values) + " s")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--tree", type=Path, default=None, help="reuse this demo tree (made when missing)")
    parser.add_argument("--against", default="main", help="the revision to compare with (default: main)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="okstra-check-watchman-") as tmp:
        work = Path(tmp)
        tree = args.tree or work / "tree"
        if not (tree / ".okstra").exists():
            okstra = [sys.executable, "-m", "okstra_core.cli"]
            subprocess.run(
                [*okstra, "demo", str(tree), "--tasks", str(args.tasks), "--quiet"], check=True, cwd=CHECKOUT
            )
        tasks = len(list((tree / ".okstra" / "tasks").glob("*/*")))
        print(report(tree, tasks, measure(tree, args.against, args.repeat, work)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
