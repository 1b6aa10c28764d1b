"""Home over many projects: its first frame, its counts, what it costs while nothing happens, and how fast a
change in any project reaches ``okstra inbox --all --watch``.

    python benchmarks/home_many.py [--projects 20] [--tasks 500] [--idle 30] [--trials 20] [--write-doc]

The projects are copies of one demo of ``--tasks`` tasks (``okstra_core.demo.generate``, without its manager
home), registered by one manager of one manager home under the ids ``p01``, ``p02``, ...; they are written
once and kept under the user's cache folder (``$XDG_CACHE_HOME/okstra-bench/``), keyed by the sizes and the
demo generator's source. Every run uses a new scratch cache, state and config folder for the workbench.

In one run:

* first frame: from before the interpreter starts to the first frame showing Home's project rows
  (``okstra-tui --all``), beside the first frame showing the single-project catalog's task rows on ``p01``
  (the baseline), headless; cold (no store index, no listing cache) then warm, the warm pair ``--rounds``
  times in turn, median;
* counts: at a warm start, from before the interpreter starts to the first frame in which every project's
  count on Home equals what ``okstra inbox --all --json --no-cache`` (run afresh just before) counts; each warm
  Home run waits for it, so the median of those runs and the idle run's is given, with its range;
* idle CPU: the CPU time of the workbench and every process it started, over ``--idle`` seconds once it has
  settled (every project watched, the notices' first reading and check done, Home's reads done), as a share of
  one core, beside a minimal Textual app's (the baseline);
* memory: the largest resident size of the whole process tree seen during the Home runs (sampled every 0.2 s),
  also as the sum of its processes' proportional sizes (PSS: a page several of them map counted once);
* propagation: ``okstra inbox --all --watch --json`` runs while another process makes an approval wait in a
  random project, as an agent writes a manifest (a new file renamed over the old one); the time from the
  rename to the line naming it, ``--trials`` times, median and p95. Each trial's manifest is put back
  afterwards (and that line awaited too), so the kept projects stay as written.

``--first-frame home|catalog`` runs one warm first frame and exits (for timing whole processes from outside).
This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))

from _timing import write_section  # noqa: E402
from workbench_live import _cpu_and_rss, _job, _pss, _tree, minimal_app  # noqa: E402

CHECKOUT = HERE.parent.parent
DOC = CHECKOUT / "docs" / "performance.md"
BIN = Path(sys.executable).parent
SECTION = "## Home over 20 projects"
MANAGER = "bench"

#: Records, in a headless workbench, the time (since the parent's t0) of the first frame in which each mark holds.
PROBE = r"""
import asyncio, json, sys, time
from pathlib import Path

t0, mode, root, idle = float(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), float(sys.argv[4])
truth = json.loads(sys.argv[5])

from okstra_core.malloc import fewer_arenas
from okstra_core.store import Project
from okstra_tui.app import OkstraApp

fewer_arenas()  # as okstra-tui does before its app starts
app = OkstraApp(Project(root), start_home=mode == "home", notify="toast")
marked, marks = {}, {}
original = app._display

def display(screen, renderable):
    original(screen, renderable)
    if renderable is None:
        return
    for name, predicate in list(marks.items()):
        if predicate():
            marked[name] = time.time() - t0
            del marks[name]

app._display = display

def catalog_rows():
    from okstra_tui.data.catalog import CatalogRow
    from okstra_tui.screens.catalog import CatalogScreen
    s = app.screen
    if not isinstance(s, CatalogScreen):
        return False
    start, end = s.table.visible_range()
    return any(isinstance(r, CatalogRow) for r in s.table.rows[start:end])

def home_screen():
    from okstra_tui.screens.home import HomeScreen
    s = app.screen
    return s if isinstance(s, HomeScreen) else None

def home_rows():
    s = home_screen()
    return s is not None and len(s.data.rows) > 0 and s.query_one("#home-table").row_count > 0

def counts():
    s = home_screen()
    if s is None:
        return {}
    return {r.entry.project_id: r.waiting for r in s.data.rows}

def truthful():
    return home_rows() and counts() == truth

if mode == "home":
    marks.update(first_frame=home_rows)
    if truth:  # else the first frame alone (--first-frame)
        marks.update(counts_true=truthful)
else:
    marks.update(first_frame=catalog_rows)

