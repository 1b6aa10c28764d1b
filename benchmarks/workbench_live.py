"""The workbench kept live: when its count of what waits appears, what it costs while nothing happens, and how
much memory its whole process tree holds.

    python benchmarks/workbench_live.py [--tasks 2000] [--root PROJECT] [--idle 20] [--write-doc]
                                        [--warm N] [--scratch DIR]

Each measurement runs the workbench headless in a fresh process (``App.run_test``) on the same store, once cold
(no store index, no listing cache: a new cache folder) and once warm (the same cache folder again):

* count: seconds from the headless app's first pause (its first frame composed) to the catalog's count of what
  waits being known (0 when the first frame shows it), beside a full ``okstra check --no-cache`` of the store (the
  baseline: "within 0.5x a full check's time");
* idle CPU: the CPU time of the workbench and every child it started (the notices' child, the baseline check)
  over an idle window once everything settled, as a share of one core, beside a minimal Textual app's over the
  same window (the baseline);
* memory: the largest resident size of the process tree seen during the run (sampled every 0.2 s), as the sum of
  its processes' resident sizes and as the sum of their proportional sizes (PSS: a page several of them map, a
  forked worker's pages still shared with its parent or a shared library's, is counted once in all, where the
  resident sizes count it in each); what each process held at the sample where the tree's sum was largest (which
  of them ran together), and how many processes did each job (a second counting child is a second whole count).

With ``--warm N``, N warm runs, each one's tree said (one run says little: when the workbench's own peak meets
the notices' baseline check varies from run to run). With ``--scratch DIR``, the scratch folder an earlier run
printed, only warm runs on the caches it left.

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
import threading
import time
from pathlib import Path
from typing import Any

from _timing import write_section

HERE = Path(__file__).resolve()
DOC = HERE.parent.parent / "docs" / "performance.md"
BIN = Path(sys.executable).parent
SECTION = "## Workbench kept live"

PROBE = r"""
import asyncio, json, os, sys, time
from pathlib import Path

root, idle = Path(sys.argv[1]), float(sys.argv[2])

from okstra_core.malloc import fewer_arenas

fewer_arenas()  # as okstra-tui does before its app starts

async def main():
    from okstra_core.store import Project
    from okstra_tui.app import OkstraApp
    from okstra_tui.screens.catalog import CatalogScreen

    app = OkstraApp(Project(root), notify="toast")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        painted = time.perf_counter()
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        first = "waiting for you" in screen.query_one("#catalog-summary").content.plain
        while screen.waiting is None and not first:
            await pilot.pause(0.02)
        counted = painted if first else time.perf_counter()
        while app._notices is None or not (app._notices.ready and app._notices.checks_ready):
            await pilot.pause(0.1)
        await pilot.pause(2.0)
        print(json.dumps({"event": "idle"}), flush=True)
        await pilot.pause(idle)
        print(json.dumps({"count": counted - painted}), flush=True)

asyncio.run(main())
"""


def minimal_app(idle_arg: int, last: str) -> str:
    """The baseline: a minimal Textual app, headless, idle for ``sys.argv[idle_arg]`` seconds once it has settled
    (it prints ``{"event": "idle"}`` then), then printing *last* (a JSON line the caller reads as its result)."""
    return f"""
import asyncio, json, sys
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("hello")

async def main():
    async with Minimal().run_test(size=(120, 40)) as pilot:
        await pilot.pause(2.0)
        print(json.dumps({{"event": "idle"}}), flush=True)
        await pilot.pause(float(sys.argv[{idle_arg}]))
        print({last!r}, flush=True)

asyncio.run(main())
"""


BASELINE = minimal_app(2, '{"count": 0}')

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree(pid: int) -> list[int]:
    """*pid* and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        here = todo.pop()
        out.append(here)
        todo.extend(children.get(here, []))
    return out


def _cpu_and_rss(pids: list[int]) -> tuple[float, int]:
    cpu, rss = 0.0, 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        cpu += (int(fields[11]) + int(fields[12])) / TICKS
        rss += int(fields[21]) * PAGE
    return cpu, rss


