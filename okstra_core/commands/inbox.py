"""``okstra inbox PROJECT [--json] [--watch]``: the decisions waiting for a person.

``okstra inbox --all`` reads every project a person works on instead (see
:mod:`okstra_core.commands.inbox_all` and ``docs/projects.md``).

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

``--watch`` prints the same list, then one line each time a decision starts
(``+``) or stops (``-``) waiting, until SIGINT or SIGTERM (exit 0). With
``--json`` it writes JSON Lines, each flushed: first ``{"version": 1, "event":
"snapshot", ...}`` (the ``--json`` document), then ``{"version": 1, "event":
"added"|"removed", "item": {...}}`` with the ``--json`` item fields; when the
files and folders that could not be read change, ``{"version": 1, "event":
"unreadable", "unreadable": N, "unreadablePaths": [...]}`` (as in ``--json``;
``0`` and ``[]`` once everything can be read again) comes before the changes
it explains. Changes are
seen through :class:`okstra_core.watch.StoreWatcher` (file events, else
polling) and coalesced: a burst is one re-read of the inbox.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..text import counted, visible
from .common import (
    STOP_STEP,
    StopAsked,
    Stopped,
    add_index_args,
    open_index,
    open_project,
    polled,
    say_index_notices,
)
from .inbox_output import INBOX_JSON_VERSION, group_lines, reread, unreadable_fields
from .projects import add_all_args, check_all_args

if TYPE_CHECKING:
    from ..workflows.inbox_items import Inbox, KeptInbox


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
    p.add_argument("project", type=Path, nargs="?", help="project root holding .okstra/ (or --all)")
    p.add_argument("--json", action="store_true", help="print the list as JSON (version 1)")
    p.add_argument(
        "--watch",
        action="store_true",
        help="keep running: print the list, then one line each time a decision starts or stops waiting "
        "(with --json: JSON Lines); Ctrl-C or SIGTERM ends it with exit 0",
    )
    add_index_args(p)
    add_all_args(p, "the decisions")
    p.set_defaults(func=run, parser=p)


def run(args: argparse.Namespace) -> int:
    from ..workflows.inbox import kept_inbox, read_inbox

    check_all_args(args, args.parser, args.project is not None)
    if args.all:
        from .inbox_all import run_all, watch_all

        return watch_all(args) if args.watch else run_all(args)
    if args.watch:
        return watch(args)
    project = open_project(args)
    index = open_index(args, project, "inbox")
    inbox: Inbox | KeptInbox
    if index is None:
        inbox = read_inbox(project)
    else:
        with index:
            # The inbox kept while fresh is printed as kept: its decisions are never built.
            inbox = kept_inbox(index) or read_inbox(project, index)
        say_index_notices(index, "inbox")
    items = inbox.items
    status = 0 if inbox.complete else 1
    _say_unlisted(inbox.unlisted, inbox.unlisted_reasons)
    if args.json:
        print(json.dumps(inbox_document(project.root, inbox), indent=2, ensure_ascii=True))
        return status
    if not items:
        print("nothing is waiting for you" if inbox.complete else "nothing is waiting in what could be read")
    else:
        print_groups(items)
    if not inbox.complete:
        _print_unreadable(inbox, args.project)
    return status


def _unread_count(folders: int, files: int) -> str:
    """``2 folders could not be listed and 1 file could not be read`` (either part left out when 0)."""
    parts = []
    if folders:
        parts.append(f"{counted(folders, 'folder')} could not be listed")
    if files:
        parts.append(f"{counted(files, 'file')} could not be read")
    return " and ".join(parts)


def _say_unlisted(folders: list[str], reasons: dict[str, str]) -> None:
    """One stderr line per folder that could not be listed (at most :data:`UNLISTED_LINES_MAX`)."""
    for folder in folders[:UNLISTED_LINES_MAX]:
        reason = reasons.get(folder, "cannot list folder").removeprefix("cannot list folder: ")
        print(f"okstra inbox: cannot list {visible(folder)}: {visible(reason)}", file=sys.stderr)
    if len(folders) > UNLISTED_LINES_MAX:
        print(f"okstra inbox: and {len(folders) - UNLISTED_LINES_MAX} more folders", file=sys.stderr)


def inbox_document(root: Path, inbox: Inbox | KeptInbox) -> dict[str, Any]:
    """The ``--json`` document of *inbox* (version :data:`INBOX_JSON_VERSION`)."""
    return {
        "version": INBOX_JSON_VERSION,
        "project": str(root),
        "items": [d.to_json() for d in inbox.items],
        **unreadable_fields(inbox),
    }


def print_groups(items: list[Any]) -> None:
    lines, tasks = group_lines(items)
    if lines:
        print("\n".join(lines))
    count = len(items)
    print(f"{count} decision{'s' if count != 1 else ''} waiting in {tasks} task{'s' if tasks != 1 else ''}")


def watch(args: argparse.Namespace) -> int:
    """``okstra inbox PROJECT --watch``: the inbox, then each decision that starts or stops waiting."""
    from .. import layout
    from ..malloc import fewer_arenas
    from ..store import Project
    from ..watch import StoreWatcher
    from ..workflows.inbox import HotPaths, read_inbox

    fewer_arenas()  # before the watcher's thread starts: this runs until stopped
    root = open_project(args).root
    watcher: StoreWatcher | None = None
    with StopAsked() as stop:
        try:
            # Watch first, then read: a decision made while the inbox is read is a change the watcher reports.
            hot = HotPaths(root)
            looked, told = polled(args, root)
            watcher = StoreWatcher(layout.okstra_dir(root), looked, hot_paths=hot, told=told)
            inbox = read_inbox(Project(root))
            hot.waiting = {d.task_root for d in inbox.items if d.task_root is not None}
            _emit_snapshot(args, root, inbox)
            print(f"okstra inbox: watching {visible(str(root))} ({watcher.why}); Ctrl-C stops", file=sys.stderr)
            while not stop.asked:
                if not watcher.wait(STOP_STEP):
                    continue
                with layout.store_looked_once():  # each reading looks at the store folder afresh, once
                    current = reread(root, inbox, watcher.take_changed())
                _emit_changes(args, inbox, current)
                inbox = current
                hot.waiting = {d.task_root for d in inbox.items if d.task_root is not None}
        except Stopped:
            pass
        finally:
            stop.closing()
            if watcher is not None:
                watcher.close()
    return 0


def _emit_snapshot(args: argparse.Namespace, root: Path, inbox: Inbox) -> None:
    if args.json:
        doc = {"version": INBOX_JSON_VERSION, "event": "snapshot", **inbox_document(root, inbox)}
        print(json.dumps(doc, ensure_ascii=True), flush=True)
        return
    _say_unlisted(inbox.unlisted, inbox.unlisted_reasons)
    if inbox.items:
        print_groups(inbox.items)
    else:
        print("nothing is waiting for you" if inbox.complete else "nothing is waiting in what could be read")
    if not inbox.complete:
        _print_unreadable(inbox, args.project)
    sys.stdout.flush()


def _emit_changes(args: argparse.Namespace, before: Inbox, after: Inbox) -> None:
    from ..workflows.inbox import inbox_changes

    readable_changed = (after.unlisted, after.unreadable) != (before.unlisted, before.unreadable)
    if args.json and readable_changed:
        # First, so that a decision "removed" because its folder could not be listed is never taken as made.
        doc = {"version": INBOX_JSON_VERSION, "event": "unreadable", **unreadable_fields(after)}
        print(json.dumps(doc, ensure_ascii=True), flush=True)
    added, removed = inbox_changes(before.items, after.items)
    for event, decisions in (("removed", removed), ("added", added)):
        for d in decisions:
            if args.json:
                line = json.dumps(
                    {"version": INBOX_JSON_VERSION, "event": event, "item": d.to_json()}, ensure_ascii=True
                )
            else:
                label = d.kind + (f" {d.item}" if d.item else "")
                mark = "+" if event == "added" else "-"
                line = f"{mark} {d.since}  {visible(d.task)}  {visible(label)}: {visible(d.summary)}"
            print(line, flush=True)
    if args.json:
        return
    if readable_changed:
        _say_unlisted([u for u in after.unlisted if u not in before.unlisted], after.unlisted_reasons)
        if after.complete:
            print("everything could be read again", flush=True)
        else:
            _print_unreadable(after, args.project)
        sys.stdout.flush()


def _print_unreadable(inbox: Inbox | KeptInbox, project: Path) -> None:
    where = visible(shlex.quote(str(project)))
    print(f"{_unread_count(len(inbox.unlisted), len(inbox.unreadable))}; run okstra check {where}")
