"""Workbench performance on a large demo: start, navigation latency, peak memory.

    python benchmarks/tui.py [--tasks 10000] [--root PROJECT] [--write-doc]

Start is measured in fresh processes, from before the interpreter starts to
the first painted frame: once for a minimal Textual app (the baseline) and
once for the workbench until its catalog rows are painted. Navigation runs
headless (Pilot): the time for a key press to be handled and the screen
updated while moving through the catalog, and to open a task (its manifest
overview painted) and go back. Peak memory is the workbench process's max RSS.
This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
DOC = HERE.parent.parent / "docs" / "performance.md"
SECTION = "## Workbench"

MINIMAL = r"""
import sys, time
t0 = float(sys.argv[1])
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("hello")
    def on_mount(self):
        self.call_after_refresh(self.done)
    def done(self):
        print(time.time() - t0)
        self.exit()

import asyncio
async def main():
    app = Minimal()
    async with app.run_test(size=(120, 40)) as pilot:
        while app.is_running:
            await pilot.pause(0.001)
asyncio.run(main())
"""

MINIMAL_NAV = r"""
import sys, time, json, asyncio
from textual.app import App
from textual.binding import Binding
from textual.widgets import Static

class Minimal(App):
    BINDINGS = [Binding("down", "step", "Step")]
    n = 0
    def compose(self):
        yield Static("0", id="n")
    def action_step(self):
        self.n += 1
        self.query_one("#n", Static).update(str(self.n))

async def main():
    app = Minimal()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        out = []
        for _ in range(int(sys.argv[2])):
            t = time.perf_counter(); await pilot.press("down"); out.append((time.perf_counter() - t) * 1000)
    print(json.dumps(out))
asyncio.run(main())
"""

WORKBENCH = r"""
import sys, time, json, asyncio, resource
t0 = float(sys.argv[1]); root = sys.argv[2]; steps = int(sys.argv[3])
from okstra_core.store import Project
from okstra_tui.app import OkstraApp
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.task import TaskScreen
from okstra_tui.summaries import CatalogRow

async def until(pilot, predicate, limit=30.0):
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > limit:
            raise SystemExit("timed out")
        await pilot.pause(0.001)

async def main():
    out = {}
    app = OkstraApp(Project.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        def painted():
            s = app.screen
            return isinstance(s, CatalogScreen) and s.data is not None and len(s.table.rows) > 0
        await until(pilot, painted)
        await pilot.pause()
        out["first_paint_s"] = time.time() - t0
        cat = app.screen
        def phases_in_view():
            start, end = cat.table.visible_range()
            return all(r.ident in cat.phases for r in cat.table.rows[start:end] if isinstance(r, CatalogRow))
        await until(pilot, phases_in_view)
        out["phases_in_view_s"] = time.time() - t0
        out["rows"] = len(cat.table.rows)
        down = []
        for _ in range(steps):
            t = time.perf_counter(); await pilot.press("down"); down.append(time.perf_counter() - t)
        page = []
        for _ in range(steps // 10):
            t = time.perf_counter(); await pilot.press("pagedown"); page.append(time.perf_counter() - t)
        filt = []
        await pilot.press("slash")
        for ch in "final":
            t = time.perf_counter(); await pilot.press(ch); filt.append(time.perf_counter() - t)
        await pilot.press("escape")
        opens, backs = [], []
        for i in range(10):
            for _ in range(37):
                await pilot.press("down")
            t = time.perf_counter()
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.overview is not None)
            await pilot.pause()
            opens.append(time.perf_counter() - t)
            t = time.perf_counter(); await pilot.press("escape"); await pilot.pause(); backs.append(time.perf_counter() - t)
        out["down_ms"] = [x * 1000 for x in down]
        out["pagedown_ms"] = [x * 1000 for x in page]
        out["filter_key_ms"] = [x * 1000 for x in filt]
        out["open_task_ms"] = [x * 1000 for x in opens]
        out["back_ms"] = [x * 1000 for x in backs]
    out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))

