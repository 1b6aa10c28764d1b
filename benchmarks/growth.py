"""How the costs grow with the store: the same measures on demo trees of different sizes, in one run.

    python benchmarks/growth.py --tree 10000=/path/d10000/project --tree 40000=/path/d40000/project \
        [--rounds 3] [--workbench-only 100000]

Each round measures every tree once, the trees alternating, so that a slow
moment of the machine hits them alike; a figure is the median of the rounds.
Per tree: the one-process read floor (read every file, JSON-parse every
.json/.jsonl; ``benchmarks/check.py``), ``okstra check --no-cache`` in one
process and on all cores, a cached re-check of the unchanged store and one
after one task's file was rewritten (a separate cache folder per tree),
``okstra inbox --json`` (each also in user CPU, which does not count waiting for
the disk), and the workbench (``benchmarks/tui.py``): start to
the painted catalog and to its phase columns, a catalog cursor step, opening
a task, and peak memory, beside a minimal Textual app's start. Trees named in
``--workbench-only`` get the workbench measures and the cached check only.
The growth of each measure is its ratio between the largest and the smallest
tree. With ``--inbox-only``, each round measures ``okstra inbox --json`` alone
(wall time and user CPU), and the growth of each round is printed too. Each
round's figures are written to standard error as one JSON line as
soon as they are measured. This is a measurement, not a test: nothing here
asserts.

The store measures time the code only while the trees stay in memory between
passes. A kernel that pages out idle page cache (a DAMON ``pageout`` scheme,
for one) turns them into disk measures: generate the trees into a tmpfs
(``okstra demo /dev/shm/d10000 --tasks 10000``) on a machine without swap.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import timed_run
from check import FLOOR
from tui import CACHE_LISTING, MINIMAL, WORKBENCH, WORKBENCH_START, byte_compile, run_child

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _okstra(*args: str) -> list[str]:
    return [sys.executable, "-m", "okstra_core.cli", *args]


def _touch_one_task(root: Path) -> None:
    """Rewrite one task's timeline with its own bytes: new metadata, same content, so that task is re-checked."""
    timeline = next((root / ".okstra" / "tasks").glob("*/*/history/timeline.json"))
    timeline.write_bytes(timeline.read_bytes())


