"""``okstra inbox PROJECT [--json]``: the decisions waiting for a person.

Exit 0 when the list is complete, whether or not anything waits; 1 when it
may not be: a folder the inbox had to list could not be listed, or a file it
had to read could not be read (the list shows what could be read), or the
project cannot be opened; 2 on a usage error. Text output groups the
decisions by task, the task with the newest decision first, and ends with a
line counting the folders and files that could not be read when there are
any; each unlisted folder is also named on stderr, as git names a folder it
cannot open. ``--json`` prints ``{"version": 1, "project": ..., "items":
[...], "unreadable": N, "unreadablePaths": [...]}`` with the items newest
first, each ``{kind, task, path, item, summary, since}`` (``item`` null where
there is none); ``unreadable`` counts the unreadable files and unlisted
folders, ``unreadablePaths`` names at most :data:`UNREADABLE_PATHS_MAX` of
them (folders end in ``/``).

Everything printed comes from the store and is untrusted: text output shows
store strings through :func:`okstra_core.text.visible` (control characters as
visible stand-ins); the JSON is ASCII (``ensure_ascii``), so it carries them
only as ``\\u`` escapes.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from ..text import visible
from .common import open_project

INBOX_JSON_VERSION = 1
#: The JSON lists at most this many unreadable files (sorted); ``unreadable`` counts them all.
UNREADABLE_PATHS_MAX = 50


#: Unlisted folders named on stderr, one line each; more are counted in one last line.
UNLISTED_LINES_MAX = 10

EPILOG = """exit status:
  0  the list is complete (whether or not anything waits)
  1  the list may be incomplete: a folder could not be listed or a file could not be read
     (what could be read is still listed; okstra check says why), or the project cannot be opened
  2  usage error"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "inbox",
        help="list the decisions waiting for a person (choices, answers, confirmations)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--json", action="store_true", help="print the list as JSON (version 1)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..workflows.inbox import read_inbox

    project = open_project(args)
    inbox = read_inbox(project)
    items = inbox.items
    status = 0 if inbox.complete else 1
    _say_unlisted(inbox.unlisted, inbox.unlisted_reasons)
    if args.json:
        paths = sorted([*inbox.unreadable, *inbox.unlisted])
        doc = {
            "version": INBOX_JSON_VERSION,
            "project": str(project.root),
            "items": [d.to_json() for d in items],
            "unreadable": len(paths),
            "unreadablePaths": paths[:UNREADABLE_PATHS_MAX],
        }
        print(json.dumps(doc, indent=2, ensure_ascii=True))
        return status
    if not items:
        print("nothing is waiting for you" if inbox.complete else "nothing is waiting in what could be read")
    else:
        _print_groups(items)
    if not inbox.complete:
        where = visible(shlex.quote(str(args.project)))
        print(f"{_unread_count(len(inbox.unlisted), len(inbox.unreadable))}; run okstra check {where}")
    return status


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _unread_count(folders: int, files: int) -> str:
    """``2 folders could not be listed and 1 file could not be read`` (either part left out when 0)."""
    parts = []
    if folders:
        parts.append(f"{_plural(folders, 'folder')} could not be listed")
    if files:
        parts.append(f"{_plural(files, 'file')} could not be read")
    return " and ".join(parts)


def _say_unlisted(folders: list[str], reasons: dict[str, str]) -> None:
    """One stderr line per folder that could not be listed (at most :data:`UNLISTED_LINES_MAX`)."""
    for folder in folders[:UNLISTED_LINES_MAX]:
        reason = reasons.get(folder, "cannot list folder").removeprefix("cannot list folder: ")
        print(f"okstra inbox: cannot list {visible(folder)}: {visible(reason)}", file=sys.stderr)
    if len(folders) > UNLISTED_LINES_MAX:
        print(f"okstra inbox: and {len(folders) - UNLISTED_LINES_MAX} more folders", file=sys.stderr)


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