asyncio.run(main())
"""


def run_child(code: str, *args: str) -> str:
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-c", code, repr(t0), *args], capture_output=True, text=True,
                          cwd=HERE.parent.parent, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed: {proc.stderr.strip().splitlines()[-1:]}")
    return proc.stdout.strip().splitlines()[-1]


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--root", type=Path, help="an existing demo project (else one is generated)")
    parser.add_argument("--runs", type=int, default=3, help="start measurements per app (median kept)")
    parser.add_argument("--steps", type=int, default=200, help="catalog cursor moves to time")
    parser.add_argument("--write-doc", action="store_true", help="replace the Workbench section of docs/performance.md")
    args = parser.parse_args()

    tmp: tempfile.TemporaryDirectory[str] | None = None
    root = args.root
    if root is None:
        from okstra_core.demo import generate

        tmp = tempfile.TemporaryDirectory(prefix="okstra-bench-")
        t = time.perf_counter()
        root = generate(Path(tmp.name) / "project", tasks=args.tasks)
        print(f"generated {args.tasks} tasks in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    os.environ["OKSTRA_HOME"] = str(Path(root) / ".okstra-home")

    minimal = [float(run_child(MINIMAL)) for _ in range(args.runs)]
    results = [json.loads(run_child(WORKBENCH, str(root), str(args.steps))) for _ in range(args.runs)]
    harness = json.loads(run_child(MINIMAL_NAV, str(args.steps)))
    base = statistics.median(minimal)
    start = statistics.median(r["first_paint_s"] for r in results)
    phases = statistics.median(r["phases_in_view_s"] for r in results)
    last = results[-1]
    nav = last["down_ms"] + last["pagedown_ms"]
    rows = [
        ("Minimal Textual app: start to first paint", f"{base * 1000:.0f} ms", "baseline"),
        (f"Workbench: start to painted catalog ({last['rows']:,} rows)", f"{start * 1000:.0f} ms  ({start / base:.2f}x)",
         "≤ 1.5x baseline"),
        ("Workbench: ... and phase columns of the rows in view", f"{phases * 1000:.0f} ms  ({phases / base:.2f}x)", "-"),
        ("Harness: one key press in a minimal Textual app, median / p95",
         f"{statistics.median(harness):.1f} / {p(harness, .95):.1f} ms", "reference"),
        ("Catalog cursor step (down), median / p95 / max",
         f"{statistics.median(last['down_ms']):.1f} / {p(last['down_ms'], .95):.1f} / {max(last['down_ms']):.1f} ms", "≤ 50 ms"),
        ("Catalog page down, median / p95 / max",
         f"{statistics.median(last['pagedown_ms']):.1f} / {p(last['pagedown_ms'], .95):.1f} / {max(last['pagedown_ms']):.1f} ms", "≤ 50 ms"),
        ("Filter keystroke over all rows, median / max",
         f"{statistics.median(last['filter_key_ms']):.1f} / {max(last['filter_key_ms']):.1f} ms", "≤ 50 ms"),
        ("Open a task (overview painted), median / max",
         f"{statistics.median(last['open_task_ms']):.1f} / {max(last['open_task_ms']):.1f} ms", "≤ 50 ms"),
        ("Back to the catalog, median / max",
         f"{statistics.median(last['back_ms']):.1f} / {max(last['back_ms']):.1f} ms", "≤ 50 ms"),
        ("Peak memory (max RSS of the workbench process)", f"{max(r['max_rss_mb'] for r in results):.0f} MB", "≤ 200 MB"),
    ]
    del nav
    table = ["| measure | result | target |", "|---|---|---|"] + [f"| {a} | {b} | {c} |" for a, b, c in rows]
    text = "\n".join(table)
    print(text)
    if args.write_doc:
        write_doc(text, args.tasks if args.root is None else None)
    if tmp is not None:
        tmp.cleanup()
    return 0


def write_doc(table: str, tasks: int | None) -> None:
    """Replace (or add) the Workbench section, keeping every other section."""
    body = (
        f"{SECTION}\n\n"
        "Measured by `python benchmarks/tui.py --write-doc` on a "
        f"{'%d-task ' % tasks if tasks else ''}demo (`okstra_core.demo.generate(path, tasks=N)`), headless, "
        f"on {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}. Start times are medians of fresh processes "
        "(interpreter start included); latencies are Pilot key presses until the screen has handled them.\n\n"
        f"{table}\n"
    )
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Performance\n"
    start = text.find(SECTION)
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + body
    else:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + body + (text[end + 1:] if end != -1 else "")
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
