"""``okstra inbox PROJECT [--json]``: the decisions waiting for a person.

Exit 0 whether or not anything waits (1 only when the project cannot be
opened). Text output groups the decisions by task, the task with the newest
decision first. ``--json`` prints ``{"version": 1, "project": ..., "items":
[...]}`` with the items newest first, each ``{kind, task, path, item, summary,
since}`` (``item`` null where there is none).

Everything printed comes from the store and is untrusted: text output shows
store strings through :func:`okstra_core.text.visible` (control characters as
visible stand-ins); the JSON is ASCII (``ensure_ascii``), so it carries them
only as ``\\u`` escapes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..text import visible
from .common import open_project

INBOX_JSON_VERSION = 1


def register(sub: Any) -> None:
    p = sub.add_parser("inbox", help="list the decisions waiting for a person (choices, answers, confirmations)")
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--json", action="store_true", help="print the list as JSON (version 1)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..workflows.inbox import pending_decisions

    project = open_project(args)
    items = pending_decisions(project)
    if args.json:
        doc = {"version": INBOX_JSON_VERSION, "project": str(project.root), "items": [d.to_json() for d in items]}
        print(json.dumps(doc, indent=2, ensure_ascii=True))
        return 0
    if not items:
        print("nothing is waiting for you")
        return 0
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
    return 0
