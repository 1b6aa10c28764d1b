"""A warm check with the project part's kept record, and with its rules run, in one run of one checkout.

    python benchmarks/check_project_record.py --root PROJECT [--cache-home DIR] [--rounds 3]

Each round runs ``okstra check PROJECT --format json --quiet --jobs 1`` twice in fresh processes of this
checkout's code (``children_ab.run``: watchman off), in turn (the order flips every other round): "kept" reuses
the project part's record (``check_project`` in the store index's database of the cache folder), "rules" runs with
that record removed just before, so the project's rules run as a warm check ran them before the record was kept
(the run keeps it again). Both reuse every task's record. Reported: wall time and peak resident size (``wait4``)
as medians, with "kept" over "rules", and whether both printed the same report. Run it on a project whose check
cache is warm (*DIR*: the ``XDG_CACHE_HOME`` it is under, by default this environment's; the first round is left
out when ``--rounds`` is more than one). This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _checkout import CHECKOUT  # noqa: E402
from children_ab import run  # noqa: E402

CHECK = "import sys\nfrom okstra_core.cli import main\nsys.exit(main(sys.argv[1:]))"
WAYS = ("kept", "rules")


def _forget_project_record(cache: Path, root: Path) -> int:
    """Remove the project part's record of *root* from its store index's database; how many rows went."""
    from okstra_core import store_index

    conn = sqlite3.connect(store_index.index_path(cache, root))
    try:
        with conn:
            return conn.execute("DELETE FROM check_project").rowcount
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--cache-home", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = args.root.resolve()
    home = args.cache_home or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    argv = ["-c", CHECK, "check", str(root), "--format", "json", "--quiet", "--jobs", "1"]
    runs: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
    reports: dict[str, set[bytes]] = {way: set() for way in WAYS}
    for number in range(args.rounds):
        for way in reversed(WAYS) if number % 2 else WAYS:
            removed = _forget_project_record(home / "okstra", root) if way == "rules" else 0
            wall, peak, report = run(CHECKOUT, home, argv)
            print(f"round {number + 1} {way}: {wall:.2f} s {peak:.1f} MB (records removed: {removed})", flush=True)
            reports[way].add(report)
            if number > 0 or args.rounds == 1:
                runs[way].append((wall, peak))
    same = len(reports["kept"] | reports["rules"]) == 1
    print(f"the same report every run, both ways: {same}")
    print("| measure | rules | kept | kept / rules |")
    print("|---|---:|---:|---:|")
    for index, label in ((0, "wall (s)"), (1, "peak resident (MB)")):
        rules, kept = (statistics.median(r[index] for r in runs[way]) for way in ("rules", "kept"))
        print(f"| {label} | {rules:.2f} | {kept:.2f} | {kept / rules:.3f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
