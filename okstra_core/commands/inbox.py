"""``okstra inbox PROJECT [--json]``: the decisions waiting for a person.

Exit 0 whether or not anything waits (1 only when the project cannot be
opened). Text output groups the decisions by task, the task with the newest
decision first, and ends with a line counting the files that could not be read
when there are any. ``--json`` prints ``{"version": 1, "project": ..., "items":
[...], "unreadable": N, "unreadablePaths": [...]}`` with the items newest
first, each ``{kind, task, path, item, summary, since}`` (``item`` null where
there is none), and at most :data:`UNREADABLE_PATHS_MAX` unreadable paths.

Everything printed comes from the store and is untrusted: text output shows
store strings through :func:`okstra_core.text.visible` (control characters as
visible stand-ins); the JSON is ASCII (``ensure_ascii``), so it carries them
only as ``\\u`` escapes.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any

from ..text import visible
from .common import open_project

INBOX_JSON_VERSION = 1
#: The JSON lists at most this many unreadable files (sorted); ``unreadable`` counts them all.
UNREADABLE_PATHS_MAX = 50


def register(sub: Any) -> None:
    p = sub.add_parser("inbox", help="list the decisions waiting for a person (choices, answers, confirmations)")
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--json", action="store_true", help="print the list as JSON (version 1)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..workflows.inbox import read_inbox

    project = open_project(args)
    inbox = read_inbox(project)
    items = inbox.items
    if args.json:
        doc = {
            "version": INBOX_JSON_VERSION,
            "project": str(project.root),
            "items": [d.to_json() for d in items],
            "unreadable": len(inbox.unreadable),
            "unreadablePaths": inbox.unreadable[:UNREADABLE_PATHS_MAX],
        }
        print(json.dumps(doc, indent=2, ensure_ascii=True))
        return 0
    if not items:
        print("nothing is waiting for you")
    else:
        _print_groups(items)
    if inbox.unreadable:
        count = len(inbox.unreadable)
        where = visible(shlex.quote(str(args.project)))
        print(f"{count} file{'s' if count != 1 else ''} could not be read; run okstra check {where}")
    return 0


def _print_groups(items: list[Any]) -> None:
    groups: dict[str, list[Any]] = {}
    for decision in items:
        groups.setdefault(decision.task, []).append(decision)
    for task, decisions in groups.items():
        print(f"{visible(task)} ({len(decisions)} waiting)")
        for d in decisions:
            label = d.kind + (f" {d.item}" if d.item else "") + (f" [{d.detail}]" if d.detail else "")
            print(f"  {d.since}  {visible(label)}: {visible(d.summary)}")
            print(f"      {visible(d.path)}")
        print()
    count = len(items)
    tasks = len(groups)
    print(f"{count} decision{'s' if count != 1 else ''} waiting in {tasks} task{'s' if tasks != 1 else ''}")
