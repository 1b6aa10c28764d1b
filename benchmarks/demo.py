"""Demo generation speed: ``okstra demo DIR --tasks N`` against a file-writing floor, in one run.

The floor writes the very same files (same paths, same bytes) with a plain
loop of ``os.makedirs`` + ``open``/``write``: the least any generator of that
tree could do in Python. The ratio is what matters; absolute times drift with
the machine's load.

    python benchmarks/demo.py [--tasks 10000] [--jobs N] [--repeat N]

With ``--repeat``, each round generates the demo and then writes the floor;
the times are medians over the rounds and the ratio is the median of the
ratios taken within each round.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from okstra_core.demo import generate


def _read_all(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            full = os.path.join(dirpath, name)
            with open(full, "rb") as fh:
                out[os.path.relpath(full, root)] = fh.read()
    return out


def _floor(files: dict[str, bytes], target: Path) -> float:
    started = time.perf_counter()
    made: set[str] = set()
    for rel, data in files.items():
        full = os.path.join(target, rel)
        parent = os.path.dirname(full)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        with open(full, "wb") as fh:
            fh.write(data)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10000)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of (generate, floor); medians are reported")
    args = parser.parse_args()
    gens: list[float] = []
    floors: list[float] = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="okstra-bench-demo-") as tmp:
            base = Path(tmp)
            started = time.perf_counter()
            generate(base / "demo", tasks=args.tasks, jobs=args.jobs)
            gens.append(time.perf_counter() - started)
            files = _read_all(base / "demo")
            floors.append(_floor(files, base / "floor"))
            shutil.rmtree(base / "floor")
    gen, floor = statistics.median(gens), statistics.median(floors)
    ratio = statistics.median(g / f for g, f in zip(gens, floors, strict=True))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"tasks: {args.tasks}, files: {len(files)}, {args.repeat} round(s), load average {os.getloadavg()[0]:.1f}")
    print("| step | seconds | ratio to floor |")
    print("|---|---:|---:|")
    print(f"| floor: plain loop writing the same files | {floor:.1f} | 1.00 |")
    print(f"| okstra demo --tasks {args.tasks} | {gen:.1f} | {ratio:.2f} |")
    print(
        "rounds (s): demo " + ", ".join(f"{g:.1f}" for g in gens) + "; floor " + ", ".join(f"{f:.1f}" for f in floors)
    )


if __name__ == "__main__":
    main()