async def main():
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + 600
        while marks and time.monotonic() < deadline:
            await pilot.pause(0.01)
        if idle > 0:
            # Settled: every other project's store watched (by the feed, or by the follower of the other projects
            # once it has read them), the notices' first reading and check done.
            while mode == "home" and app._feed.watching() < len(truth) - 1 and not (app._others and app._others.ready):
                await pilot.pause(0.1)
            while mode == "home" and app._others is not None and not app._others.ready:
                await pilot.pause(0.1)
            while app._notices is None or not (app._notices.ready and app._notices.checks_ready):
                await pilot.pause(0.1)
            # Home has read every column, and looked again at what the follower's first snapshot may have changed.
            await pilot.pause(0.5)
            while mode == "home" and (
                home_screen() is None
                or home_screen().data.reading_more
                or any(w.group == "view-read" and w.is_running for w in app.workers)
            ):
                await pilot.pause(0.1)
            await pilot.pause(2.0)
            print(json.dumps({"event": "idle"}), flush=True)
            await pilot.pause(idle)
        print(json.dumps({"marked": marked, "missing": sorted(marks), "counts": counts()}), flush=True)

asyncio.run(main())
"""

BASELINE = minimal_app(4, '{"marked": {}, "missing": [], "counts": {}}')


def stores(projects: int, tasks: int) -> tuple[Path, list[Path]]:
    """The manager home and the project roots, written once under the user's cache folder."""
    digest = hashlib.sha256()
    for path in sorted((CHECKOUT / "okstra_core" / "demo").glob("*.py")):
        if path.name != "projects.py":  # the demo of three projects: not what is written here
            digest.update(path.read_bytes())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "okstra-bench"
    base = cache / f"home-many-{projects}x{tasks}-{digest.hexdigest()[:12]}"
    home, roots = base / "okstra-home", [base / f"p{n:02d}" for n in range(1, projects + 1)]
    if (base / "complete").exists():
        return home, roots
    from okstra_core.demo import generate
    from okstra_core.workflows import manager

    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    started = time.perf_counter()
    generate(roots[0], tasks=tasks, manager=False)
    for root in roots[1:]:
        shutil.copytree(roots[0], root, symlinks=True)
    manager.create_manager(home, MANAGER, "Benchmark")
    for n, root in enumerate(roots, 1):
        manager.register_project(home, MANAGER, f"p{n:02d}", root)
    (base / "complete").write_text("", encoding="utf-8")
    print(f"wrote {projects} projects of {tasks} tasks in {time.perf_counter() - started:.0f} s under {base}")
    return home, roots


def truth(env: dict[str, str]) -> dict[str, int]:
    """Each project's count of what waits, as ``okstra inbox --all --json --no-cache`` says it afresh."""
    proc = subprocess.run(
        [str(BIN / "okstra"), "inbox", "--all", "--json", "--no-cache"], capture_output=True, text=True, env=env
    )
    doc = json.loads(proc.stdout)
    out = {p["project"]: 0 for p in doc["projects"]}
    for item in doc["items"]:
        out[item["project"]] += 1
    return out


def run(code: str, mode: str, root: Path, idle: float, env: dict[str, str], expect: dict[str, int]) -> dict:
    """One headless run: its marks, and the tree's idle CPU share and largest resident size."""
    t0 = time.time()
    argv = [sys.executable, "-c", code, repr(t0), mode, str(root), str(idle), json.dumps(expect)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env, cwd=CHECKOUT)
    peak = peak_pss = 0
    #: Each process's resident size at the moment the tree was largest, by what it does.
    at_peak: dict[str, int] = {}
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, at_peak, peak_pss
        while not done.is_set():
            pids = _tree(proc.pid)
            peak_pss = max(peak_pss, _pss(pids))
            each = {pid: _cpu_and_rss([pid])[1] for pid in pids}
            if sum(each.values()) > peak:
                peak = sum(each.values())
                at_peak = {}
                for pid, rss in each.items():
                    name = "workbench" if pid == proc.pid else _job(pid)
                    at_peak[name] = at_peak.get(name, 0) + rss
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert proc.stdout is not None
    out: dict = {"idle": 0.0, "idle_by": {}}
    before: dict[str, float] = {}
    wall = 0.0

    def cpu_by_job() -> dict[str, float]:
        got: dict[str, float] = {}
        for pid in _tree(proc.pid):
            name = "workbench" if pid == proc.pid else _job(pid)
            got[name] = got.get(name, 0.0) + _cpu_and_rss([pid])[0]
        return got

    for line in proc.stdout:
        value = json.loads(line)
        if value.get("event") == "idle":
            before, wall = cpu_by_job(), time.perf_counter()
        elif "marked" in value:
            if idle > 0:
                spent, seconds = cpu_by_job(), time.perf_counter() - wall
                out["idle_by"] = {k: (v - before.get(k, 0.0)) / seconds for k, v in spent.items()}
                out["idle"] = sum(out["idle_by"].values())
            out.update(value)
    proc.wait()
    done.set()
    sampler.join()
    if proc.returncode != 0 or out.get("missing"):
        raise SystemExit(f"{mode} run did not finish (exit {proc.returncode}): {out}")
    out["peak_mb"] = peak / 1e6
    out["pss_mb"] = peak_pss / 1e6
    out["at_peak_mb"] = {k: v / 1e6 for k, v in sorted(at_peak.items(), key=lambda kv: -kv[1])}
    return out


