"""``okstra demo DIR [--tasks N]``: write the demo project through the core's write path.

``okstra demo --projects DIR`` writes the demo of many projects instead: ``DIR/shop``, ``DIR/billing`` and
``DIR/mobile``, each with decisions waiting, and ``DIR/okstra-home``, the manager home registering them
(see :mod:`okstra_core.demo.projects`)."""

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
    p.add_argument(
        "--projects",
        action="store_true",
        help="write three projects (DIR/shop, DIR/billing, DIR/mobile) and their manager home (DIR/okstra-home) "
        "instead of one project",
    )
    p.set_defaults(func=run, parser=p)


def run(args: argparse.Namespace) -> int:
    from ..demo import MAX_TASKS, generate
    from ..layout import demo_home
    from ..progress import terminal_progress

    if args.tasks is not None and not 0 <= args.tasks <= MAX_TASKS:
        raise SystemExit(f"okstra demo: --tasks must be between 0 and {MAX_TASKS:,}")
    if args.jobs is not None and args.jobs < 1:
        raise SystemExit("okstra demo: --jobs must be at least 1")
    if args.projects:
        return _run_projects(args)
    started = time.perf_counter()
    with terminal_progress("writing the demo", "tasks", quiet=args.quiet, rate=True) as progress:
        root = generate(args.dir, tasks=args.tasks, jobs=args.jobs, progress=progress, seed=args.seed)
    print(f"demo project written to {root} in {time.perf_counter() - started:.1f}s")
    print(f"manager home: {demo_home(root)} (export OKSTRA_HOME={demo_home(root)})")
    return 0


def _run_projects(args: argparse.Namespace) -> int:
    from ..demo.projects import HOME_DIR, generate_projects

    if args.tasks is not None:
        args.parser.error("--tasks goes with the single-project demo, not with --projects")
    started = time.perf_counter()
    base = generate_projects(args.dir)
    print(f"demo projects written to {base} in {time.perf_counter() - started:.1f}s")
    print(f"manager home: {base / HOME_DIR} (export OKSTRA_HOME={base / HOME_DIR}; then okstra inbox --all)")
    return 0
