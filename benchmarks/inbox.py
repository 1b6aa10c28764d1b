"""Benchmark: ``okstra inbox`` against a one-process ``okstra check`` of the same tree.

    python benchmarks/inbox.py [--tasks 2000] [--tree DIR] [--repeat 5] [--write-docs]

Makes (or reuses, ``--tree``) a demo tree of ``--tasks`` tasks with
``okstra_core.demo.generate``, then times, alternating, as fresh processes:

* **inbox**: ``okstra inbox TREE --json``;
* **check**: ``okstra check TREE --jobs 1 --no-cache --format json`` (every rule, one process, no
  incremental cache);
* **start**: ``okstra inbox`` on an empty store, the fixed cost of the verb (interpreter, imports).

Each timing is the median of ``--repeat`` runs (interpreter start included in
both); the ratio is the median of the ratios taken within each round (one
inbox, one check). The target is a ratio of at most 0.25. ``--write-docs`` replaces the "Inbox" section of
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

TARGET = 0.25
SECTION = "## Inbox"


def _okstra() -> list[str]:
    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_core.cli"]


def measure(tree: Path, repeat: int) -> dict[str, object]:
    from okstra_core import layout

    okstra = _okstra()
    inbox_cmd = [*okstra, "inbox", str(tree), "--json"]
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
    inbox_times: list[float] = []
    check_times: list[float] = []
    start_times: list[float] = []
    inbox_out = check_out = ""
    with tempfile.TemporaryDirectory(prefix="okstra-inbox-empty-") as empty:
        (Path(empty) / ".okstra").mkdir()
        for _ in range(repeat):
            elapsed, inbox_out = timed_run(inbox_cmd, (0,))
            inbox_times.append(elapsed)
            elapsed, check_out = timed_run(check_cmd, (0, 1))
            check_times.append(elapsed)
            start_times.append(timed_run([*okstra, "inbox", empty, "--json"], (0,))[0])
    items = json.loads(inbox_out)["items"]
    kinds: dict[str, int] = {}
    for item in items:
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
    summary = json.loads(check_out).get("summary", {})
    return {
        "load": f"{os.getloadavg()[0]:.1f}",
        "inbox": statistics.median(inbox_times),
        "check": statistics.median(check_times),
        "start": statistics.median(start_times),
        "ratio": statistics.median(i / c for i, c in zip(inbox_times, check_times, strict=True)),
        "start_all": start_times,
        "inbox_all": inbox_times,
        "check_all": check_times,
        "items": len(items),
        "kinds": kinds,
        "tasks": len({i["task"] for i in items}),
        "check_summary": summary,
    }


def table(result: dict[str, object], tasks: int, repeat: int) -> str:
    inbox, check = float(result["inbox"]), float(result["check"])  # type: ignore[arg-type]
    ratio = float(result["ratio"])  # type: ignore[arg-type]
    kinds = result["kinds"]
    assert isinstance(kinds, dict)
    summary = result["check_summary"]
    assert isinstance(summary, dict)
    listed = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    cpu = platform.processor() or platform.machine()
    return "\n".join(
        [
            SECTION,
            "",
            f"`python benchmarks/inbox.py --tasks {tasks}` on a demo tree of {tasks} tasks: both commands as fresh "
            f"processes, alternating, medians of {repeat} rounds (interpreter start included in both).",
            f"Machine: {cpu}, {os.cpu_count()} cores (shared; load average {result['load']}), "
            f"Python {platform.python_version()}. The machine's load moves every timing; the ratio of two",
            "timings taken alternately in one run is what counts.",
            "",
            "| command | wall time | what it did |",
            "|---|---:|---|",
            f"| `okstra inbox --json` | {inbox:.2f} s | {result['items']} decisions in {result['tasks']} tasks "
            f"({listed}) |",
            f"| `okstra inbox --json` on an empty store | {float(result['start']):.2f} s | the verb's fixed cost: "  # type: ignore[arg-type]
            "interpreter, imports |",
            f"| `okstra check --jobs 1 --no-cache` | {check:.2f} s | {summary.get('files', '?')} files, every rule; "
            f"{summary.get('errors', '?')} errors |",
            "",
            f"Inbox / one-process check: **{ratio:.2f}** (target at most {TARGET:.2f}). All runs: inbox "
            + ", ".join(f"{t:.2f}" for t in result["inbox_all"])  # type: ignore[attr-defined]
            + " s; check "
            + ", ".join(f"{t:.2f}" for t in result["check_all"])  # type: ignore[attr-defined]
            + " s; inbox on an empty store "
            + ", ".join(f"{t:.2f}" for t in result["start_all"])  # type: ignore[attr-defined]
            + " s.",
            "",
            "Why it is cheap: per task it reads the manifest and lists `runs/`, the run dirs and only their",
            "`reports/` folder (a run dir lists one category folder when one is asked for), loads the latest",
            "report of each task type, and stats or reads the few files a decision depends on (the report's",
            "user-response sidecar, `selected-direction.json`, `clarification-response.md`, the approved",
            "snapshot's design-prep requests and inputs). Prompts, logs, state, worker results and",
            "reading copies are never opened. What remains beyond the fixed cost (the empty-store row) is",
            "mostly validating each task manifest and latest report, and listing the folders named above.",
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

    with tempfile.TemporaryDirectory(prefix="okstra-inbox-bench-") as tmp:
        tree = args.tree or Path(tmp) / "project"
        if not (tree / ".okstra").is_dir():
            print(f"generating a demo of {args.tasks} tasks in {tree} ...", file=sys.stderr)
            generate(tree, tasks=args.tasks)
        result = measure(tree.resolve(), args.repeat)
        text = table(result, args.tasks, args.repeat)
    print(text)
    if args.write_docs:
        write_docs(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
