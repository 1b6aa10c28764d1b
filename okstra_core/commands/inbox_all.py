"""``okstra inbox --all [--project ID]... [--json] [--watch]``: the decisions waiting in every project.

The projects are those of :func:`okstra_core.projects.discover` (see
:mod:`okstra_core.commands.projects`); each is read as ``okstra inbox PROJECT``
reads it, through its own store index. Text output groups the decisions by
project (registry order), then by task. ``--json`` prints ``{"version": 1,
"all": true, "projects": [...], "items": [...], "unreadable": N}``: each
project is its registry entry (``project``, ``projectRoot``, ``health``,
``reason``, ``symlink``, ``aliases``, ``sources``) with ``read`` (false when
it could not be read, ``problem`` then says why in one line), ``unreadable``
and ``unreadablePaths`` as ``okstra inbox --json`` gives them; each item is an
``okstra inbox --json`` item with ``project`` (the id) and ``projectRoot``.
Exit 0 when every project was read completely, 1 otherwise.

``--watch`` watches every project that could be read, each with its own
:class:`okstra_core.watch.StoreWatcher`. With ``--json``: the snapshot (the
``--json`` document with ``"event": "snapshot"``), then ``added``/``removed``
events whose items name their project, ``unreadable`` events with
``project``, and ``{"event": "project", "project", "projectRoot", "read",
"problem"}`` when a project stops (or starts again) being readable, before
any change it explains.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import layout
from ..text import counted, visible
from .common import StopAsked, Stopped, open_index, say_index_notices
from .inbox_output import INBOX_JSON_VERSION, group_lines, reread, unreadable_fields
from .projects import say, selected_projects

if TYPE_CHECKING:
    from ..projects import ProjectEntry
    from ..watch import StoreWatcher
    from ..workflows.inbox import HotPaths, Inbox
    from ..workflows.inbox_all import ProjectInbox

VERB = "inbox"


def read_one(args: argparse.Namespace, entry: ProjectEntry, *, kept: bool = False) -> ProjectInbox:
    """One project's inbox through its store index (unless ``--no-cache``). With *kept*, an inbox the index keeps
    fresh is taken as its rows (all that the output shows: its decisions are never built), as ``okstra inbox``
    prints one; a watch compares whole decisions, and reads them."""
    from ..workflows.inbox import kept_inbox
    from ..workflows.inbox_all import ProjectInbox, open_entry, read_project_inbox

    project = open_entry(entry)
    if isinstance(project, str):
        return ProjectInbox(entry, None, project)
    index = open_index(args, project, VERB)
    if index is None:
        return read_project_inbox(entry)
    with index:
        rows = kept_inbox(index) if kept else None
        result = ProjectInbox(entry, rows) if rows is not None else read_project_inbox(entry, index)
    say_index_notices(index, VERB)
    return result


def run_all(args: argparse.Namespace) -> int:
    from ..workflows.inbox_all import read_all_inboxes

    entries, registry = selected_projects(args, VERB)
    inboxes = read_all_inboxes(entries, lambda entry: read_one(args, entry, kept=True))
    _say_problems(inboxes)
    status = 0 if all(pi.complete for pi in inboxes) and not registry.notes else 1
    if args.json:
        print(json.dumps(all_document(inboxes), indent=2, ensure_ascii=True))
    else:
        print("\n".join(text_lines(inboxes)))
    return status


def _say_problems(inboxes: list[ProjectInbox]) -> None:
    """A project the registry found readable that could not be read after all (the others are said already)."""
    for pi in inboxes:
        if pi.problem is not None and pi.entry.readable:
            say(VERB, f"project {pi.entry.project_id!r}: {pi.problem}")


def project_fields(pi: ProjectInbox) -> dict[str, Any]:
    """A project of the ``--all`` document: its registry entry, whether it was read, what could not be."""
    fields = {**pi.entry.to_json(), "read": pi.inbox is not None, "problem": pi.problem}
    if pi.inbox is not None:
        return {**fields, **unreadable_fields(pi.inbox)}
    return {**fields, "unreadable": 0, "unreadablePaths": []}


def all_document(inboxes: list[ProjectInbox]) -> dict[str, Any]:
    from ..workflows.inbox_all import all_items

    projects = [project_fields(pi) for pi in inboxes]
    return {
        "version": INBOX_JSON_VERSION,
        "all": True,
        "projects": projects,
        "items": all_items(inboxes),
        "unreadable": sum(p["unreadable"] for p in projects),
    }


def text_lines(inboxes: list[ProjectInbox]) -> list[str]:
    """The decisions grouped by project, then by task; a count line; a line per project not read."""
    lines: list[str] = []
    count = waiting_in = 0
    for pi in inboxes:
        if pi.inbox is None or not pi.inbox.items:
            continue
        groups, _ = group_lines(pi.inbox.items, "  ")
        lines += [f"{visible(pi.entry.project_id)}  {visible(str(pi.entry.root))}", *groups]
        count += len(pi.inbox.items)
        waiting_in += 1
    read = [pi for pi in inboxes if pi.inbox is not None]
    if count:
        lines.append(f"{counted(count, 'decision')} waiting in {counted(waiting_in, 'project')} of {len(read)} read")
    else:
        lines.append(f"nothing is waiting for you in {counted(len(read), 'project')}")
    incomplete = [pi for pi in read if pi.inbox is not None and not pi.inbox.complete]
    if incomplete:
        names = ", ".join(visible(pi.entry.project_id) for pi in incomplete)
        lines.append(f"{counted(len(incomplete), 'project')} could not be read whole ({names}); run okstra check there")
    unread = [pi for pi in inboxes if pi.inbox is None]
    if unread:
        names = ", ".join(visible(pi.entry.project_id) for pi in unread)
        lines.append(f"{counted(len(unread), 'project')} could not be read: {names}")
    return lines


# ------------------------------------------------------------------ --watch


class _Watched:
    """One project under watch: its watcher, its quick-look paths and a thread that reports its changes."""

    def __init__(
        self,
        args: argparse.Namespace,
        entry: ProjectEntry,
        woken: queue.Queue[str],
        stop: threading.Event,
        step: float | None = None,
    ) -> None:
        from .. import layout
        from ..watch import EVENTS_STEP, StoreWatcher
        from ..workflows.inbox import HotPaths
        from .common import polled

        self.entry = entry
        root = entry.root
        self.hot: HotPaths = HotPaths(root)
        looked, told = polled(args, root)  # polling, the store index says what changed in what the inbox reads
        self.watcher: StoreWatcher = StoreWatcher(
            layout.okstra_dir(root),
            looked,
            hot_paths=self.hot,
            told=told,
            step=EVENTS_STEP if step is None else step,
        )
        self._thread = threading.Thread(target=self._loop, args=(woken, stop), daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self, woken: queue.Queue[str], stop: threading.Event) -> None:
        while not stop.is_set():
            if self.watcher.wait(1.0):
                woken.put(self.entry.project_id)

    def close(self) -> None:
        self.watcher.close()
        if self._thread.ident is not None:  # a signal may end the command before the thread started
            self._thread.join(timeout=5)


def watch_all(args: argparse.Namespace) -> int:
    """``okstra inbox --all --watch``: every project's inbox, then each decision that starts or stops waiting."""
    entries, _registry = selected_projects(args, VERB)
    return watch_entries(args, entries)


