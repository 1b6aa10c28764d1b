"""Benchmark: the incremental check against a full check, on one demo tree, in one run.

    python benchmarks/check_cache.py [--tasks 10000] [--tree DIR] [--jobs N]

Makes (or reuses) a demo tree of ``--tasks`` tasks, waits until its files are
older than the cache's racy window, then times ``okstra check TREE --format json``
as fresh processes (interpreter start included), in rounds of:

1. **full**: ``--no-cache``, every task checked;
2. **first**: with an empty cache folder (every task checked, the cache written);
3. **second**: the same store unchanged (every task reused);
4. **one edit**: one task's file edited (that task checked, the others reused);
5. **full after the edit**: ``--no-cache`` again, to compare the reports.

Each ratio is taken within a round, and the median over ``--repeat`` rounds is
reported, for wall time and for CPU time (user + system of the check and its
worker processes, which a shared machine's load disturbs much less).

It prints the times and the ratios (second / first, one edit / full) and checks
that each cached report is byte-for-byte the uncached report of the same store.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall time, CPU time (user + system, the check's worker processes included) and stdout of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--tree", type=Path, default=None, help="reuse this demo project (made when missing)")
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (default: all cores)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default: 3)")
    args = parser.parse_args()

    from okstra_core import layout
    from okstra_core.check import cache
    from okstra_core.demo import generate

    scratch = Path(tempfile.mkdtemp(prefix="okstra-cache-bench-"))
    try:
        tree = args.tree or scratch / "project"
        if not (tree / ".okstra").is_dir():
            started = time.perf_counter()
            generate(tree, tasks=args.tasks)
            print(f"demo of {args.tasks} tasks written in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        time.sleep(cache.RACY_SECONDS + 0.5)  # the newest files must be older than the racy window
        home = layout.demo_home(tree)
        cache_dir = scratch / "cache"
        env = {**os.environ, "OKSTRA_HOME": str(home)}
        base = [sys.executable, "-m", "okstra_core.cli", "check", str(tree), "--format", "json", "--quiet"]
        base += ["--jobs", str(args.jobs)]
        cached = [*base, "--cache-dir", str(cache_dir)]

        tasks = sorted((tree / ".okstra" / "tasks").glob("*/*"))
        target = tasks[len(tasks) // 2]
        timeline = target / "history" / "timeline.json"
        # Rounds of (full, first, second, one edit), each ratio taken within its round: the machine is shared,
        # and its load drifts between rounds far more than within one.
        rounds: list[dict[str, tuple[float, float, str]]] = []
        for _ in range(args.repeat):
            shutil.rmtree(cache_dir, ignore_errors=True)
            run: dict[str, tuple[float, float, str]] = {}
            run["full"] = _timed([*base, "--no-cache"], env)
            run["first"] = _timed(cached, env)
            run["second"] = _timed(cached, env)
            timeline.write_text(timeline.read_text(encoding="utf-8").rstrip("\n") + " \n", encoding="utf-8")
            run["edit"] = _timed(cached, env)
            run["edit-fresh"] = _timed([*base, "--no-cache"], env)
            rounds.append(run)
        same = all(
            r["first"][2] == r["full"][2] and r["second"][2] == r["full"][2] and r["edit"][2] == r["edit-fresh"][2]
            for r in rounds
        )
        machine = f"{os.cpu_count()} cores, Python {platform.python_version()}"
        print(f"Machine: {machine}, {len(tasks)} tasks, --jobs {args.jobs}, {args.repeat} rounds")
        print()
        print(
            "| round | full | first (empty cache) | second (unchanged) | one task edited | second/first | edit/full |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for i, r in enumerate(rounds, 1):
            cells = [f"{r[k][0]:.2f} s ({r[k][1]:.2f} s CPU)" for k in ("full", "first", "second", "edit")]
            wall = f"{r['second'][0] / r['first'][0]:.3f}x | {r['edit'][0] / r['full'][0]:.3f}x"
            print(f"| {i} | {' | '.join(cells)} | {wall} |")
        print()
        for label, (num, den), target in (
            ("second / first", ("second", "first"), 0.1),
            ("one edit / full", ("edit", "full"), 0.15),
        ):
            wall = statistics.median(r[num][0] / r[den][0] for r in rounds)
            cpu = statistics.median(r[num][1] / r[den][1] for r in rounds)
            print(f"{label}: median **{wall:.3f}x** wall, {cpu:.3f}x CPU (target at most {target}x)")
        print(f"cached reports byte-identical to uncached ones: {'yes' if same else 'NO'}")
        return 0 if same else 1
    finally:
        if args.tree is None:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            shutil.rmtree(scratch / "cache", ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
