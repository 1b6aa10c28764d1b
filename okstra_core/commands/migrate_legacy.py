"""``okstra migrate-legacy``: move flat legacy artifacts into their category folders."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import named_refusals, open_project, open_task, rel, say


def cmd_migrate_legacy(args: argparse.Namespace) -> int:
    from ..progress import terminal_progress
    from ..workflows import migrate

    project = open_project(args)
    tasks = [open_task(project, args.task)] if args.task else [ref.open() for ref in project.task_refs]
    total = 0
    with terminal_progress("migrating", "tasks", quiet=args.quiet) as progress:
        for done, task in enumerate(tasks, 1):
            moves = migrate.migrate_task(project.root, task, dry_run=args.dry_run)
            for move in moves:
                note = " (new seq: the legacy seq is taken)" if move.reallocated else ""
                verb = "would move" if args.dry_run else "moved"
                say(f"{rel(project, move.source)} -> {rel(project, move.target)}: {verb}{note}")
            total += len(moves)
            if progress is not None:
                progress(done, len(tasks))
    if total == 0:
        say("no flat legacy artifacts to migrate")
    elif args.dry_run:
        say(f"{total} file(s) would move; nothing was changed (dry run)")
    return 0


def register(sub: Any) -> None:
    """Add the ``migrate-legacy`` verbs to the ``okstra`` parser."""
    p = sub.add_parser("migrate-legacy", help="move flat legacy artifacts into their category folders")
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--task", default=None, metavar="KEY", help="only this task (default: every task)")
    p.add_argument("--dry-run", action="store_true", help="print the moves without making them")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display (shown only on a terminal's stderr)")
    p.set_defaults(func=named_refusals(cmd_migrate_legacy))
