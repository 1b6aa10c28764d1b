"""The workbench's start against another revision of it, on one demo, in one run.

    python benchmarks/start_ab.py --root PROJECT [--against REF] [--rounds 11]

A start is measured as in ``benchmarks/tui.py``: a fresh process, from before
the interpreter starts until the phase columns of the rows in view are painted,
with the catalog's listing cached by an earlier start. *REF* (default
``HEAD``, the last commit, so that the working tree's changes are measured)
is checked out into a temporary worktree; each side keeps its own cache folder
(a listing cached by one revision is not read by the other). Each round starts
the minimal Textual app, this checkout's workbench and *REF*'s, the order
reversed every other round, so that a slow moment of the machine hits all
three alike. Reported: the medians, each workbench's ratio to the minimal app
(ratio of the medians and median of the per-round ratios) and this checkout's
time over *REF*'s, round by round; and when each side had built every row (the
first frame may show only the rows in view).
This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _checkout import CHECKOUT, ab_arguments, other_revision  # noqa: E402
from tui import CACHE_LISTING, MINIMAL, WORKBENCH_START  # noqa: E402


def run(code: str, cwd: Path, *args: str, cache: str | None = None) -> str:
    """Run *code* as a fresh interpreter in *cwd* (whose packages it imports); its last line of output."""
    t0 = time.time()
    env = dict(os.environ)
    if cache is not None:
        env["OKSTRA_CACHE_DIR"] = cache
    proc = subprocess.run(
        [sys.executable, "-c", code, repr(t0), *args], capture_output=True, text=True, cwd=cwd, env=env, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed in {cwd}: {proc.stderr.strip().splitlines()[-1:]}")
    return proc.stdout.strip().splitlines()[-1]


def main() -> int:
    parser = ab_arguments(__doc__, rounds=11)
    args = parser.parse_args()

    from okstra_core import layout

    os.environ["OKSTRA_HOME"] = str(layout.demo_home(args.root))
    with other_revision(args.against, "start_ab") as other, tempfile.TemporaryDirectory(prefix="okstra-ab-") as tmp:
        sides = {"this": CHECKOUT, args.against: other}
        caches = {name: tempfile.mkdtemp(dir=tmp, prefix="cache-") for name in sides}
        for name, tree in sides.items():
            for package in ("okstra_core", "okstra_tui"):
                compileall.compile_dir(tree / package, quiet=1)
            run(CACHE_LISTING, tree, str(args.root), cache=caches[name])
        times: dict[str, list[float]] = {"minimal": [], **{name: [] for name in sides}}
        every_row: dict[str, list[float]] = {name: [] for name in sides}
        for round_ in range(args.rounds):
            order = ["minimal", *sides]
            for name in order if round_ % 2 == 0 else reversed(order):
                if name == "minimal":
                    times[name].append(float(run(MINIMAL, CHECKOUT)))
                else:
                    out = json.loads(run(WORKBENCH_START, sides[name], str(args.root), "0", cache=caches[name]))
                    times[name].append(out["phases_in_view_s"])
                    every_row[name].append(out["all_rows_s"])
    report(times, every_row, args.against)
    return 0


def report(times: dict[str, list[float]], every_row: dict[str, list[float]], against: str) -> None:
    base = times["minimal"]
    for name, values in times.items():
        print(f"{name:>12}: median {statistics.median(values) * 1000:.0f} ms  runs {[round(v * 1000) for v in values]}")
    for name in ("this", against):
        values = times[name]
        by_medians = statistics.median(values) / statistics.median(base)
        per_round = statistics.median(a / b for a, b in zip(values, base, strict=True))
        print(f"{name:>12}: phase columns / minimal app {by_medians:.2f}x (medians), {per_round:.2f}x (per round)")
    for name, values in every_row.items():
        print(f"{name:>12}: every row built, median {statistics.median(values) * 1000:.0f} ms")
    ratios = [a / b for a, b in zip(times["this"], times[against], strict=True)]
    print(f"this / {against}: median per-round ratio {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    sys.exit(main())
