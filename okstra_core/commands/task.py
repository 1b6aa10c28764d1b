"""``okstra task refresh-fix-cycles``: recompute the manifest's fixCycles summary; ``okstra task keys``: list them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import layout
from ..errors import OkstraError
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


def cmd_task_keys(args: argparse.Namespace) -> int:
    """Print the catalog's task keys, one per line (what shell completion offers for ``--task``).

    A key holding whitespace or a control character is left out: it could not be one completion word, and
    nothing from the store reaches the terminal raw.
    """
    from ..errors import LoadError
    from ..text import has_controls

    project = open_project(args)
    listing = project.catalog_listing()
    if isinstance(listing, LoadError):
        raise OkstraError(listing.path, listing.reason)
    keys = dict.fromkeys(e.task_key for e in listing if e.task_key and not has_controls(e.task_key))
    for key in keys:
        if not any(ch.isspace() for ch in key):
            say(key)
    return 0


def register(sub: Any) -> None:
    """Add the ``task`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "task", "task manifest upkeep")
    p = d.add_parser("refresh-fix-cycles", help="recompute fixCycles from history/fix-cycles.jsonl")
    add_task_args(p)
    p.set_defaults(func=named_refusals(cmd_task_refresh_fix_cycles))
    p = d.add_parser("keys", help="print the catalog's task keys, one per line (for shell completion)")
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.set_defaults(func=named_refusals(cmd_task_keys))
