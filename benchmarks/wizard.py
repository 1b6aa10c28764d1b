"""The clarification wizard on a large report: time to the first question and peak memory.

    python benchmarks/wizard.py [--questions 999] [--megabytes 15] [--root PROJECT] [--runs 3]

Makes the default demo (or reuses ``--root``, which it changes), then rewrites
the tax-export analysis report so that it asks ``--questions`` clarification
questions and weighs about ``--megabytes`` MB (under the reader's 16 MB limit).
Each run is a fresh workbench process, headless at 120x40: the inbox is
opened, the report's decision selected, and Enter pressed; the time is from
dispatching that key to the first frame showing the first question (as
``benchmarks/tui.py`` measures a key), and the memory is the process's max RSS
before the key and at the end. This is a measurement, not a test: nothing here
asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tui import PROBE, byte_compile, run_child

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

REPORT = ".okstra/tasks/checkout/tax-export/runs/analysis/reports/final-report-analysis-001.data.json"

CHILD = (
    PROBE
    + r"""
import sys, json, resource
t0 = float(sys.argv[1]); root = sys.argv[2]; report = sys.argv[3]
from pathlib import Path
from textual.widgets import DataTable
from okstra_core.store import Project
from okstra_tui.app import OkstraApp
from okstra_tui.screens.inbox import InboxScreen
from okstra_tui.screens.wizard import WizardScreen
from okstra_tui.screens.wizard_steps import QuestionStep

def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

async def until(pilot, predicate, limit=600.0):
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > limit:
            raise SystemExit("timed out")
        await pilot.pause(0.01)

def first_question():
    screen = app.screen
    if not isinstance(screen, WizardScreen):
        return False
    try:
        step = screen.step
    except LookupError:  # no step on screen yet (IndexError before the steps were built lazily)
        return False
    return isinstance(step, QuestionStep) and step.is_mounted and step.display

async def main():
    global app
    out = {}
    app = OkstraApp(Project(Path(root)))
    probe = Probe(app, t0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("i")
        def listed():
            screen = app.screen
            return isinstance(screen, InboxScreen) and screen.query_one("#inbox-table", DataTable).row_count > 0
        await until(pilot, listed)
        inbox = app.screen
        table = inbox.query_one("#inbox-table", DataTable)
        for row in range(table.row_count):
            table.move_cursor(row=row)
            got = inbox.selected()
            path = str(got.report_path) if got is not None else ""
            if path.endswith(report) and got.detail != "attach-pending":
                break
        else:
            raise SystemExit("the report's decision is not in the inbox")
        await pilot.pause()
        out["rss_before_mb"] = rss_mb()
        out["first_question_s"] = await probe.key(pilot, "enter", first_question, limit=600.0) / 1000
        out["steps"] = len(app.screen.steps)
        await pilot.pause()
        out["rss_peak_mb"] = rss_mb()
    print(json.dumps(out))

asyncio.run(main())
"""
)


def big_report(root: Path, questions: int, megabytes: float) -> int:
    """Rewrite the tax-export report to ask *questions* questions in about *megabytes* MB; its size."""
    path = root / REPORT
    data = json.loads(path.read_text(encoding="utf-8"))
    per_item = int(megabytes * 1024 * 1024) // questions
    line = "The ledger entry was booked twice by the gateway retry; the refund must follow the original. "
    context = (line * (per_item // len(line) + 1))[: max(per_item - 300, 0)]
    items = []
    for i in range(1, questions + 1):
        item = {"itemId": f"CQ-{i:03d}", "question": f"Question {i}: which entries does the refund follow?"}
        item["context"] = context
        if i % 2:
            item["options"] = ["the original booking", "the retried booking", "both, reconciled by hand"]
        items.append(item)
    data["clarificationItems"] = items
    raw = json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"
    path.write_bytes(raw)
    return len(raw)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=999)
    parser.add_argument("--megabytes", type=float, default=15.0)
    parser.add_argument("--root", type=Path, help="an existing demo project (its tax-export report is rewritten)")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes (median kept)")
    args = parser.parse_args()

    tmp: tempfile.TemporaryDirectory[str] | None = None
    root = args.root
    if root is None:
        from okstra_core.demo import generate

        tmp = tempfile.TemporaryDirectory(prefix="okstra-bench-")
        root = generate(Path(tmp.name) / "project")
    from okstra_core import layout, reading

    size = big_report(Path(root), args.questions, args.megabytes)
    print(f"report: {args.questions} questions, {size:,} bytes (limit {reading.MAX_BYTES:,})", file=sys.stderr)
    os.environ["OKSTRA_HOME"] = str(layout.demo_home(Path(root)))
    byte_compile()
    results = []
    for _ in range(args.runs):
        started = time.perf_counter()
        results.append(json.loads(run_child(CHILD, str(root), REPORT)))
        print(f"run: {results[-1]} ({time.perf_counter() - started:.1f}s)", file=sys.stderr)
    first = statistics.median(r["first_question_s"] for r in results)
    peak = statistics.median(r["rss_peak_mb"] for r in results)
    before = statistics.median(r["rss_before_mb"] for r in results)
    print(f"time to the first question: {first:.2f} s (median of {len(results)})")
    print(f"max RSS: {before:.0f} MB before opening, {peak:.0f} MB after (median of {len(results)})")
    print(f"load average: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
