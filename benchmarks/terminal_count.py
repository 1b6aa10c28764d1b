"""When a terminal shows the catalog's rows and its count of what waits, against another revision, in one run.

    python benchmarks/terminal_count.py --root PROJECT [--against REF] [--rounds 5] [--watchman]

Each start is the workbench in a real terminal (a private tmux server, 120x40), its screen captured every
50 ms from before the process starts: reported are when a task row first shows and when "waiting for you"
first shows, each since the start, and the gap between them. This is what a person sees, where the in-app probe
of ``benchmarks/tui.py`` sees the app only after it has handled its pending messages, which is later than a
terminal's first frame.

*REF* (default ``HEAD``) is checked out into a temporary worktree; both sides are byte-compiled first (as an
installed copy is), each keeps its own cache folder, and one start of each warms it before the rounds (the
starts measured are warm). Within a round the two start in turn, the order reversed every other round.
Without ``--watchman`` the workbench is told not to ask watchman (``OKSTRA_WATCHMAN=off``).
This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _checkout import CHECKOUT, ab_arguments, byte_compiled, other_revision  # noqa: E402

SOCKET = "okstra-terminal-count"
ROW_MARK = ":task-"
COUNT_MARK = "waiting for you"
LIMIT_SECONDS = 30.0


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=False).stdout


def start(source: Path, root: Path, cache: Path, watchman: bool) -> tuple[float, float]:
    """One start of *source*'s workbench on *root*: seconds until a row shows, and until the count shows."""
    env = {
        "PYTHONPATH": str(source),
        "XDG_CACHE_HOME": str(cache),
        "OKSTRA_WATCHMAN": "on" if watchman else "off",
        "OKSTRA_NOTIFY": "off",
    }
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    command = f"cd / && env -u PYTHONDONTWRITEBYTECODE {assignments} {shlex.quote(sys.executable)} -m okstra_tui "
    _tmux("kill-server")
    started = time.perf_counter()
    subprocess.run(
        ["tmux", "-L", SOCKET, "new", "-d", "-s", "s", "-x", "120", "-y", "40", command + shlex.quote(str(root))],
        check=True,
    )
    rows = count = None
    while time.perf_counter() - started < LIMIT_SECONDS and (rows is None or count is None):
        screen = _tmux("capture-pane", "-p", "-t", "s")
        now = time.perf_counter() - started
        if rows is None and ROW_MARK in screen:
            rows = now
        if count is None and COUNT_MARK in screen:
            count = now
        time.sleep(0.05)
    _tmux("send-keys", "-t", "s", "q")
    time.sleep(1.0)
    _tmux("kill-server")
    if rows is None or count is None:
        raise SystemExit(f"terminal_count: {source}: no {'rows' if rows is None else 'count'} in {LIMIT_SECONDS} s")
    return rows, count


def main() -> int:
    parser = ab_arguments(__doc__, rounds=5)
    parser.add_argument("--watchman", action="store_true", help="let the workbench ask watchman")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("terminal_count: needs tmux")
    with other_revision(args.against, "terminal_count") as other, tempfile.TemporaryDirectory() as tmp:
        sides = {"this": CHECKOUT, args.against: other}
        byte_compiled(*sides.values())
        caches = {name: Path(tmp) / f"cache-{i}" for i, name in enumerate(sides)}
        for name, source in sides.items():
            start(source, args.root.resolve(), caches[name], args.watchman)  # warms its cache folder
        seen: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        for round_no in range(args.rounds):
            order = list(sides) if round_no % 2 == 0 else list(reversed(sides))
            for name in order:
                seen[name].append(start(sides[name], args.root.resolve(), caches[name], args.watchman))
                rows, count = seen[name][-1]
                print(f"round {round_no + 1} {name:>12}: rows {rows:.2f} s, count {count:.2f} s", file=sys.stderr)
    print(f"{'side':>12} {'rows (median)':>14} {'count (median)':>15} {'gap (median)':>13}")
    medians: dict[str, float] = {}
    for name, starts in seen.items():
        rows = statistics.median(r for r, _ in starts)
        count = medians[name] = statistics.median(c for _, c in starts)
        gap = statistics.median(c - r for r, c in starts)
        print(f"{name:>12} {rows:>13.2f}s {count:>14.2f}s {gap:>12.2f}s")
    print(f"count, this over {args.against}: {medians['this'] / medians[args.against]:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