def watch_entries(
    args: argparse.Namespace, entries: list[ProjectEntry], step: float | None = None, *, tell_paths: bool = False
) -> int:
    """Watch the projects of *entries* (those readable) until SIGINT or SIGTERM: their inboxes (the snapshot),
    then each decision that starts or stops waiting, as ``--watch`` prints them (``args.json``: JSON lines).
    *step*: the file-event watchers' step (:data:`okstra_core.watch.EVENTS_STEP` unless given). *tell_paths*
    (JSON only): the snapshot also names the projects whose watcher polls (``polled``: it sees only what the
    inbox reads), and each change of a project is told first as a ``changed`` line naming the paths its watcher
    saw change (``paths`` null: it cannot say which), whether or not a decision changed with it."""
    from ..malloc import fewer_arenas

    fewer_arenas()  # before the watchers' threads start: this runs until stopped
    woken: queue.Queue[str] = queue.Queue()
    stop = threading.Event()
    watched: dict[str, _Watched] = {}
    with StopAsked() as asked:
        try:
            # Watch first, then read: a decision made while the inboxes are read is a change a watcher reports.
            for entry in entries:
                if entry.readable:
                    watched[entry.project_id] = _Watched(args, entry, woken, stop, step)
            # Through each project's store index (unless --no-cache): a warm start reads only what changed.
            state = {pi.entry.project_id: pi for pi in (read_one(args, e) for e in entries)}
            _follow_waiting(watched, state)
            polled = [str(w.entry.root) for w in watched.values() if w.watcher.mode == "poll"] if tell_paths else None
            _emit_snapshot(args, list(state.values()), polled)
            for w in watched.values():
                w.start()
            say(VERB, f"watching {counted(len(watched), 'project')}; Ctrl-C stops")
            while not asked.asked:
                with layout.store_looked_once():  # each reading looks at each store folder afresh, once
                    _step(args, woken, watched, state, tell_paths)
        except Stopped:
            pass
        finally:
            asked.closing()
            stop.set()
            for w in watched.values():
                w.close()
    return 0


