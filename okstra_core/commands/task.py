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

    Only keys made of letters, digits and ``._:@+-/=,%`` (not starting with ``-``) are printed: bash expands
    the words it completes from (``$(...)``, backquotes, globs, braces, ``~``), and the catalog is written by
    agents, so a key that could run or expand anything in a shell, or that is not one word, is left out.
    """
    from ..errors import LoadError

    project = open_project(args)
    listing = project.catalog_listing()
    if isinstance(listing, LoadError):
        raise OkstraError(listing.path, listing.reason)
    for key in dict.fromkeys(e.task_key for e in listing):
        if completion_word(key):
            say(key)
    return 0


def completion_word(text: str) -> bool:
    """Whether *text* can be offered to a shell as a completion word as it is (see :func:`cmd_task_keys`)."""
    return (
        bool(text) and text[0] != "-" and all((ch.isalnum() and ch.isprintable()) or ch in "._:@+-/=,%" for ch in text)
    )


def register(sub: Any) -> None:
    """Add the ``task`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "task", "task manifest upkeep")
    p = d.add_parser("refresh-fix-cycles", help="recompute fixCycles from history/fix-cycles.jsonl")
    add_task_args(p)
    p.set_defaults(func=named_refusals(cmd_task_refresh_fix_cycles))
    p = d.add_parser("keys", help="print the catalog's task keys, one per line (for shell completion)")
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.set_defaults(func=named_refusals(cmd_task_keys))
