"""The notices' pulse in memory: what one reading of a whole store adds and holds, against another revision.

    python benchmarks/pulse_memory.py --root PROJECT [--against REF] [--rounds 3]

Each run is a fresh process of one side's code that reads the pulse of *PROJECT* through its warm store index, as
the notices' child reads its first one (``okstra_tui.data.catalog.through_index`` with
``okstra_core.workflows.pulse.read_pulse``; no watchman), and reports its resident size before and after the
reading and its largest one (``VmHWM``); a second run of each side traces the reading (``tracemalloc``: what the
reading leaves held, and its traced peak), which is slower and larger, so it is not mixed with the first.

*REF* (default ``HEAD``) is checked out into a temporary worktree; each side has its own cache folder, made warm
by one reading first; within a round the two sides run in turn, the order reversed every other round. Medians
are printed with this checkout's over *REF*'s. This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _checkout import CHECKOUT, ab_arguments, byte_compiled, other_revision  # noqa: E402

PROBE = r"""
import json, sys, tracemalloc
from pathlib import Path

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith(field))

from okstra_core.malloc import fewer_arenas, give_back
fewer_arenas()  # as the notices' child does
import okstra_core.check.cache, okstra_core.store_index  # imported before the first figure, as in the child
from okstra_core.workflows.pulse import read_pulse
from okstra_tui.data.catalog import through_index

traced = sys.argv[2] == "traced"
before = status("VmRSS:")
if traced:
    tracemalloc.start()
read = through_index(Path(sys.argv[1]), None, read_pulse)
pulse = read[0] if isinstance(read, tuple) else read  # read_pulse gives the pulse and its news, or the pulse alone
held, peak = tracemalloc.get_traced_memory() if traced else (0, 0)
give_back()
print(json.dumps({
    "decisions": len(pulse.decisions), "runs": len(pulse.runs), "before": before, "after": status("VmRSS:"),
    "largest": status("VmHWM:"), "held": held / 1e6, "peak": peak / 1e6,
}))
"""


def run(source: Path, cache: Path, root: Path, mode: str) -> dict[str, float]:
    """One fresh process of *source*'s code reading the pulse of *root*: its figures."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(source), XDG_CACHE_HOME=str(cache), OKSTRA_WATCHMAN="off")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(root), mode], env=env, cwd="/", capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"pulse_memory: the probe of {source} failed: {done.stderr.strip()[-400:]}")
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def main() -> int:
    parser = ab_arguments(__doc__ or "", rounds=3)
    args = parser.parse_args()
    root = args.root.resolve()
    with other_revision(args.against, "pulse_memory") as other, tempfile.TemporaryDirectory() as tmp:
        sides = {"this": (CHECKOUT, Path(tmp) / "this"), "ref": (other, Path(tmp) / "ref")}
        byte_compiled(*(source for source, _ in sides.values()))
        for source, cache in sides.values():
            run(source, cache, root, "plain")  # each side's store index made warm
        found: dict[str, list[dict[str, float]]] = {"this": [], "ref": []}
        for i in range(args.rounds):
            for side in ("this", "ref") if i % 2 == 0 else ("ref", "this"):
                source, cache = sides[side]
                plain, traced = run(source, cache, root, "plain"), run(source, cache, root, "traced")
                found[side].append({**plain, "held": traced["held"], "peak": traced["peak"]})
    first = found["this"][0]
    print(f"{root}: {first['decisions']:.0f} decisions waiting, {first['runs']:.0f} latest runs ({args.rounds} rounds)")
    measures = (
        ("resident size added by the reading (MB)", lambda f: f["after"] - f["before"]),
        ("largest resident size (MB)", lambda f: f["largest"]),
        ("held after the reading, traced (MB)", lambda f: f["held"]),
        ("traced peak of the reading (MB)", lambda f: f["peak"]),
    )
    for name, measure in measures:
        this = statistics.median(measure(f) for f in found["this"])
        ref = statistics.median(measure(f) for f in found["ref"])
        print(f"{name}: this {this:.1f}, ref {ref:.1f}; this/ref {this / ref:.3f}x" if ref else f"{name}: {this:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