def flip(path: Path, on: bool) -> bytes:
    """Set *path*'s ``workflow.awaitingApproval`` as an agent writes a manifest; its bytes before."""
    old = path.read_bytes()
    value = json.loads(old)
    value.setdefault("workflow", {})["awaitingApproval"] = on
    tmp = path.with_name(path.name + ".bench")
    tmp.write_text(json.dumps(value), encoding="utf-8")
    os.replace(tmp, path)
    return old


def put_back(path: Path, old: bytes) -> None:
    tmp = path.with_name(path.name + ".bench")
    tmp.write_bytes(old)
    os.replace(tmp, path)


def propagation(roots: list[Path], trials: int, env: dict[str, str]) -> dict[str, object]:
    """Trials of a new approval in a random project, timed to its line on ``okstra inbox --all --watch --json``."""
    proc = subprocess.Popen(
        [str(BIN / "okstra"), "inbox", "--all", "--watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[dict] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(json.loads(x)) for x in proc.stdout or []], daemon=True).start()
    ready = threading.Event()
    said: list[str] = []

    def stderr() -> None:
        for line in proc.stderr or []:
            said.append(line.strip())
            if "watching" in line:
                ready.set()

    threading.Thread(target=stderr, daemon=True).start()
    snapshot = lines.get(timeout=600)
    ready.wait(timeout=600)
    time.sleep(1.0)
    waiting = {(i["project"], i["task"]) for i in snapshot["items"] if i["kind"] == "approval"}
    rng = random.Random(20)
    ids = {root: f"p{n:02d}" for n, root in enumerate(roots, 1)}
    out: list[float] = []
    for _ in range(trials):
        root = rng.choice(roots)
        manifest, key = _quiet_task(root, ids[root], waiting, rng)
        start = time.perf_counter()
        old = flip(manifest, True)
        _until(lines, ids[root], key, "added")
        out.append(time.perf_counter() - start)
        put_back(manifest, old)
        _until(lines, ids[root], key, "removed")
    proc.terminate()
    proc.wait(timeout=60)
    return {"p50": statistics.median(out), "p95": p95(out), "said": next((s for s in said if "watching" in s), "?")}


def _quiet_task(root: Path, project: str, waiting: set[tuple[str, str]], rng: random.Random) -> tuple[Path, str]:
    """A manifest of *root* whose task waits for no approval, and the task's key."""
    found = sorted((root / ".okstra" / "tasks").glob("*/*/task-manifest.json"))
    while True:
        path = rng.choice(found)
        doc = json.loads(path.read_text(encoding="utf-8"))
        key = doc.get("taskKey") or ""
        if key and (project, key) not in waiting and not (doc.get("workflow") or {}).get("awaitingApproval"):
            return path, key


def _until(lines: queue.Queue[dict], project: str, task: str, event: str) -> None:
    while True:
        line = lines.get(timeout=120)
        item = line.get("item") or {}
        if line.get("event") == event and item.get("project") == project and item.get("task") == task:
            return


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def environment(scratch: Path, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "OKSTRA_HOME": str(home),
        "XDG_CACHE_HOME": str(scratch / "cache"),
        "OKSTRA_STATE_DIR": str(scratch / "state"),
        "XDG_CONFIG_HOME": str(scratch / "config"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of the idle window")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5, help="warm first frames of each, in turn")
    parser.add_argument("--first-frame", choices=("home", "catalog"), help="one warm first frame, then exit")
    parser.add_argument("--write-doc", action="store_true")
    args = parser.parse_args()
    home, roots = stores(args.projects, args.tasks)
    if args.first_frame:
        return first_frame_only(args.first_frame, home, roots[0])
    scratch = Path(tempfile.mkdtemp(prefix="okstra-home-many-"))
    env = environment(scratch, home)
    load = [os.getloadavg()]
    expect = truth(env)
    cold_catalog = run(PROBE, "catalog", roots[0], 0, env, expect)
    cold_home = run(PROBE, "home", roots[0], 0, env, expect)
    warm: dict[str, list[float]] = {"home": [], "catalog": [], "counts": []}
    for _ in range(args.rounds):
        for mode in ("catalog", "home"):
            marked = run(PROBE, mode, roots[0], 0, env, expect)["marked"]
            warm[mode].append(marked["first_frame"])
            if "counts_true" in marked:  # each warm Home run also waits for every count to be truthful
                warm["counts"].append(marked["counts_true"])
    expect = truth(env)
    live = run(PROBE, "home", roots[0], args.idle, env, expect)
    baseline = run(BASELINE, "baseline", roots[0], args.idle, env, {})
    load.append(os.getloadavg())
    watch = propagation(roots, args.trials, env)
    load.append(os.getloadavg())
    shutil.rmtree(scratch, ignore_errors=True)
    text = report(args, cold_catalog, cold_home, warm, live, baseline, watch, load, sum(expect.values()))
    print(text)
    if args.write_doc:
        write_section(DOC, SECTION, f"{SECTION}\n\n{text}\n")
    return 0


def first_frame_only(mode: str, home: Path, root: Path) -> int:
    """One warm first frame of *mode* in a scratch folder warmed first (for timing from outside)."""
    scratch = Path(os.environ.get("OKSTRA_BENCH_SCRATCH") or tempfile.mkdtemp(prefix="okstra-home-many-"))
    env = environment(scratch, home)
    if not (scratch / "warm").exists():
        expect = truth(env)
        for each in ("catalog", "home"):
            run(PROBE, each, root, 0, env, expect)
        (scratch / "warm").write_text("", encoding="utf-8")
    run(PROBE, mode, root, 0, env, {})
    return 0


def report(args, cold_catalog, cold_home, warm, live, baseline, watch, load, waiting) -> str:  # type: ignore[no-untyped-def]
    catalog, home = statistics.median(warm["catalog"]), statistics.median(warm["home"])
    counted = live["marked"]["counts_true"]
    counts = sorted([*warm["counts"], counted])
    rows = [
        ("catalog's first frame on one project, cold (baseline)", f"{cold_catalog['marked']['first_frame']:.2f} s", ""),
        (
            "Home's first frame, cold",
            f"{cold_home['marked']['first_frame']:.2f} s",
            f"{cold_home['marked']['first_frame'] / cold_catalog['marked']['first_frame']:.2f}x",
        ),
        ("catalog's first frame on one project, warm (baseline)", f"{catalog:.2f} s", "1.00x"),
        ("Home's first frame, warm (target ≤1.2x)", f"{home:.2f} s", f"{home / catalog:.2f}x"),
        (
            f"every count on Home truthful, warm, from launch, median of {len(counts)} starts (target ≤2 s)",
            f"{statistics.median(counts):.2f} s ({counts[0]:.2f} s to {counts[-1]:.2f} s)",
            f"{statistics.median(counts) / catalog:.2f}x",
        ),
        (
            "the same in the idle run, after Home's first frame",
            f"{counted - live['marked']['first_frame']:.2f} s",
            "",
        ),
        ("idle CPU of a minimal Textual app (baseline)", f"{baseline['idle']:.2%} of a core", "1.00x"),
        (
            "idle CPU of the workbench's tree, every project watched (target ≤1%)",
            f"{live['idle']:.2%} of a core",
            f"{live['idle'] / baseline['idle']:.2f}x" if baseline["idle"] > 0 else "(baseline idle: 0)",
        ),
        ("largest resident size of the process tree, cold (target ≤300 MB)", f"{cold_home['peak_mb']:.0f} MB", ""),
        ("largest resident size of the process tree, warm", f"{live['peak_mb']:.0f} MB", ""),
        ("largest proportional size (PSS) of the process tree, cold", f"{cold_home['pss_mb']:.0f} MB", ""),
        ("largest proportional size (PSS) of the process tree, warm", f"{live['pss_mb']:.0f} MB", ""),
        ("a new decision reaching `inbox --all --watch`, p50", f"{watch['p50']:.2f} s", ""),
        ("a new decision reaching `inbox --all --watch`, p95 (target ≤2 s)", f"{watch['p95']:.2f} s", ""),
    ]
    loads = ", ".join(f"{a:.2f}" for a, _, _ in load)
    parts = ", ".join(f"{name} {mb:.0f} MB" for name, mb in live["at_peak_mb"].items())
    idle_parts = ", ".join(
        f"{name} {share:.2%}" for name, share in sorted(live["idle_by"].items(), key=lambda kv: -kv[1])
    )
    from okstra_core import watchman

    used = "off" if watchman.setting() == "off" else ("on" if watchman.installed() else "not installed")
    return "\n".join(
        [
            f"{args.projects} projects of {args.tasks} tasks each, one manager registering them ({waiting} decisions "
            f"waiting in all); warm first frames median of {args.rounds} in turn; {args.trials} propagation trials "
            f"(watching: {watch['said']}). Load average (1 min) at the start, after the workbench runs and at the "
            f"end: {loads} on {os.cpu_count()} cores. Re-run with `python benchmarks/home_many.py --write-doc`.",
            "",
            "| measure | value | ratio |",
            "|---|---|---|",
            *(f"| {a} | {b} | {c} |" for a, b, c in rows),
            "",
            f"Watchman (`OKSTRA_WATCHMAN`): {used}. At the warm tree's largest: {parts}. Idle CPU by process: "
            f"{idle_parts}.",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