def _fresh(entry: ProjectEntry) -> ProjectInbox:
    from ..workflows.inbox_all import read_project_inbox

    return read_project_inbox(entry)


def _follow_waiting(watched: dict[str, _Watched], state: dict[str, ProjectInbox]) -> None:
    for pid, w in watched.items():
        inbox = _whole(state[pid])
        w.hot.waiting = set() if inbox is None else {d.task_root for d in inbox.items if d.task_root is not None}


def _step(
    args: argparse.Namespace, woken: queue.Queue[str], watched: dict[str, _Watched], state: Any, tell_paths: bool
) -> None:
    """Wait for one project to change, read it again and print what changed. A second without a change, each
    project that could not be read is read again: one moved away and back holds every file it held, so a polling
    watcher, which asks the store index what changed, has nothing to tell of its return."""
    try:
        pid = woken.get(timeout=1.0)
    except queue.Empty:
        _retry_unread(args, watched, state, tell_paths)
        return
    changed = watched[pid].watcher.take_changed()
    _tell(args, pid, watched[pid], state, tell_paths, changed, _reread_project(state[pid], changed))


def _retry_unread(args: argparse.Namespace, watched: dict[str, _Watched], state: Any, tell_paths: bool) -> None:
    for pid, w in watched.items():
        if state[pid].inbox is not None:
            continue
        w.watcher.take_changed()  # what it saw while the project could not be read is in the reading below
        after = _reread_project(state[pid], None)
        if after.inbox is not None:  # back: which paths changed meanwhile, none can say
            _tell(args, pid, w, state, tell_paths, None, after)


def _tell(
    args: argparse.Namespace,
    pid: str,
    w: _Watched,
    state: dict[str, ProjectInbox],
    tell_paths: bool,
    changed: set[Path] | None,
    after: ProjectInbox,
) -> None:
    """Print what changed in project *pid* (the paths *changed*, then the decisions its reading *after* gives
    against the one before) and keep *after* as its state."""
    before = state[pid]
    if tell_paths and args.json:
        _emit_changed_paths(before.entry, changed)
    _emit_project_changes(args, before, after)
    state[pid] = after
    _follow_waiting({pid: w}, state)