def _pss(pids: list[int]) -> int:
    """The proportional set size of *pids* in bytes: each page counted once however many of them map it (a page a
    forked worker shares with its parent, a shared library's text), where their resident sizes count it in each."""
    total = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1]) * 1024
                break
    return total


def _job(pid: int) -> str:
    """What a child of the workbench does: its ``okstra_tui.child`` job, else its command's name."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    words = [a.decode(errors="replace") for a in argv if a]
    if "okstra_tui.child" in words:
        return "child " + words[words.index("okstra_tui.child") + 1]
    return Path(words[0]).name if words else "?"


def run(code: str, root: Path, idle: float, env: dict[str, str]) -> dict[str, Any]:
    """One headless run of *code*: its count time, the tree's idle CPU share and its largest resident size."""
    # Run from "/": ``python -c`` and ``-m`` put the working folder first on the path, so a checkout there would
    # be imported before the code ``PYTHONPATH`` names (another revision's worktree, in an A/B).
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(root), str(idle)], stdout=subprocess.PIPE, text=True, env=env, cwd="/"
    )
    peak = peak_pss = 0
    parts: dict[str, int] = {}
    at_peak: dict[str, int] = {}  # what each process held at the sample where the tree's sum peaked
    started: dict[str, set[int]] = {}  # the processes seen doing each job
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_pss, at_peak
        while not done.is_set():
            pids = _tree(proc.pid)
            now: dict[str, int] = {}
            for pid in pids:
                name = "workbench" if pid == proc.pid else _job(pid)
                rss = _cpu_and_rss([pid])[1]
                parts[name] = max(parts.get(name, 0), rss)
                now[name] = now.get(name, 0) + rss
                started.setdefault(name, set()).add(pid)
            if sum(now.values()) > peak:
                peak, at_peak = sum(now.values()), now
            peak_pss = max(peak_pss, _pss(pids))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert proc.stdout is not None
    share = 0.0
    count = 0.0
    for line in proc.stdout:
        value = json.loads(line)
        if value.get("event") == "idle":
            pids = _tree(proc.pid)
            before, wall = _cpu_and_rss(pids)[0], time.perf_counter()
        elif "count" in value:
            share = (_cpu_and_rss(_tree(proc.pid))[0] - before) / (time.perf_counter() - wall)
            count = float(value["count"])
    proc.wait()
    done.set()
    sampler.join()
    return {
        "count": count,
        "idle": share,
        "peak_mb": peak / 1e6,
        "pss_mb": peak_pss / 1e6,
        "parts": {k: v / 1e6 for k, v in parts.items()},
        "at_peak": {k: v / 1e6 for k, v in at_peak.items()},
        "started": {k: len(v) for k, v in started.items()},
    }


def _say_warm(number: int, found: dict[str, Any]) -> None:
    at_peak = ", ".join(f"{name} {mb:.0f}" for name, mb in sorted(found["at_peak"].items(), key=lambda i: -i[1]))
    print(
        f"warm run {number}: tree {found['peak_mb']:.0f} MB (PSS {found['pss_mb']:.0f} MB), at its largest "
        f"{at_peak} MB; count {found['count']:.2f} s after the first frame; idle {found['idle']:.2%} of a core",
        flush=True,
    )


def _warm_only(root: Path, idle: float, env: dict[str, str], runs: int) -> int:
    """*runs* warm runs on caches an earlier run left, each one's tree said, and the median of their largest."""
    found = [run(PROBE, root, idle, env) for _ in range(runs)]
    for number, one in enumerate(found, 1):
        _say_warm(number, one)
    peaks = sorted(round(one["peak_mb"]) for one in found)
    print(f"largest tree, median of {runs} warm runs: {statistics.median(peaks):.0f} MB (each: {peaks})")
    return 0


