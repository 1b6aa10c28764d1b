"""``okstra task refresh-fix-cycles``: recompute the manifest's fixCycles summary."""

from __future__ import annotations

import argparse
from typing import Any

from .. import layout
from .common import add_group, add_task_args, named_refusals, open_project, open_task, rel, say


def cmd_task_refresh_fix_cycles(args: argparse.Namespace) -> int:
    from ..workflows import tasks

    project = open_project(args)
    task = open_task(project, args.task)
    summary, changed = tasks.refresh_fix_cycles(project.root, task.root)
    open_id = summary.open_cycle_id or "none"
    what = "updated" if changed else "already up to date"
    say(
        f"{rel(project, layout.task_manifest_path(task.root))}: fixCycles {what} (count {summary.count}, open "
        f"{open_id})"
    )
    return 0


def register(sub: Any) -> None:
    """Add the ``task`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "task", "task manifest upkeep")
    p = d.add_parser("refresh-fix-cycles", help="recompute fixCycles from history/fix-cycles.jsonl")
    add_task_args(p)
    p.set_defaults(func=named_refusals(cmd_task_refresh_fix_cycles))