def _reread_project(before: ProjectInbox, changed: set[Path] | None) -> ProjectInbox:
    from ..workflows.inbox_all import ProjectInbox, open_entry

    project = open_entry(before.entry)
    if isinstance(project, str):
        return ProjectInbox(before.entry, None, project)
    inbox = _whole(before)
    if inbox is None:
        return _fresh(before.entry)
    return ProjectInbox(before.entry, reread(project.root, inbox, changed))


def _whole(pi: ProjectInbox) -> Inbox | None:
    """A watched project's inbox, read whole (a watch compares decisions, so it never reads a kept one's rows)."""
    from ..workflows.inbox_items import KeptInbox

    assert not isinstance(pi.inbox, KeptInbox)
    return pi.inbox


def _emit_snapshot(args: argparse.Namespace, inboxes: list[ProjectInbox], polled: list[str] | None = None) -> None:
    _say_problems(inboxes)
    if args.json:
        doc = {"version": INBOX_JSON_VERSION, "event": "snapshot", **all_document(inboxes)}
        if polled is not None:
            doc["polled"] = polled
        print(json.dumps(doc, ensure_ascii=True), flush=True)
        return
    print("\n".join(text_lines(inboxes)), flush=True)


def _emit_changed_paths(entry: ProjectEntry, changed: set[Path] | None) -> None:
    doc = {
        "version": INBOX_JSON_VERSION,
        "event": "changed",
        "project": entry.project_id,
        "projectRoot": str(entry.root),
        "paths": None if changed is None else sorted(str(p) for p in changed),
    }
    print(json.dumps(doc, ensure_ascii=True), flush=True)


def _emit_project_changes(args: argparse.Namespace, before: ProjectInbox, after: ProjectInbox) -> None:
    entry = after.entry
    if (before.inbox is None) != (after.inbox is None):
        _emit_readable(args, after)
    if after.inbox is None:
        return  # its decisions are not taken as made while it cannot be read
    old = _whole(before)
    if (
        old is not None
        and args.json
        and (old.unlisted, old.unreadable) != (after.inbox.unlisted, after.inbox.unreadable)
    ):
        doc = {"version": INBOX_JSON_VERSION, "event": "unreadable", "project": entry.project_id}
        print(json.dumps({**doc, **unreadable_fields(after.inbox)}, ensure_ascii=True), flush=True)
    _emit_items(args, after, [] if old is None else old.items, after.inbox.items)


def _emit_readable(args: argparse.Namespace, pi: ProjectInbox) -> None:
    read = pi.inbox is not None
    if args.json:
        doc = {
            "version": INBOX_JSON_VERSION,
            "event": "project",
            "project": pi.entry.project_id,
            "projectRoot": str(pi.entry.root),
            "read": read,
            "problem": pi.problem,
        }
        print(json.dumps(doc, ensure_ascii=True), flush=True)
    elif read:
        print(f"project {visible(pi.entry.project_id)} can be read again", flush=True)
    else:
        print(f"project {visible(pi.entry.project_id)} cannot be read: {visible(pi.problem or '')}", flush=True)


def _emit_items(args: argparse.Namespace, pi: ProjectInbox, before: list[Any], after: list[Any]) -> None:
    from ..workflows.inbox import inbox_changes

    added, removed = inbox_changes(before, after)
    for event, decisions in (("removed", removed), ("added", added)):
        for d in decisions:
            if args.json:
                doc = {"version": INBOX_JSON_VERSION, "event": event, "item": pi.item_json(d)}
                line = json.dumps(doc, ensure_ascii=True)
            else:
                label = d.kind + (f" {d.item}" if d.item else "")
                mark = "+" if event == "added" else "-"
                where = f"{visible(pi.entry.project_id)}  {visible(d.task)}"
                line = f"{mark} {d.since}  {where}  {visible(label)}: {visible(d.summary)}"
            print(line, flush=True)
    sys.stdout.flush()
