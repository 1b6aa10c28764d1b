"""Benchmark: the incremental check against a full check, on one demo tree, in one run.

    python benchmarks/check_cache.py [--tasks 10000] [--tree DIR] [--jobs N]

Makes (or reuses) a demo tree of ``--tasks`` tasks, waits until its files are
older than the cache's racy window, then times ``okstra check TREE --format json``
as fresh processes (interpreter start included), in this order:

1. **full**: ``--no-cache``, every task checked;
2. **first**: with an empty cache folder (every task checked, the cache written);
3. **second**: the same store unchanged (every task reused);
4. **one edit**: one task's file edited before each run (that task checked, the others reused);
5. **full after the edit**: ``--no-cache`` again, to compare the reports.

Each figure is the best of ``--repeat`` runs (one more for the fast ones).

It prints the times and the ratios (second / first, one edit / full) and checks
that each cached report is byte-for-byte the uncached report of the same store.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--tree", type=Path, default=None, help="reuse this demo project (made when missing)")
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (default: all cores)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure, the best kept (default: 2)")
    args = parser.parse_args()

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
        home = tree / ".okstra-home"
        cache_dir = scratch / "cache"
        env = {**os.environ, "OKSTRA_HOME": str(home)}
        base = [sys.executable, "-m", "okstra_core.cli", "check", str(tree), "--format", "json", "--quiet"]
        base += ["--jobs", str(args.jobs)]
        cached = [*base, "--cache-dir", str(cache_dir)]

        # Each figure is the best of --repeat runs (the machine is shared); a first check starts from an empty cache.
        full, full_out = min(_timed([*base, "--no-cache"], env) for _ in range(args.repeat))
        firsts = []
        for _ in range(args.repeat):
            shutil.rmtree(cache_dir, ignore_errors=True)
            firsts.append(_timed(cached, env))
        first = min(t for t, _ in firsts)
        second, second_out = min(_timed(cached, env) for _ in range(args.repeat + 1))
        tasks = sorted((tree / ".okstra" / "tasks").glob("*/*"))
        target = tasks[len(tasks) // 2]
        timeline = target / "history" / "timeline.json"
        edits = []
        for _ in range(args.repeat + 1):  # a new edit of the same task before each run
            timeline.write_text(timeline.read_text(encoding="utf-8").rstrip("\n") + " \n", encoding="utf-8")
            edits.append(_timed(cached, env))
        edited = min(t for t, _ in edits)
        full_after, full_after_out = _timed([*base, "--no-cache"], env)

        same = (
            all(out == full_out for _, out in firsts)
            and second_out == full_out
            and edits[-1][1] == full_after_out  # the same store as the last edited run
        )
        rows = [
            ("full check (`--no-cache`)", full, full / full),
            ("first check, empty cache", first, first / full),
            ("second check, store unchanged", second, second / full),
            (f"after editing one task ({target.relative_to(tree).as_posix()})", edited, edited / full),
            ("full check after the edit (`--no-cache`)", full_after, full_after / full),
        ]
        machine = f"{os.cpu_count()} cores, Python {platform.python_version()}"
        print(f"Machine: {machine}, {len(tasks)} tasks, --jobs {args.jobs}")
        print()
        print("| run | wall time | / full check |")
        print("|---|---:|---:|")
        for label, seconds, ratio in rows:
            print(f"| {label} | {seconds:.2f} s | {ratio:.3f}x |")
        print()
        print(f"second / first: **{second / first:.3f}x** (target at most 0.1x)")
        print(f"one edit / full: **{edited / full:.3f}x** (target at most 0.15x)")
        print(f"cached reports byte-identical to uncached ones: {'yes' if same else 'NO'}")
        return 0 if same else 1
    finally:
        if args.tree is None:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            shutil.rmtree(scratch / "cache", ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