def full_check(root: Path) -> float:
    started = time.perf_counter()
    subprocess.run([str(BIN / "okstra"), "check", str(root), "--no-cache", "--quiet"], capture_output=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--root", type=Path, help="an existing demo project (else one is generated)")
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of the idle window")
    parser.add_argument("--write-doc", action="store_true")
    parser.add_argument(
        "--no-check", action="store_true", help="skip the full check (its time is the count's baseline)"
    )
    parser.add_argument(
        "--scratch", type=Path, help="the scratch folder an earlier run printed (its caches warm): warm runs only"
    )
    parser.add_argument("--warm", type=int, default=1, help="warm runs, each one's tree said (default 1)")
    args = parser.parse_args()
    root = args.root
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="okstra-live-"))
    print(f"scratch folder (caches, state): {scratch}", flush=True)
    if root is None:
        root = scratch / "project"
        subprocess.run([str(BIN / "okstra"), "demo", str(root), "--tasks", str(args.tasks), "--quiet"], check=True)
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(scratch / "cache"),
        "OKSTRA_STATE_DIR": str(scratch / "state"),
        "XDG_CONFIG_HOME": str(scratch / "config"),
    }
    if args.scratch is not None:
        return _warm_only(root, args.idle, env, args.warm)
    check = float("nan") if args.no_check else full_check(root)
    cold = run(PROBE, root, args.idle, env)
    warm = run(PROBE, root, args.idle, env)
    for number in range(1, args.warm):
        _say_warm(number + 1, run(PROBE, root, args.idle, env))
    baseline = run(BASELINE, root, args.idle, env)
    tasks = len(list((root / ".okstra" / "tasks").glob("*/*")))
    rows = [
        ("full `okstra check --no-cache` (baseline)", f"{check:.2f} s", "1.00x"),
        ("count known after the first frame, cold", f"{cold['count']:.2f} s", f"{cold['count'] / check:.2f}x"),
        ("count known after the first frame, warm", f"{warm['count']:.2f} s", f"{warm['count'] / check:.2f}x"),
        ("idle CPU of a minimal Textual app (baseline)", f"{baseline['idle']:.2%} of a core", "1.00x"),
        (
            "idle CPU of the workbench's process tree",
            f"{warm['idle']:.2%} of a core",
            f"{warm['idle'] / baseline['idle']:.2f}x" if baseline["idle"] > 0 else "(baseline idle: 0)",
        ),
        ("largest resident size of the process tree (cold run)", f"{cold['peak_mb']:.0f} MB", ""),
        ("largest resident size of the process tree (warm run)", f"{warm['peak_mb']:.0f} MB", ""),
        ("largest proportional size (PSS) of the process tree (cold run)", f"{cold['pss_mb']:.0f} MB", ""),
        ("largest proportional size (PSS) of the process tree (warm run)", f"{warm['pss_mb']:.0f} MB", ""),
        *(
            (f"largest resident size of its {name} ({which} run)", f"{mb:.0f} MB", "")
            for which, run_ in (("cold", cold), ("warm", warm))
            for name, mb in sorted(run_["parts"].items(), key=lambda item: -item[1])
        ),
        *(
            (
                f"at the tree's largest ({which} run)",
                ", ".join(f"{name} {mb:.0f} MB" for name, mb in sorted(run_["at_peak"].items(), key=lambda i: -i[1])),
                "",
            )
            for which, run_ in (("cold", cold), ("warm", warm))
        ),
        *(
            (
                f"processes of each job ({which} run)",
                ", ".join(f"{n} {k}" for k, n in sorted(run_["started"].items())),
                "",
            )
            for which, run_ in (("cold", cold), ("warm", warm))
        ),
    ]
    lines = [
        f"On a demo of {tasks:,} tasks (`python benchmarks/workbench_live.py --tasks {tasks}`), one run each, "
        f"watchman {'off' if os.environ.get('OKSTRA_WATCHMAN') == 'off' else 'on where installed'}; load average "
        f"{os.getloadavg()[0]:.1f} at the end.",
        "",
        "| measure | value | ratio |",
        "|---|---|---|",
        *(f"| {a} | {b} | {c} |" for a, b, c in rows),
    ]
    print("\n".join(lines))
    if args.write_doc:
        write_section(DOC, SECTION, "\n".join([SECTION, "", *lines]) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
