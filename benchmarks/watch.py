"""Staying in the loop on a large demo: how fast a new decision reaches `okstra inbox --watch` and the
workbench's toast, what watching costs while nothing happens, and the catalog's first paint with unread marks.

    python benchmarks/watch.py [--tasks 10000] [--root PROJECT] [--trials 20] [--idle 30] [--write-doc]

* Latency: another process flips a task's ``workflow.awaitingApproval`` (a manifest published by a rename,
  as okstra writes it), alternately on and off, so each trial starts or ends one approval decision; the
  latency is the time from the rename to the line on ``--watch --json``'s output, and to the workbench's
  ``announce`` (the toast), headless. 20 trials each; median and p95.
* Idle CPU: the process's CPU time over an idle window (nothing written), as a share of one core.
* First paint: the workbench's first painted catalog (as benchmarks/tui.py measures it) on the first launch
  (no seen state) and with a seen state in which 100 tasks changed, alternated, median of rounds.

This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
DOC = HERE.parent.parent / "docs" / "performance.md"
SECTION = "## Staying in the loop"
BIN = Path(sys.executable).parent


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def manifests(root: Path, count: int) -> list[Path]:
    found = sorted((root / ".okstra/tasks").glob("*/*/task-manifest.json"))
    return found[-count:]


def flip(path: Path, on: bool) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    value.setdefault("workflow", {})["awaitingApproval"] = on
    tmp = path.with_suffix(".bench")
    tmp.write_text(json.dumps(value), encoding="utf-8")
    os.replace(tmp, path)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def watch_latency(root: Path, trials: int, idle: float) -> dict[str, float]:
    proc = subprocess.Popen(
        [str(BIN / "okstra"), "inbox", str(root), "--watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout or []], daemon=True).start()
    ready = threading.Event()
    mode: list[str] = []

    def stderr() -> None:
        for line in proc.stderr or []:
            if "watching" in line:
                mode.append(line.strip())
                ready.set()

    threading.Thread(target=stderr, daemon=True).start()
    lines.get(timeout=600)  # the snapshot
    ready.wait(timeout=600)
    time.sleep(1.0)
    target = manifests(root, 1)[0]
    on = not json.loads(target.read_text(encoding="utf-8")).get("workflow", {}).get("awaitingApproval", False)
    out: list[float] = []
    for _ in range(trials):
        start = time.perf_counter()
        flip(target, on)
        lines.get(timeout=120)
        out.append(time.perf_counter() - start)
        on = not on
        time.sleep(0.5)
    before, wall = cpu_seconds(proc.pid), time.perf_counter()
    time.sleep(idle)
    share = (cpu_seconds(proc.pid) - before) / (time.perf_counter() - wall)
    proc.terminate()
    proc.wait(timeout=60)
    return {
        "watch_p50_s": statistics.median(out),
        "watch_p95_s": p(out, 0.95),
        "watch_idle_cpu": share,
        "watch_mode": mode[0] if mode else "?",
    }


#: The workbench, headless, with toasts on: the time from a rename to ``announce``, then idle CPU.
TOAST = r"""
import asyncio, json, os, sys, time, resource
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from watch import flip, manifests
from okstra_core.store import Project
from okstra_core.workflows import pulse
from okstra_tui.app import OkstraApp

root, trials, idle = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])

#: Every pulse the notices' watcher reads, latest last: the harness waits for one without the approval.
pulses = []
for name in ("read_pulse", "refresh_pulse"):
    def keep(*args, _read=getattr(pulse, name)):
        found = _read(*args)
        pulses.append(found)
        return found
    setattr(pulse, name, keep)

async def main():
    app = OkstraApp(Project(root), notify="toast")
    seen = []
    original = app.announce
    def announce(found):
        seen.append(time.perf_counter())
        original(found)
    app.announce = announce
    async with app.run_test(size=(120, 40)) as pilot:
        while app._notices is None or app._notices._watcher is None:
            await pilot.pause(0.1)
        await pilot.pause(3.0)  # the first reading of the pulse
        target = manifests(root, 2)[0]
        out = []
        task_root = target.parent

        def waiting() -> bool:
            if not pulses:
                return True  # the first reading is still under way
            return any(d.task_root == task_root and d.kind == "approval" for d in pulses[-1].decisions.values())

        for _ in range(trials):
            flip(target, False)  # the approval ends: no toast
            while waiting():  # until the notices' reading has taken it in
                await pilot.pause(0.05)
            count = len(seen)
            start = time.perf_counter()
            flip(target, True)  # it starts waiting again: a toast
            while len(seen) == count:
                await pilot.pause(0.01)
            out.append(seen[-1] - start)
            await pilot.pause(0.5)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        before, wall = usage.ru_utime + usage.ru_stime, time.perf_counter()
        await pilot.pause(idle)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        share = (usage.ru_utime + usage.ru_stime - before) / (time.perf_counter() - wall)
    print(json.dumps({"toast": out, "idle_cpu": share}))

