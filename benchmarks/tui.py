"""Workbench performance on a large demo: start, navigation latency, peak memory.

    python benchmarks/tui.py [--tasks 10000] [--root PROJECT] [--write-doc]

Start is measured in fresh processes, from before the interpreter starts to
the first painted frame: once for a minimal Textual app (the baseline) and
once for the workbench until its catalog rows are painted. Navigation runs
headless: each latency is measured inside the app, from dispatching a key to
the first frame composed with the expected state (cursor moved, filtered rows
shown, task overview painted), and compared with the same measurement on a
minimal Textual app in the same run. Peak memory is the workbench process's
max RSS.
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

from _timing import byte_compile

HERE = Path(__file__).resolve()
DOC = HERE.parent.parent / "docs" / "performance.md"
SECTION = "## Workbench"

#: In-app measurement shared by both apps: a key is dispatched the way Pilot does it (through the
#: driver), and its latency is the time until the first frame the screen composes (its compositor
#: update, i.e. everything but writing escape codes to a terminal) in which the expected state holds.
#: Between two measured keys the app is left to go idle, so each step is measured on its own.
PROBE = r"""
import asyncio, time
from textual import events

class Probe:
    def __init__(self, app, t0=None):
        self.app = app
        self.t0 = t0
        self.first_paint = None
        self.start_predicate = None
        #: name -> predicate: the time (since t0) of the first frame in which each holds is kept in .marked.
        self.marks = {}
        self.marked = {}
        self.waiting = None
        self.hit = None
        original = app._display
        def display(screen, renderable):
            original(screen, renderable)
            if renderable is None:
                return
            now = time.perf_counter()
            if self.first_paint is None and self.start_predicate is not None and self.start_predicate():
                self.first_paint = time.time() - self.t0
            for name, predicate in list(self.marks.items()):
                if predicate():
                    self.marked[name] = time.time() - self.t0
                    del self.marks[name]
            if self.waiting is not None:
                predicate, start = self.waiting
                if predicate():
                    self.hit = now - start
                    self.waiting = None
        app._display = display

    async def started(self, predicate, limit=60.0):
        # The probe is installed before the app runs, so the first frame is seen even when it comes
        # before Pilot's run_test() returns (run_test waits for the screen to settle).
        self.start_predicate = predicate
        deadline = time.perf_counter() + limit
        while self.first_paint is None:
            if time.perf_counter() > deadline:
                raise SystemExit("timed out waiting for the first paint")
            await asyncio.sleep(0.001)
        return self.first_paint

    async def key(self, pilot, key, predicate, limit=30.0):
        app = self.app
        char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        self.hit = None
        self.waiting = (predicate, time.perf_counter())
        app._driver.send_message(event)
        deadline = time.perf_counter() + limit
        while self.hit is None:
            if time.perf_counter() > deadline:
                raise SystemExit(f"timed out after key {key!r}")
            await asyncio.sleep(0.001)
        await pilot.pause()
        return self.hit * 1000
"""

MINIMAL = (
    PROBE
    + r"""
import sys
t0 = float(sys.argv[1])
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("hello")

async def main():
    app = Minimal()
    probe = Probe(app, t0)
    probe.start_predicate = lambda: True
    async with app.run_test(size=(120, 40)) as pilot:
        print(await probe.started(lambda: True))
asyncio.run(main())
"""
)

MINIMAL_NAV = (
    PROBE
    + r"""
import sys, json
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
        probe = Probe(app)
        await pilot.pause()
        out, pilot_ms = [], []
        for _ in range(int(sys.argv[2])):
            want = app.n + 1
            out.append(await probe.key(pilot, "down", lambda: app.n == want))
        for _ in range(20):
            t = time.perf_counter(); await pilot.press("down"); pilot_ms.append((time.perf_counter() - t) * 1000)
    print(json.dumps({"step_ms": out, "pilot_ms": pilot_ms}))
asyncio.run(main())
"""
)

WORKBENCH = (
    PROBE
    + r"""
import sys, json, resource
t0 = float(sys.argv[1]); root = sys.argv[2]; steps = int(sys.argv[3])
from pathlib import Path
from okstra_core.store import Project
from okstra_tui.app import OkstraApp
from okstra_tui.screens.catalog import CatalogScreen

async def until(pilot, predicate, limit=60.0):
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > limit:
            raise SystemExit("timed out")
        await pilot.pause(0.01)

