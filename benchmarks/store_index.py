"""Benchmark: ``okstra inbox`` through the store index, warm and cold, against a fresh look and a full check.

    python benchmarks/store_index.py [--tasks 10000] [--tree DIR] [--repeat 3] [--write-docs]

Makes (or reuses, ``--tree``) a demo tree of ``--tasks`` tasks, then times, alternating within each round, as
fresh processes with a private cache folder:

* **fresh**: ``okstra inbox TREE --json --no-cache`` (no index: every task read);
* **build**: ``okstra inbox TREE --json --reindex`` (the index dropped and built again);
* **warm**: ``okstra inbox TREE --json`` right after (nothing changed: one stat per path read);
* **one task changed**: the same after one task's manifest was rewritten (that task read again);
* **check**: ``okstra check TREE --jobs 1 --no-cache --format json`` (the full check in one process);
* **start**: ``okstra inbox`` on an empty store (the verb's fixed cost).

Every answer through the index is compared with the fresh one, byte for byte. Ratios are medians of the ratios
taken within each round. With ``strace`` on the machine, one warm run is traced to count the ``stat`` calls per
store path (the target: at most one per path). ``--write-docs`` replaces the "Store index" section of
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _timing import timed_run, write_section

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SECTION = "## Store index"
WARM_TARGET = 0.1
BUILD_TARGET = 1.0


def _okstra() -> list[str]:
    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_core.cli"]


def _touch_one_task(tree: Path, round_no: int) -> None:
    """Rewrite one task's manifest (its bytes change: the task must be read again)."""
    manifest = sorted(tree.glob(".okstra/tasks/*/*/task-manifest.json"))[round_no]
    value = json.loads(manifest.read_text(encoding="utf-8"))
    value["x-benchmark-round"] = round_no
    manifest.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def measure(tree: Path, repeat: int) -> dict[str, object]:
    from okstra_core import layout

    okstra = _okstra()
    inbox = [*okstra, "inbox", str(tree), "--json"]
    check = [
        *okstra,
        *("check", str(tree), "--home", str(layout.demo_home(tree)), "--jobs", "1", "--no-cache", "--quiet"),
        *("--format", "json"),
    ]
    stats = [*okstra, "stats", str(tree), "--json"]
    cached_check = [c for c in check if c != "--no-cache"]
    names = ["fresh", "build", "warm", "changed", "check", "start", "stats_fresh", "stats_build", "stats_warm"]
    names += ["stats_changed"]
    names += ["check_warm", "check_changed"]
    times: dict[str, list[float]] = {k: [] for k in names}
    with tempfile.TemporaryDirectory(prefix="okstra-index-empty-") as empty:
        (Path(empty) / ".okstra").mkdir()
        for round_no in range(repeat):
            elapsed, fresh = timed_run([*inbox, "--no-cache"], (0,))
            times["fresh"].append(elapsed)
            for name, argv in (("build", [*inbox, "--reindex"]), ("warm", inbox)):
                elapsed, out = timed_run(argv, (0,))
                times[name].append(elapsed)
                if out != fresh:
                    raise SystemExit(f"{name}: the answer through the index differs from a fresh look")
            _touch_one_task(tree, round_no)
            timed_run([*inbox, "--no-cache"], (0,))
            elapsed, _ = timed_run(inbox, (0,))
            times["changed"].append(elapsed)
            elapsed, full = timed_run(check, (0, 1))
            times["check"].append(elapsed)
            times["start"].append(timed_run([*okstra, "inbox", empty, "--json"], (0,))[0])
            _through_the_index(times, stats, cached_check, full, tree, round_no)
    files = sum(len(f) + len(d) for _, d, f in os.walk(tree / ".okstra"))
    return {
        "load": f"{os.getloadavg()[0]:.1f}",
        "times": times,
        "median": {k: statistics.median(v) for k, v in times.items()},
        "warm_ratio": statistics.median(w / f for w, f in zip(times["warm"], times["fresh"], strict=True)),
        "changed_ratio": statistics.median(w / f for w, f in zip(times["changed"], times["fresh"], strict=True)),
        "build_ratio": statistics.median(b / c for b, c in zip(times["build"], times["check"], strict=True)),
        **{f"stats_{k}_ratio": _ratio(times[f"stats_{k}"], times["stats_fresh"]) for k in ("build", "warm", "changed")},
        **{f"check_{k}_ratio": _ratio(times[f"check_{k}"], times["check"]) for k in ("warm", "changed")},
        "files": files,
        "stats": count_stats(inbox, tree),
    }


def _ratio(these: list[float], base: list[float]) -> float:
    return statistics.median(t / b for t, b in zip(these, base, strict=True))


def _through_the_index(
    times: dict[str, list[float]], stats: list[str], check: list[str], full: str, tree: Path, round_no: int
) -> None:
    """``okstra stats`` fresh, warm and after one task changed; the cached check warm and after one task changed
    (each answer compared with the fresh one)."""
    elapsed, fresh = timed_run([*stats, "--no-cache"], (0,))
    times["stats_fresh"].append(elapsed)
    elapsed, out = timed_run([*stats, "--reindex"], (0,))
    times["stats_build"].append(elapsed)
    if out != fresh:
        raise SystemExit("stats build: the answer through the index differs from a fresh look")
    timed_run(check, (0, 1))  # the check cache brought up to date
    for suffix in ("warm", "changed"):
        if suffix == "changed":
            _touch_one_task(tree, -1 - round_no)  # another task than the inbox rows touched
            fresh = timed_run([*stats, "--no-cache"], (0,))[1]
            full = timed_run([*check, "--no-cache"], (0, 1))[1]
        for name, argv, expected in (("stats", stats, fresh), ("check", check, full)):
            elapsed, out = timed_run(argv, (0, 1))
            times[f"{name}_{suffix}"].append(elapsed)
            if out != expected:
                raise SystemExit(f"{name} {suffix}: the answer through the cache differs from a fresh look")