asyncio.run(main())
"""


def toast_latency(root: Path, trials: int, idle: float) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", TOAST, str(root), str(trials), str(idle), str(HERE.parent)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"toast child failed: {proc.stderr[-2000:]}")
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    values = found["toast"]
    return {"toast_p50_s": statistics.median(values), "toast_p95_s": p(values, 0.95), "tui_idle_cpu": found["idle_cpu"]}


def first_paints(root: Path, rounds: int) -> dict[str, float]:
    import tui  # benchmarks/tui.py: the workbench until its first painted catalog

    from okstra_tui.data import seen

    fresh, marked = [], []
    for _ in range(rounds):
        for with_state in (False, True):
            state = tempfile.mkdtemp(prefix="okstra-bench-state-")
            os.environ["OKSTRA_STATE_DIR"] = state
            if with_state:
                roots = sorted(m.parent for m in (root / ".okstra/tasks").glob("*/*/task-manifest.json"))
                sigs = seen.signatures(root, roots)
                stale = set(list(sigs)[:: max(len(sigs) // 100, 1)][:100])
                seen.mark_seen(root, {k: ("before" if k in stale else v) for k, v in sigs.items()}, replace_all=True)
            out = json.loads(tui.run_child(tui.WORKBENCH_START, str(root), "0"))
            (marked if with_state else fresh).append(out["first_paint_s"])
    return {
        "paint_first_launch_s": statistics.median(fresh),
        "paint_with_unread_s": statistics.median(marked),
        "paint_ratio": statistics.median(marked) / statistics.median(fresh),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--root", type=Path, help="an existing demo project (else one is generated)")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of idle CPU measurement")
    parser.add_argument("--rounds", type=int, default=5, help="first-paint rounds per contender")
    parser.add_argument(
        "--modes",
        default="auto",
        help="ways of watching to measure, comma-separated (auto, poll, events: OKSTRA_WATCH for the children)",
    )
    parser.add_argument("--write-doc", action="store_true")
    args = parser.parse_args()
    root = args.root
    if root is None:
        root = Path(tempfile.mkdtemp(prefix="okstra-bench-")) / "project"
        subprocess.run([str(BIN / "okstra"), "demo", str(root), "--tasks", str(args.tasks), "--quiet"], check=True)
    results: dict[str, object] = {"tasks": len(manifests(root, 10**9)), "modes": {}}
    for mode in args.modes.split(","):
        os.environ["OKSTRA_WATCH"] = mode
        measured: dict[str, object] = {}
        measured.update(watch_latency(root, args.trials, args.idle))
        measured.update(toast_latency(root, args.trials, args.idle))
        results["modes"][mode] = measured  # type: ignore[index]
        print(json.dumps({mode: measured}), flush=True)
    os.environ.pop("OKSTRA_WATCH", None)
    results.update(first_paints(root, args.rounds))
    print(json.dumps(results, indent=2))
    if args.write_doc:
        write_doc(results)
    return 0


def write_doc(r: dict[str, object]) -> None:
    load = os.getloadavg()[0]
    rows = []
    idle = []
    modes = r["modes"]
    assert isinstance(modes, dict)
    for mode, m in modes.items():
        how = {"poll": "polling", "events": "file events"}.get(mode, mode)
        rows.append(
            f"| new decision to `--watch --json` line ({how}) | {m['watch_p50_s']:.3f} s | {m['watch_p95_s']:.3f} s |"
        )
        rows.append(
            f"| new decision to the workbench's toast ({how}) | {m['toast_p50_s']:.3f} s | {m['toast_p95_s']:.3f} s |"
        )
        idle.append(f"| `okstra inbox --watch` ({how}) | {100 * float(m['watch_idle_cpu']):.2f} % |")
        idle.append(f"| workbench, catalog open, toasts on ({how}) | {100 * float(m['tui_idle_cpu']):.2f} % |")
    newline = "\n"
    table = f"""{SECTION}

`benchmarks/watch.py` on the {r["tasks"]:,}-task demo (load average {load:.1f} when it ended). A new
decision is one approval flipped by another process, as okstra publishes a manifest (a rename); the
latency is from the rename to the line on `--watch --json` and to the workbench's toast. Each way of
watching was measured in the same run.

| measure | median | p95 |
|---|---|---|
{newline.join(rows)}

| idle, nothing written | share of one core |
|---|---|
{newline.join(idle)}

| first painted catalog | median | ratio |
|---|---|---|
| first launch (no seen state) | {r["paint_first_launch_s"]:.3f} s | 1.00x |
| seen state with 100 changed tasks | {r["paint_with_unread_s"]:.3f} s | {r["paint_ratio"]:.2f}x (target ≤ 1.1x) |
"""
    text = DOC.read_text(encoding="utf-8")
    if SECTION in text:
        head, _, rest = text.partition(SECTION)
        tail = rest.split("\n## ", 1)
        text = head + table + ("\n## " + tail[1] if len(tail) > 1 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + table
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
