"""``okstra demo DIR [--tasks N]``: write the demo project through the core's write path."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="write a demo project (made by the core's own write path)")
    p.add_argument("dir", type=Path, help="target folder (missing or empty)")
    p.add_argument(
        "--tasks", type=int, default=None, help="total tasks (bulk tasks of the same shapes beyond the 13 rich ones)"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="draws each bulk task's shape, day and pace (same seed, same tree)"
    )
    p.add_argument("--jobs", type=int, default=None, help="worker processes for bulk tasks (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display (shown only on a terminal's stderr)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..demo import MAX_TASKS, generate
    from ..layout import demo_home
    from ..progress import terminal_progress

    if args.tasks is not None and not 0 <= args.tasks <= MAX_TASKS:
        raise SystemExit(f"okstra demo: --tasks must be between 0 and {MAX_TASKS:,}")
    if args.jobs is not None and args.jobs < 1:
        raise SystemExit("okstra demo: --jobs must be at least 1")
    started = time.perf_counter()
    with terminal_progress("writing the demo", "tasks", quiet=args.quiet, rate=True) as progress:
        root = generate(args.dir, tasks=args.tasks, jobs=args.jobs, progress=progress, seed=args.seed)
    print(f"demo project written to {root} in {time.perf_counter() - started:.1f}s")
    print(f"manager home: {demo_home(root)} (export OKSTRA_HOME={demo_home(root)})")
    return 0
