"""The workbench's two whole-store children against another revision of them, on one demo, in one run.

    python benchmarks/children_ab.py --root PROJECT [--against REF] [--rounds 5] [--cold 1]

The children are run as the workbench runs them, without watchman:

* the notices' baseline check, ``okstra check ROOT --format json --quiet --jobs 1``: first *cold* times with
  an empty cache folder each, then *rounds* times warm;
* the counting child (``okstra_tui.data.catalog.print_waiting_counts``), warm, *rounds* times;
* the notices' child up to its first pulse (``okstra_tui.notices.watch_store`` with no change to follow), started
  as the workbench starts it, after the count: warm, *rounds* times. Its baseline check is started and ended
  with it, as in the workbench when no change comes;
* the confirming child (``okstra_tui.data.catalog.print_fingerprint``), warm, *rounds* times.

*REF* (default ``HEAD``) is checked out into a temporary worktree and both sides are byte-compiled first (as an
installed copy is), each side with its own cache folder; within a round the two run in turn, the order reversed
every other round. Each run's wall time and its peak resident size (the process's own, from ``wait4``) are
reported as medians with this checkout's over *REF*'s, and each pair's outputs must be the same bytes.
This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

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

from _checkout import CHECKOUT, ab_arguments, byte_compiled, other_revision  # noqa: E402

COUNT = (
    "import sys\nfrom okstra_tui.data.catalog import print_waiting_counts\nsys.exit(print_waiting_counts(sys.argv[1]))"
)
CONFIRM = "import sys\nfrom okstra_tui.data.catalog import print_fingerprint\nsys.exit(print_fingerprint(sys.argv[1]))"
NOTICES = (
    "import sys\nfrom pathlib import Path\nfrom okstra_tui.notices import watch_store\n"
    "watch_store(Path(sys.argv[1]), lambda: print('ready'), print, changes=iter(()))"
)


def run(source: Path, cache: Path, argv: list[str]) -> tuple[float, float, bytes]:
    """One fresh process of *source*'s code: its wall seconds, peak resident MB and standard output."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(source), XDG_CACHE_HOME=str(cache), OKSTRA_WATCHMAN="off")
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *argv], stdout=out, stderr=subprocess.DEVNULL, env=env, cwd="/")
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen is told
        out.seek(0)
        return wall, usage.ru_maxrss / 1024, out.read()


def pair(
    sides: dict[str, tuple[Path, Path]], argv: list[str], flip: bool, fresh: bool
) -> dict[str, tuple[float, float]]:
    """Each side once, in turn; *fresh*: each with a new, empty cache folder (beside its own)."""
    got: dict[str, tuple[float, float, bytes]] = {}
    for name in sorted(sides, reverse=flip):
        source, cache = sides[name]
        if fresh:
            cache = Path(tempfile.mkdtemp(prefix="cold-", dir=cache.parent))
        got[name] = run(source, cache, argv)
    if _compared(got["this"][2]) != _compared(got["ref"][2]):
        print(f"  outputs differ: {' '.join(argv[:3])}", file=sys.stderr)
    return {name: (wall, peak) for name, (wall, peak, _) in got.items()}


def _compared(output: bytes) -> object:
    """What two revisions must print alike: the counting child's counts without the MAC it names (each revision
    keeps its facts under a scope of its own, so the MACs differ), any other output as it is."""
    try:
        value = json.loads(output)
    except ValueError:
        return output
    return {k: v for k, v in value.items() if k != "kept"} if isinstance(value, dict) else value


def report(title: str, rounds: list[dict[str, tuple[float, float]]]) -> None:
    def median(side: str, i: int) -> float:
        return statistics.median(r[side][i] for r in rounds)

    wall = statistics.median(r["this"][0] / r["ref"][0] for r in rounds)
    peak = statistics.median(r["this"][1] / r["ref"][1] for r in rounds)
    print(
        f"{title}: this {median('this', 0):.3f} s {median('this', 1):.1f} MB, "
        f"ref {median('ref', 0):.3f} s {median('ref', 1):.1f} MB; this/ref wall {wall:.3f}x, peak {peak:.3f}x "
        f"({len(rounds)} rounds)"
    )


def main() -> int:
    parser = ab_arguments(__doc__, rounds=5)
    parser.add_argument("--cold", type=int, default=1, help="cold runs of the check (each with an empty cache)")
    args = parser.parse_args()
    root = str(args.root.resolve())
    check = ["-m", "okstra_core.cli", "check", root, "--format", "json", "--quiet", "--jobs", "1"]
    count = ["-c", COUNT, root]
    with other_revision(args.against, "children_ab") as other, tempfile.TemporaryDirectory() as tmp:
        sides = {"this": (CHECKOUT, Path(tmp) / "this"), "ref": (other, Path(tmp) / "ref")}
        byte_compiled(*(source for source, _ in sides.values()))
        cold = [pair(sides, check, i % 2 == 1, fresh=True) for i in range(args.cold)]
        if cold:
            report("baseline check, cold", cold)
        pair(sides, check, False, fresh=False)  # each side's cache made warm
        report("baseline check, warm", [pair(sides, check, i % 2 == 1, fresh=False) for i in range(args.rounds)])
        pair(sides, count, False, fresh=False)
        report("counting child, warm", [pair(sides, count, i % 2 == 1, fresh=False) for i in range(args.rounds)])
        notices = ["-c", NOTICES, root]
        report(
            "notices' first pulse, warm", [pair(sides, notices, i % 2 == 1, fresh=False) for i in range(args.rounds)]
        )
        confirm = ["-c", CONFIRM, root]
        pair(sides, confirm, False, fresh=False)  # the fingerprint kept, where it is kept
        report("confirming child, warm", [pair(sides, confirm, i % 2 == 1, fresh=False) for i in range(args.rounds)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