async def main():
    out = {}
    app = OkstraApp(Project(Path(root)))
    from okstra_tui.data.catalog import CatalogRow
    def in_view():
        s = app.screen
        if not isinstance(s, CatalogScreen):
            return []
        start, end = s.table.visible_range()
        return [r for r in s.table.rows[start:end] if isinstance(r, CatalogRow)]
    def painted():
        # The first frame showing task rows (the rows below the view may not be built yet).
        return bool(in_view())
    def phases_in_view():
        rows = in_view()
        return bool(rows) and all(r.ident in app.screen.phases for r in rows)
    def all_rows():
        s = app.screen
        return isinstance(s, CatalogScreen) and s.data is not None and len(s.table.rows) > 0
    probe = Probe(app, t0)
    probe.start_predicate = painted
    probe.marks = {"phases_in_view_s": phases_in_view, "all_rows_s": all_rows}
    async with app.run_test(size=(120, 40)) as pilot:
        out["first_paint_s"] = await probe.started(painted)
        cat = app.screen
        await until(pilot, lambda: not probe.marks)
        out.update(probe.marked)
        from textual.worker import WorkerCancelled
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            pass
        await pilot.pause()
        out["rows"] = len(cat.table.rows)
        table = cat.table
        def cursor_at(n):
            return lambda: app.screen is cat and table.cursor == n
        down = [await probe.key(pilot, "down", cursor_at(table.cursor + 1)) for _ in range(steps)]
        page = []
        for _ in range(max(steps // 10, 1)):
            target = min(table.cursor + max(table.size.height - 2, 1), len(table.rows) - 1)
            page.append(await probe.key(pilot, "pagedown", cursor_at(target)))
        await probe.key(pilot, "slash", lambda: app.screen.focused is cat.filter_input)
        filt = []
        typed = ""
        for ch in "final":
            typed += ch
            want = typed
            filt.append(await probe.key(pilot, ch, lambda: cat.shown_filter == want))
        await probe.key(pilot, "escape", lambda: cat.shown_filter == "")
        from okstra_tui.screens.task import TaskScreen
        opens, backs, forwards = [], [], []
        for i in range(10):
            for _ in range(37):
                await probe.key(pilot, "down", lambda: True)
            if not isinstance(table.current_row, CatalogRow):  # a group's title (small groups): onto its first task
                await probe.key(pilot, "down", lambda: True)
            def task_shown():
                return isinstance(app.screen, TaskScreen) and app.screen.overview is not None

            opens.append(await probe.key(pilot, "enter", task_shown))
            backs.append(await probe.key(pilot, "escape", lambda: app.screen is cat))
            forwards.append(await probe.key(pilot, "right_square_bracket", task_shown))
            await probe.key(pilot, "escape", lambda: app.screen is cat)
        out["down_ms"] = down
        out["pagedown_ms"] = page
        out["filter_key_ms"] = filt
        out["open_task_ms"] = opens
        out["back_ms"] = backs
        out["forward_ms"] = forwards
    out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # The largest of the child processes it started and waited for (the inbox count, the catalog's
    # confirmation, the notices' watcher, which the closed app has ended).
    out["children_max_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(out))

asyncio.run(main())
"""
)


#: The workbench until its first painted catalog and the phase columns of the rows in view, and nothing else.
WORKBENCH_START = (
    WORKBENCH.split("        from textual.worker import WorkerCancelled")[0]
    + "    print(json.dumps(out))\n\nasyncio.run(main())\n"
)


#: Caches the catalog's listing as a workbench that has run before did (the first paint then reads it).
CACHE_LISTING = r"""
import sys
from pathlib import Path
from okstra_core.store import Project
from okstra_tui.data.catalog import list_catalog
data = list_catalog(Project(Path(sys.argv[2])))
if data is not None and data.save_listing is not None:
    data.save_listing()
print("ok")
"""


def run_child(code: str, *args: str, env: dict[str, str] | None = None) -> str:
    t0 = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", code, repr(t0), *args],
        capture_output=True,
        text=True,
        cwd=HERE.parent.parent,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed: {proc.stderr.strip().splitlines()[-1:]}")
    return proc.stdout.strip().splitlines()[-1]


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--root", type=Path, help="an existing demo project (else one is generated)")
    parser.add_argument("--runs", type=int, default=9, help="start measurements per app (median kept)")
    parser.add_argument("--nav-runs", type=int, default=2, help="navigation runs (the last one is reported)")
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
    from okstra_core import layout

    os.environ["OKSTRA_HOME"] = str(layout.demo_home(Path(root)))
    byte_compile()

    # Start: the apps alternate, so that a slow moment of the machine hits them alike. The workbench starts
    # twice per round: as it starts again on an unchanged catalog (its listing cached by an earlier start),
    # and as it starts after the catalog changed (an empty cache folder: the catalog is parsed).
    run_child(CACHE_LISTING, str(root))
    minimal, starts, phase_starts, cold_starts, cold_phases = [], [], [], [], []
    empty = tempfile.TemporaryDirectory(prefix="okstra-bench-cache-")
    for _ in range(args.runs):
        minimal.append(float(run_child(MINIMAL)))
        started = json.loads(run_child(WORKBENCH_START, str(root), "0"))
        starts.append(started["first_paint_s"])
        phase_starts.append(started["phases_in_view_s"])
        changed = json.loads(run_child(WORKBENCH_START, str(root), "0", env={"OKSTRA_CACHE_DIR": empty.name}))
        cold_starts.append(changed["first_paint_s"])
        cold_phases.append(changed["phases_in_view_s"])
    results = [json.loads(run_child(WORKBENCH, str(root), str(args.steps))) for _ in range(args.nav_runs)]
    harness = json.loads(run_child(MINIMAL_NAV, str(args.steps)))
    base = statistics.median(minimal)
    start = statistics.median(starts)
    phases = statistics.median(phase_starts)
    for label, values in (
        ("minimal app", minimal),
        ("workbench", starts),
        ("phase columns", phase_starts),
        ("workbench, catalog changed", cold_starts),
        ("phase columns, catalog changed", cold_phases),
    ):
        print(f"start runs, {label} (ms): " + ", ".join(f"{v * 1000:.0f}" for v in values), file=sys.stderr)
    print(f"load average at the end of the start runs: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    last = results[-1]
    step = statistics.median(harness["step_ms"])

    def lat(values: list[float], extra: bool = True) -> str:
        med = statistics.median(values)
        tail = f" / {p(values, 0.95):.1f} / {max(values):.1f}" if extra else f" / {max(values):.1f}"
        return f"{med:.1f}{tail} ms  ({med / step:.1f}x)"

    rows = [
        ("Minimal Textual app: start to first paint", f"{base * 1000:.0f} ms", "baseline"),
        (
            f"Workbench: start to painted catalog ({last['rows']:,} rows)",
            f"{start * 1000:.0f} ms  ({start / base:.2f}x)",
            "≤ 1.5x baseline",
        ),
        (
            "Workbench: ... and phase columns of the rows in view",
            f"{phases * 1000:.0f} ms  ({phases / base:.2f}x)",
            "≤ 1.4x baseline",
        ),
        (
            "Workbench after the catalog changed: painted catalog / phase columns",
            f"{statistics.median(cold_starts) * 1000:.0f} / {statistics.median(cold_phases) * 1000:.0f} ms  "
            f"({statistics.median(cold_starts) / base:.2f}x / {statistics.median(cold_phases) / base:.2f}x)",
            "-",
        ),
        (
            "Minimal Textual app: key to painted update, median / p95 / max",
            f"{step:.1f} / {p(harness['step_ms'], 0.95):.1f} / {max(harness['step_ms']):.1f} ms  (1.0x)",
            "reference",
        ),
        (
            "Minimal Textual app: Pilot `press` round trip, median (for comparison)",
            f"{statistics.median(harness['pilot_ms']):.1f} ms",
            "-",
        ),
        ("Catalog cursor step (down), median / p95 / max", lat(last["down_ms"]), "≤ 50 ms"),
        ("Catalog page down, median / p95 / max", lat(last["pagedown_ms"]), "≤ 50 ms"),
        (
            "Filter keystroke over all rows (filtered rows painted), median / max",
            lat(last["filter_key_ms"], extra=False),
            "≤ 50 ms",
        ),
        ("Open a task (overview painted), median / max", lat(last["open_task_ms"], extra=False), "≤ 50 ms"),
        ("... of which the session's first open (builds the task view once)", f"{last['open_task_ms'][0]:.1f} ms", "-"),
        ("Back to the catalog, median / max", lat(last["back_ms"], extra=False), "≤ 50 ms"),
        ("Forward to the task again (overview painted), median / max", lat(last["forward_ms"], extra=False), "≤ 50 ms"),
        (
            "Peak memory (max RSS of the workbench process)",
            f"{max(r['max_rss_mb'] for r in results):.0f} MB",
            "≤ 200 MB",
        ),
    ]
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
        f"{f'{tasks}-task ' if tasks else ''}demo (`okstra_core.demo.generate(path, tasks=N)`), headless, "
        f"on {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}. Start times are medians of fresh processes "
        "(interpreter start included) until the first composed frame showing the catalog rows, the minimal app "
        "and the workbench alternating, with the workbench's modules byte-compiled as an install leaves them. "
        "A latency is "
        "measured inside the app with `time.perf_counter`: from dispatching the key (as Pilot does, through the "
        "driver) to the first frame the screen composes in which the expected state holds (cursor moved, filtered "
        "rows shown, task overview shown); the app goes idle between two measured keys. The ratio in brackets "
        "compares with the same measurement on a minimal Textual app in the same run; terminal output itself is "
        "not included (headless).\n\n"
        f"{table}\n"
    )
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Performance\n"
    start = text.find(SECTION)
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + body
    else:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + body + (text[end + 1 :] if end != -1 else "")
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