def _with_cpu(out: dict[str, float], name: str, cmd: list[str]) -> None:
    """Time *cmd* as ``name (s)``, and its user CPU (its own and its children's) as ``name, user CPU (s)``.

    The user CPU does not count the time spent waiting for a disk: on a machine whose page cache does not keep
    a tree between two passes, it is the figure whose growth says whether the work grows linearly.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    out[f"{name} (s)"] = timed_run(cmd)[0]
    out[f"{name}, user CPU (s)"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def _store_measures(root: Path, cache_dir: Path, home: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    check = _okstra("check", str(root), "--home", str(home), "--format", "json")
    env_cache = ["--cache-dir", str(cache_dir)]
    _with_cpu(out, "read floor, 1 process", [sys.executable, "-c", FLOOR, str(root / ".okstra"), str(home)])
    _with_cpu(out, "check --no-cache --jobs 1", [*check, "--no-cache", "--jobs", "1"])
    _with_cpu(out, "check --no-cache, all cores", [*check, "--no-cache"])
    timed_run([*check, *env_cache])  # the cache as the previous run left it
    out["cached re-check, unchanged (s)"] = timed_run([*check, *env_cache])[0]
    _touch_one_task(root)
    out["cached re-check, one task edited (s)"] = timed_run([*check, *env_cache])[0]
    _with_cpu(out, "okstra inbox --json", _okstra("inbox", str(root), "--json"))
    return out


def _cached_only(root: Path, cache_dir: Path, home: Path) -> dict[str, float]:
    check = _okstra("check", str(root), "--home", str(home), "--format", "json", "--cache-dir", str(cache_dir))
    timed_run(check)
    return {"cached re-check, unchanged (s)": timed_run(check)[0]}


def _workbench_measures(root: Path, home: Path, steps: int) -> dict[str, float]:
    os.environ["OKSTRA_HOME"] = str(home)
    minimal = float(run_child(MINIMAL))
    started = json.loads(run_child(WORKBENCH_START, str(root), "0"))
    nav = json.loads(run_child(WORKBENCH, str(root), str(steps)))
    return {
        "minimal Textual app start (s)": minimal,
        "workbench start, catalog painted (s)": started["first_paint_s"],
        "workbench start, phase columns painted (s)": started["phases_in_view_s"],
        "workbench start / minimal app (x)": started["first_paint_s"] / minimal,
        "phase columns / minimal app (x)": started["phases_in_view_s"] / minimal,
        "catalog cursor step, median (ms)": statistics.median(nav["down_ms"]),
        "catalog cursor step, max (ms)": max(nav["down_ms"]),
        "open a task, median (ms)": statistics.median(nav["open_task_ms"]),
        "workbench peak memory (MB)": nav["max_rss_mb"],
        "its largest child process, peak memory (MB)": nav["children_max_rss_mb"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, help="TASKS=PROJECT, an existing demo project")
    parser.add_argument("--workbench-only", action="append", default=[], help="TASKS of a tree measured lightly")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=60, help="catalog cursor moves per workbench run")
    parser.add_argument(
        "--inbox-only", action="store_true", help="measure okstra inbox alone, and its growth per round"
    )
    args = parser.parse_args()
    trees = {int(size): Path(path) for size, path in (t.split("=", 1) for t in args.tree)}
    light = {int(s) for s in args.workbench_only}
    from okstra_core import layout

    byte_compile()
    caches = Path(tempfile.mkdtemp(prefix="okstra-growth-"))
    rounds: dict[int, list[dict[str, float]]] = {size: [] for size in trees}
    for size, root in trees.items():  # warm the page cache, so that every round reads from memory
        if size in light:
            continue  # a tree measured lightly need not fit in it
        timed_run([sys.executable, "-c", FLOOR, str(root / ".okstra"), str(layout.demo_home(root))])
    for root in [] if args.inbox_only else trees.values():  # the workbench starts as it does again unchanged
        run_child(CACHE_LISTING, str(root))
    for _ in range(args.rounds):
        for size, root in sorted(trees.items()):
            home = layout.demo_home(root)
            cache_dir = caches / str(size)
            if args.inbox_only:
                measures: dict[str, float] = {}
                _with_cpu(measures, "okstra inbox --json", _okstra("inbox", str(root), "--json"))
            else:
                measures = (
                    _cached_only(root, cache_dir, home) if size in light else _store_measures(root, cache_dir, home)
                )
                measures.update(_workbench_measures(root, home, args.steps))
            rounds[size].append(measures)
            load = os.getloadavg()[0]
            print(json.dumps({"tasks": size, "load": round(load, 2), **measures}), file=sys.stderr, flush=True)
    medians = {
        size: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for size, runs in rounds.items() if runs
    }
    sizes = sorted(medians)
    full = [s for s in sizes if s not in light]
    lo, hi = (full[0], full[-1]) if len(full) > 1 else (sizes[0], sizes[-1])
    head = "| measure | " + " | ".join(f"{s:,} tasks" for s in sizes) + f" | {hi:,} / {lo:,} |"
    lines = [head, "|---|" + "---:|" * (len(sizes) + 1)]
    for key in medians[sizes[0]]:
        cells = [f"{medians[s][key]:.3f}" if key in medians[s] else "-" for s in sizes]
        grow = medians[hi][key] / medians[lo][key] if key in medians[hi] and key in medians[lo] else None
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {f'{grow:.2f}x' if grow else '-'} |")
    if args.inbox_only:
        for key in medians[lo]:
            per_round = [b[key] / a[key] for a, b in zip(rounds[lo], rounds[hi], strict=True)]
            lines.append(f"\n{key}, {hi:,} / {lo:,} per round: " + ", ".join(f"{r:.2f}x" for r in per_round))
    for size in [] if args.inbox_only else full:
        m = medians[size]
        floor, full_check = m["read floor, 1 process (s)"], m["check --no-cache, all cores (s)"]
        lines.append(
            f"\n{size:,} tasks: check one process / floor {m['check --no-cache --jobs 1 (s)'] / floor:.2f}x,"
            f" all cores / floor {full_check / floor:.2f}x,"
            f" cached / full {m['cached re-check, unchanged (s)'] / full_check:.3f}x,"
            f" one edited / full {m['cached re-check, one task edited (s)'] / full_check:.3f}x"
        )
    print("\n".join(lines))
    print(f"load average at the end: {os.getloadavg()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
