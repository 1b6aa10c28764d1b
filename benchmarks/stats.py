"""Benchmark: ``okstra stats`` (every statistic) against a one-process ``okstra check`` of the same tree.

    python benchmarks/stats.py [--tasks 2000] [--tree DIR] [--repeat 5] [--write-docs]

Makes (or reuses, ``--tree``) a demo tree of ``--tasks`` tasks with
``okstra_core.demo.generate``, then times, alternating, as fresh processes:

* **stats**: ``okstra stats TREE --json`` (every statistic the Insights view draws);
* **check**: ``okstra check TREE --jobs 1 --no-cache --format json`` (every rule, one process, no
  incremental cache);
* **start**: ``okstra stats`` on an empty store, the fixed cost of the verb (interpreter, imports).

Each timing is the median of ``--repeat`` runs (interpreter start included in
both); the ratio is the median of the ratios taken within each round (one
stats, one check). The target is a ratio of at most 0.5. ``--write-docs`` replaces the "Insights" section of
``docs/performance.md`` (adding it when missing), keeping the other sections.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import timed_run, write_section

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET = 0.5
SECTION = "## Insights"


def _okstra() -> list[str]:
    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_core.cli"]


def measure(tree: Path, repeat: int) -> dict[str, object]:
    from okstra_core import layout

    okstra = _okstra()
    stats_cmd = [*okstra, "stats", str(tree), "--json"]
    check_cmd = [
        *okstra,
        "check",
        str(tree),
        "--home",
        str(layout.demo_home(tree)),
        "--jobs",
        "1",
        "--no-cache",
        "--quiet",
        "--format",
        "json",
    ]
    stats_times: list[float] = []
    check_times: list[float] = []
    start_times: list[float] = []
    stats_out = check_out = ""
    with tempfile.TemporaryDirectory(prefix="okstra-stats-empty-") as empty:
        (Path(empty) / ".okstra").mkdir()
        for _ in range(repeat):
            elapsed, stats_out = timed_run(stats_cmd, (0,))
            stats_times.append(elapsed)
            elapsed, check_out = timed_run(check_cmd, (0, 1))
            check_times.append(elapsed)
            start_times.append(timed_run([*okstra, "stats", empty, "--json"], (0,))[0])
    doc = json.loads(stats_out)
    summary = json.loads(check_out).get("summary", {})
    return {
        "load": f"{os.getloadavg()[0]:.1f}",
        "stats": statistics.median(stats_times),
        "check": statistics.median(check_times),
        "start": statistics.median(start_times),
        "ratio": statistics.median(s / c for s, c in zip(stats_times, check_times, strict=True)),
        "start_all": start_times,
        "stats_all": stats_times,
        "check_all": check_times,
        "tasks": doc["tasks"],
        "runs": doc["runs"],
        "workers": len(doc["workers"]),
        "check_summary": summary,
    }


def first_paint(tree: Path, rounds: int) -> list[tuple[float, float]]:
    """The Insights view's first paint once its data is ready: (wall, CPU) seconds, one per reading.

    Timed in the app (headless, 120x40) from the moment the worker's result reaches the UI thread to the
    end of the next refresh; ``R`` re-reads for the next round. CPU time is the process's, which a
    loaded machine does not inflate the way it does wall time.
    """
    import asyncio
    import time

    from okstra_core.store import Project
    from okstra_tui.app import OkstraApp
    from okstra_tui.screens.insights import InsightsScreen

    times: list[tuple[float, float]] = []
    real = InsightsScreen._show

    def timed(self: InsightsScreen, *args: object) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        real(self, *args)  # type: ignore[arg-type]
        self.app.call_after_refresh(lambda: times.append((time.perf_counter() - wall, time.process_time() - cpu)))

    async def run() -> None:
        app = OkstraApp(Project(tree))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("I")
            for i in range(rounds):
                while len(times) <= i:
                    await asyncio.sleep(0.05)
                if i + 1 < rounds:
                    await pilot.pause(0.5)
                    await pilot.press("R")

    InsightsScreen._show = timed  # type: ignore[method-assign]
    try:
        asyncio.run(run())
    finally:
        InsightsScreen._show = real  # type: ignore[method-assign]
    return times


def table(result: dict[str, object], tasks: int, repeat: int) -> str:
    stats_time, check = float(result["stats"]), float(result["check"])  # type: ignore[arg-type]
    ratio = float(result["ratio"])  # type: ignore[arg-type]
    summary = result["check_summary"]
    assert isinstance(summary, dict)
    cpu = platform.processor() or platform.machine()
    return "\n".join(
        [
            SECTION,
            "",
            f"`python benchmarks/stats.py --tasks {tasks} --repeat {repeat}` on a demo tree of {tasks} tasks: both "
            "commands as fresh processes, alternating; times are medians and the ratio is the median of the "
            "ratios taken within each round (interpreter start included in both).",
            f"Machine: {cpu}, {os.cpu_count()} cores (shared; load average {result['load']} at the end), "
            f"Python {platform.python_version()}.",
            "",
            "| command | wall time | what it did |",
            "|---|---:|---|",
            f"| `okstra stats --json` | {stats_time:.2f} s | every statistic over {result['tasks']} tasks and "
            f"{result['runs']} runs ({result['workers']} workers) |",
            f"| `okstra stats --json` on an empty store | {float(result['start']):.2f} s | the verb's fixed cost: "  # type: ignore[arg-type]
            "interpreter, imports |",
            f"| `okstra check --jobs 1 --no-cache` | {check:.2f} s | {summary.get('files', '?')} files, every rule; "
            f"{summary.get('errors', '?')} errors |",
            "",
            f"Stats / one-process check: **{ratio:.2f}** (target at most {TARGET:.2f}). All rounds: stats "
            + ", ".join(f"{t:.2f}" for t in result["stats_all"])  # type: ignore[attr-defined]
            + " s; check "
            + ", ".join(f"{t:.2f}" for t in result["check_all"])  # type: ignore[attr-defined]
            + " s; stats on an empty store "
            + ", ".join(f"{t:.2f}" for t in result["start_all"])  # type: ignore[attr-defined]
            + " s.",
            "",
            "The Insights view's first paint once its data is ready (in the app, headless, 120x40; "
            "statistics and plotext drawing in the worker): "
            + ", ".join(f"{w * 1000:.0f} ms wall / {c * 1000:.0f} ms CPU" for w, c in result["paint"])  # type: ignore[attr-defined]
            + " (target 100 ms).",
            "",
            "What it reads per task: the manifest, `history/timeline.json`, `history/fix-cycles.jsonl` when",
            "present, each run's report (for its `generatedAt`), the inbox's few files (through",
            "`pending_for_task`, for where a task stops), each run dir's `state/` listing and terminal",
            "convergence state, and the `prompts/` listing with a `stat` per prompt and transcript (the log",
            "report). Prompts, transcripts, worker results and reading copies are never opened.",
            "",
        ]
    )


def write_docs(text: str) -> None:
    write_section(REPO / "docs" / "performance.md", SECTION, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--tree", type=Path, default=None, help="reuse (or create) the demo tree here")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    from okstra_core.demo import generate

    with tempfile.TemporaryDirectory(prefix="okstra-stats-bench-") as tmp:
        tree = args.tree or Path(tmp) / "project"
        if not (tree / ".okstra").is_dir():
            print(f"generating a demo of {args.tasks} tasks in {tree} ...", file=sys.stderr)
            generate(tree, tasks=args.tasks)
        result = measure(tree.resolve(), args.repeat)
        result["paint"] = first_paint(tree.resolve(), 3)
        text = table(result, args.tasks, args.repeat)
    print(text)
    if args.write_docs:
        write_docs(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