def count_stats(inbox: list[str], tree: Path) -> tuple[int, int, int] | None:
    """(store paths looked at, stat calls on them, the most on one path) in one warm run, by strace."""
    if shutil.which("strace") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="okstra-index-strace-") as tmp:
        log = Path(tmp) / "trace"
        subprocess.run(
            ["strace", "-f", "-e", "trace=stat,lstat,newfstatat,statx", "-o", str(log), *inbox],
            capture_output=True,
            check=True,
        )
        store = str(tree / ".okstra")
        per_path: Counter[str] = Counter()
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            found = re.search(r'"([^"]*)"', line)
            if found and found.group(1).startswith(store):
                per_path[found.group(1)] += 1
    return len(per_path), sum(per_path.values()), max(per_path.values(), default=0)


def table(result: dict[str, object], tasks: int, repeat: int) -> str:
    med = result["median"]
    assert isinstance(med, dict)
    times = result["times"]
    assert isinstance(times, dict)
    stats = result["stats"]
    cpu = platform.processor() or platform.machine()
    lines = [
        SECTION,
        "",
        f"`python benchmarks/store_index.py --tasks {tasks} --repeat {repeat}` on a demo tree of {tasks} tasks "
        f"({result['files']} files and folders under `.okstra/`): every command a fresh process, alternating "
        f"within each round, medians of {repeat} rounds (interpreter start included). Machine: {cpu}, "
        f"{os.cpu_count()} cores (shared; load average {result['load']}), Python {platform.python_version()}.",
        "Every answer through the index was compared with the fresh one, byte for byte.",
        "",
        "| command | wall time | ratio |",
        "|---|---:|---:|",
        f"| `okstra inbox --json --no-cache` (a fresh look) | {med['fresh']:.2f} s | 1.00 |",
        f"| `okstra inbox --json`, warm (nothing changed) | {med['warm']:.2f} s | "
        f"**{float(result['warm_ratio']):.3f}** of the fresh look (target at most {WARM_TARGET}) |",  # type: ignore[arg-type]
        f"| `okstra inbox --json` after one task changed | {med['changed']:.2f} s | "
        f"{float(result['changed_ratio']):.3f} of the fresh look |",  # type: ignore[arg-type]
        f"| `okstra inbox --json --reindex` (the index built) | {med['build']:.2f} s | "
        f"**{float(result['build_ratio']):.2f}** of the full check (target at most {BUILD_TARGET}) |",  # type: ignore[arg-type]
        f"| `okstra check --jobs 1 --no-cache` (the full check) | {med['check']:.2f} s | |",
        f"| `okstra inbox --json` on an empty store (fixed cost) | {med['start']:.2f} s | |",
        f"| `okstra stats --json --no-cache` (a fresh look) | {med['stats_fresh']:.2f} s | 1.00 |",
        f"| `okstra stats --json --reindex` (its facts built) | {med['stats_build']:.2f} s | "
        f"{float(result['stats_build_ratio']):.3f} of its fresh look |",  # type: ignore[arg-type]
        f"| `okstra stats --json`, warm | {med['stats_warm']:.2f} s | "
        f"{float(result['stats_warm_ratio']):.3f} of its fresh look |",  # type: ignore[arg-type]
        f"| `okstra stats --json` after one task changed | {med['stats_changed']:.2f} s | "
        f"{float(result['stats_changed_ratio']):.3f} of its fresh look |",  # type: ignore[arg-type]
        f"| `okstra check --jobs 1`, cache warm | {med['check_warm']:.2f} s | "
        f"{float(result['check_warm_ratio']):.3f} of the full check |",  # type: ignore[arg-type]
        f"| `okstra check --jobs 1` after one task changed | {med['check_changed']:.2f} s | "
        f"{float(result['check_changed_ratio']):.3f} of the full check |",  # type: ignore[arg-type]
        "",
        "All runs (s): "
        + "; ".join(f"{name} " + ", ".join(f"{t:.2f}" for t in runs) for name, runs in times.items())
        + ".",
        "",
    ]
    if isinstance(stats, tuple):
        paths, calls, most = stats
        lines += [
            "One warm run under `strace -e trace=stat,lstat,newfstatat,statx`: "
            f"{calls} stat calls on {paths} store paths, at most {most} on one path "
            "(target: at most one per store path per process).",
            "",
        ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=10000)
    parser.add_argument("--tree", type=Path, default=None, help="reuse (or create) the demo tree here")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    from okstra_core.demo import generate

    with tempfile.TemporaryDirectory(prefix="okstra-index-bench-") as tmp:
        os.environ["OKSTRA_CACHE_DIR"] = str(Path(tmp) / "cache")
        tree = args.tree or Path(tmp) / "project"
        if not (tree / ".okstra").is_dir():
            print(f"generating a demo of {args.tasks} tasks in {tree} ...", file=sys.stderr)
            generate(tree, tasks=args.tasks)
        result = measure(tree.resolve(), args.repeat)
        text = table(result, args.tasks, args.repeat)
    print(text)
    if args.write_docs:
        write_section(REPO / "docs" / "performance.md", SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
