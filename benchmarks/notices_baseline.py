"""The notices' baseline check run in a child of its own or in the notices' process, in one run.

    python benchmarks/notices_baseline.py --root PROJECT [--rounds 2]

Each round runs, in turn, a fresh process for each way, as the notices' child starts where the check cache holds
this checker's records: the baseline check (``CheckBaseline``: in a child process, or ``CheckBaseline.run_here``),
then the first reading of the pulse through the store index, then a give-back. Sampled every 0.1 s: the largest
resident size of the process and its children together while the check runs (the notices' share of the
workbench's process tree at its largest), and the process's resident size once the pulse is read (what the
notices' child holds while the workbench is open). Run it on a project whose check cache and store index are
warm (the first round warms them; its figures are left out when ``--rounds`` is more than one). The medians are
reported with "here" over "child". This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ONE = r"""
import json, os, sys, threading, time
from pathlib import Path
from okstra_core.malloc import fewer_arenas
fewer_arenas()
way, root = sys.argv[1], Path(sys.argv[2])
import okstra_tui.notices as notices

def rss(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0

def children(pid):
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                for child in fh.read().split():
                    out += [int(child), *children(int(child))]
    except OSError:
        pass
    return out

largest, done = [0], threading.Event()

def sample():
    while not done.is_set():
        largest[0] = max(largest[0], rss(os.getpid()) + sum(map(rss, children(os.getpid()))))
        time.sleep(0.1)

threading.Thread(target=sample, daemon=True).start()
started = time.monotonic()
if way == "child":
    baseline = notices.CheckBaseline(root)
    baseline.wait_ready()
else:
    baseline = notices.CheckBaseline.run_here(root)
checked = time.monotonic() - started
done.set()
from okstra_core.malloc import give_back
from okstra_core.workflows.pulse import read_pulse
from okstra_tui.data.catalog import through_index
pulse = through_index(root, None, read_pulse)[0]
give_back()
print(json.dumps({"errors": sum((baseline.errors or {}).values()), "check_s": checked,
                  "peak_mb": largest[0], "idle_mb": rss(os.getpid())}))
"""

WAYS = ("child", "here")


def one(way: str, root: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", ONE, way, str(root)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {way: [] for way in WAYS}
    for number in range(args.rounds):
        for way in WAYS:
            found = one(way, args.root)
            print(f"round {number + 1} {way}: {found}", flush=True)
            if number > 0 or args.rounds == 1:
                runs[way].append(found)
    errors = {way: {r["errors"] for r in runs[way]} for way in WAYS}
    print(f"errors found: {errors} (each way must find the same)")
    print("| measure | child | here | here / child |")
    print("|---|---:|---:|---:|")
    for key, label in (
        ("peak_mb", "largest, process and children (MB)"),
        ("idle_mb", "after the pulse (MB)"),
        ("check_s", "baseline check (s)"),
    ):
        child, here = (statistics.median(r[key] for r in runs[way]) for way in WAYS)
        print(f"| {label} | {child:.1f} | {here:.1f} | {here / child:.3f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
