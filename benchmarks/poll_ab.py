"""A polling change feed against another revision of it, on one demo, in one run.

    python benchmarks/poll_ab.py --root PROJECT [--against REF] [--rounds 3] [--hold 25]

Two measures, each side in a fresh process of its own code with its own cache folder, without watchman:

* a full poll of the workbench's feed (``StoreFeed._poll_paths`` and the look at every path it names, and,
  where the feed has one, the store index asked what changed among what the inbox reads), three times in one
  process: the processor time of each, warm (the cache folder filled by a first process);
* the workbench, headless (``App.run_test``, notices off), held *hold* seconds from its start: the processor
  time of its process over that time, its peak resident size and its resident size at the end; once with an
  empty cache folder (cold), then *rounds* times warm.

*REF* (default ``HEAD``) is checked out into a temporary worktree and both sides are byte-compiled first; the two
run in turn, the order reversed every other round. The feed polls only where file events cannot watch the store
(more folders than half the system's watch limit, or ``OKSTRA_WATCH=poll``, which this script sets for both
measures; ``--watch events`` holds the workbenches on file events instead, to see what polling costs).
This is a measurement, not a test: nothing here asserts.
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

POLLS = r"""
import json, sys, threading, time
from pathlib import Path
from okstra_core.watch import signature
from okstra_tui.store_feed import StoreFeed

# A thread beside this one, as in the workbench: the looks are not split with a forked process, whose processor
# time this thread's clock would not count.
threading.Thread(target=threading.Event().wait, daemon=True).start()
feed = StoreFeed(Path(sys.argv[1]), lambda paths: None)
# Where the feed asks the store index what changed in what the inbox reads, a full poll asks it too.
told = feed._told() if hasattr(feed, "_told") else None
if told is not None:
    told()
spent = []
for _ in range(3):
    started = time.thread_time()
    looked = signature(feed._poll_paths())
    if told is not None:
        told()
    spent.append(time.thread_time() - started)
print(json.dumps({"polls": spent, "paths": len(looked)}))
"""

HOLD = r"""
import asyncio, json, resource, sys, time
from pathlib import Path
from okstra_core.malloc import fewer_arenas

fewer_arenas()

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith(key))

async def main():
    from okstra_core.store import Project
    from okstra_tui.app import OkstraApp

    started = time.monotonic()
    app = OkstraApp(Project(Path(sys.argv[1])), notify="off")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        while time.monotonic() - started < float(sys.argv[2]):
            await asyncio.sleep(0.2)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime, "peak": status("VmHWM"), "end": status("VmRSS")}))

asyncio.run(main())
"""


def run(source: Path, cache: Path, code: str, *args: str, watch: str = "poll") -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(source), XDG_CACHE_HOME=str(cache), OKSTRA_WATCHMAN="off", OKSTRA_WATCH=watch)
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd="/", check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"poll_ab: {source}: {done.stderr.strip().splitlines()[-1:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = ab_arguments(__doc__, rounds=3)
    parser.add_argument("--hold", type=float, default=25.0, help="seconds each workbench is held from its start")
    parser.add_argument(
        "--watch", choices=("poll", "events"), default="poll", help="how the held workbenches watch the store"
    )
    args = parser.parse_args()
    root = str(args.root.resolve())
    with other_revision(args.against, "poll_ab") as other, tempfile.TemporaryDirectory() as tmp:
        sides = {"this": CHECKOUT, args.against: other}
        byte_compiled(*sides.values())
        caches = {name: Path(tmp) / f"cache-{i}" for i, name in enumerate(sides)}
        held: dict[str, list[dict[str, object]]] = {name: [] for name in sides}
        polls: dict[str, list[float]] = {name: [] for name in sides}
        for name, source in sides.items():
            held[name].append(run(source, caches[name], HOLD, root, str(args.hold), watch=args.watch))  # cold
        for round_no in range(args.rounds):
            order = list(sides) if round_no % 2 == 0 else list(reversed(sides))
            for name in order:
                held[name].append(run(sides[name], caches[name], HOLD, root, str(args.hold), watch=args.watch))
                spent = run(sides[name], caches[name], POLLS, root)["polls"]
                assert isinstance(spent, list)
                polls[name].extend(float(s) for s in spent)
    print(f"| measure | {' | '.join(sides)} | this / {args.against} |")
    print("|---|" + "---:|" * (len(sides) + 1))

    def line(label: str, values: dict[str, float], unit: str) -> None:
        ratio = values["this"] / values[args.against]
        print(f"| {label} | {' | '.join(f'{values[n]:.2f} {unit}' for n in sides)} | {ratio:.3f}x |")

    line("a full poll, warm (median CPU)", {n: statistics.median(polls[n]) for n in sides}, "s")
    for key, label, unit in (
        ("cpu", "processor time", "s"),
        ("peak", "peak resident", "MB"),
        ("end", "resident at the end", "MB"),
    ):
        line(f"workbench's {label}, cold", {n: float(held[n][0][key]) for n in sides}, unit)  # type: ignore[arg-type]
        line(
            f"workbench's {label}, warm (median)",
            {n: statistics.median(float(h[key]) for h in held[n][1:]) for n in sides},  # type: ignore[arg-type]
            unit,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
