"""Notices from the other projects: one child follows every project of the registry but the one open.

The open project has its own notices (:mod:`okstra_tui.notices`). Every other
readable project of the registry (the one Home lists: the managers' projects,
the roots opened in the workbench, the roots named on the command line) is
followed by one child process, ``python -m okstra_tui.child others ROOT
PARENT`` (:func:`serve_others`), which runs ``okstra inbox --all --watch
--json``'s own watching (:func:`okstra_core.commands.inbox_all.watch_entries`:
one :class:`~okstra_core.watch.StoreWatcher` per project, file events where
they can be had) and writes its JSON lines: the snapshot, then per change of a
project a ``changed`` line naming the paths its watcher saw change and an
``added`` or ``removed`` line per decision that starts or stops waiting,
naming its project. :class:`OthersWatcher` reads them in a daemon thread: each
decision that starts waiting is a :class:`~okstra_core.workflows.pulse.Notice`
naming its project, and the paths changed go to the views that read there
(Home, the managers' live children). The follower is the one watcher of those
stores: the workbench's change feed leaves them to it (but those it polls,
whose polling sees only what the inbox reads). The open project is never
followed here (its notices would come twice); opening another project starts a
new follower that skips it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from .children import child_command, end_child

if TYPE_CHECKING:
    from okstra_core.workflows.pulse import Notice

#: Lines that follow each other within this many seconds are one burst (one announcement).
GATHER_SECONDS: Final = 0.1

#: The file-event watchers' step in the follower: each watched project costs a call into Python per step, so
#: twenty projects at this step take about half a percent of a core at idle (at the default step, twice that),
#: and a change is still reported within about 0.3 s of settling.
FOLLOW_STEP: Final = 0.2

#: A burst is handed over after this many seconds even while lines keep coming.
GATHER_MOST_SECONDS: Final = 1.0

#: A line longer than this is not one of the follower's (a snapshot of many projects is far shorter): skipped.
LINE_MAX_BYTES: Final = 32 * 1024 * 1024

#: Bytes taken from the child's pipe at a time.
READ_BYTES: Final = 1 << 16

#: What the child prints when the registry has no other project to follow (and then it ends).
NONE_EVENT: Final = "none"


def others_options(home: Path | None, named: tuple[Path, ...], remembered: bool) -> list[str]:
    """The child's options naming the registry the workbench's Home lists."""
    options = [] if home is None else ["--home", str(home)]
    for root in named:
        options += ["--root", str(root)]
    return options if remembered else [*options, "--no-remembered"]


class OthersWatcher:
    """Follows every other project of the registry from a child process.

    *deliver* gets each burst's new decisions as notices naming their project
    (less those about a task this process wrote in), *changed* once per burst
    of lines about any project with the paths they say changed (None: it cannot
    say which; every view reading there looks again), *following* with the
    roots of the projects whose every change it tells (those it does not poll)
    once they are followed and with none once the child has ended; all from the
    watcher's thread.
    """

    def __init__(
        self,
        root: Path,
        options: list[str],
        deliver: Callable[[list[Notice]], None],
        changed: Callable[[frozenset[str] | None], None],
        following: Callable[[frozenset[Path]], None] = lambda roots: None,
    ) -> None:
        self.root = root
        self.following = following
        self.options = options
        self.deliver = deliver
        self.changed = changed
        #: The real roots of the projects followed (known once the snapshot is read).
        self.projects: frozenset[Path] | None = None
        self._ready = threading.Event()
        self._closed = threading.Event()
        self._child: subprocess.Popen[bytes] | None = None
        self._own: set[Path] = set()
        self._own_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="okstra-others", daemon=True)

    @property
    def ready(self) -> bool:
        """True once the child has read every other project: a decision from now on is news."""
        return self._ready.is_set()

    def start(self) -> None:
        command = child_command("others", self.root, *self.options)
        try:
            self._child = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
            )
        except OSError:
            # No child, no notices from the other projects: the workbench goes on, and its feed watches the
            # other stores itself again (it left them to the follower).
            self.following(frozenset())
            return
        self._thread.start()

    def own_write(self, path: Path) -> None:
        """Note that this process is writing *path* (from :func:`okstra_core.writes.observe_writes`)."""
        with self._own_lock:
            self._own.add(path)

    def close(self) -> None:
        self._closed.set()
        end_child(self._child)

    def _run(self) -> None:
        child = self._child
        assert child is not None and child.stdout is not None
        with contextlib.suppress(OSError, ValueError):  # the pipe broke: these notices stop, the workbench goes on
            self._read(child.stdout.fileno())
        self.following(frozenset())
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=5)  # an ended child is reaped, not left behind until the workbench ends

    def _read(self, fd: int) -> None:
        """Read the child's lines; hand over each burst once the lines pause (or after a second of them)."""
        pending = bytearray()
        burst: list[Notice] = []
        touched = _Touched()
        started = 0.0
        while not self._closed.is_set():
            wait = None
            if burst or touched:
                wait = max(0.0, min(GATHER_SECONDS, started + GATHER_MOST_SECONDS - time.monotonic()))
            readable, _, _ = select.select([fd], [], [], wait)
            if readable:
                chunk = os.read(fd, READ_BYTES)
                if not chunk:
                    self._hand_over(burst, touched)
                    return  # the child ended
                pending += chunk
                lines: list[bytes] = []
                if b"\n" in chunk:  # the line's parts are joined once, when it ends
                    *lines, rest = bytes(pending).split(b"\n")
                    pending = bytearray(rest)
                elif len(pending) > LINE_MAX_BYTES:
                    pending.clear()  # not a line of ours
                if lines and not (burst or touched):
                    started = time.monotonic()
                for line in lines:
                    found, about = self._take(line)
                    burst += found
                    touched.add(about)
                if not (burst or touched) or time.monotonic() < started + GATHER_MOST_SECONDS:
                    continue
            self._hand_over(burst, touched)
            burst, touched = [], _Touched()

    def _hand_over(self, burst: list[Notice], touched: _Touched) -> None:
        if self._closed.is_set():
            return
        found = self._not_own(burst)
        if found:
            self.deliver(found)
        if touched:
            self.changed(touched.paths())

    def _take(self, line: bytes) -> tuple[list[Notice], About]:
        """One line of the child: the notices it makes and what it says changed."""
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            return [], None
        if not isinstance(value, dict):
            return [], None
        event = value.get("event")
        if event == "snapshot":
            self._followed(value)
            return [], EVERYTHING  # a view may have read a project before a change the follower saw first
        if event == "changed":
            paths = value.get("paths")
            if isinstance(paths, list) and all(isinstance(p, str) for p in paths):
                return [], frozenset(paths)
            return [], EVERYTHING
        if event in ("added", "removed"):
            # What changed in the project is told by the ``changed`` line the follower writes before these.
            notice = notice_of(value.get("item")) if event == "added" else None
            return ([] if notice is None else [notice]), None
        if event == NONE_EVENT:
            self.projects = frozenset()
            self._ready.set()
            return [], None
        return [], EVERYTHING if event in ("unreadable", "project") else None

    def _followed(self, snapshot: dict[str, Any]) -> None:
        """The snapshot says which projects are followed: the watcher's ``following`` gets those whose changes it
        will tell in full (not those it polls)."""
        projects, polled = snapshot.get("projects"), snapshot.get("polled")
        if isinstance(projects, list):
            roots = (p.get("projectRoot") for p in projects if isinstance(p, dict))
            self.projects = frozenset(Path(r) for r in roots if isinstance(r, str))
        self._ready.set()
        skipped = {Path(r) for r in polled if isinstance(r, str)} if isinstance(polled, list) else set()
        self.following((self.projects or frozenset()) - skipped)

    def _not_own(self, found: list[Notice]) -> list[Notice]:
        with self._own_lock:
            own, self._own = self._own, set()
        return [n for n in found if n.task_root is None or not any(p.is_relative_to(n.task_root) for p in own)]


#: A burst's lines said something changed but not which paths: the views look again at all they read.
EVERYTHING: Final = "everything"

#: What one line of the child says changed: nothing (None), some paths, or :data:`EVERYTHING`.
About = frozenset[str] | Literal["everything"] | None


class _Touched:
    """What a burst of the child's lines says changed: the paths, or everything once one line cannot say."""

    def __init__(self) -> None:
        self._told: list[frozenset[str] | None] = []

    def __bool__(self) -> bool:
        return bool(self._told)

    def add(self, about: About) -> None:
        if about is not None:
            self._told.append(None if about == EVERYTHING else frozenset(about))

    def paths(self) -> frozenset[str] | None:
        from okstra_core.store_index import changed_in_all

        return changed_in_all(self._told)


def notice_of(item: Any) -> Notice | None:
    """The notice of an ``added`` line's item (a decision of another project), or None when it is not one."""
    from okstra_core import layout
    from okstra_core.text import visible
    from okstra_core.workflows.pulse import Notice, decision_text

    if not isinstance(item, dict):
        return None
    fields = [item.get(k) for k in ("kind", "task", "path", "summary", "project", "projectRoot")]
    extra = item.get("item")
    if not all(isinstance(f, str) for f in fields) or not (extra is None or isinstance(extra, str)):
        return None
    kind, task, path, summary, project, root = (str(f) for f in fields)
    project_root = Path(root)
    relative = Path(path)
    inside = not relative.is_absolute() and ".." not in relative.parts
    task_root = layout.task_root_of(project_root, project_root / relative) if inside else None
    text = decision_text(kind, extra, summary)
    return Notice("decision", visible(task), text, task_root, project=visible(project), project_root=project_root)


def serve_others(root: str, options: list[str]) -> int:
    """The child's job: follow every readable project of the registry but the one at *root* (see the module)."""
    import sys

    from okstra_core.commands.inbox_all import watch_entries
    from okstra_core.projects import discover

    parser = argparse.ArgumentParser(prog="python -m okstra_tui.child others ROOT PARENT_PID", add_help=False)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--root", type=Path, action="append", default=[], dest="roots")
    parser.add_argument("--no-remembered", action="store_false", dest="remembered")
    try:
        given = parser.parse_args(options)
    except SystemExit:
        return 2  # argparse said why in one line
    skip = Path(os.path.realpath(root))
    registry = discover(given.home, named=given.roots, remembered=given.remembered)
    entries = [e for e in registry.entries if e.readable and e.root != skip]
    try:
        if not entries:
            print(json.dumps({"event": NONE_EVENT}), flush=True)
            return 0
        # Each project is read through its store index (a warm start reads only what changed). Where watchman
        # runs, the index asks it what changed and the watchers subscribe to it: one watch of each store, the
        # daemon's. Without it the follower watches every store itself, and the index takes one stat pass.
        return watch_entries(
            argparse.Namespace(json=True, no_watchman=False), entries, step=FOLLOW_STEP, tell_paths=True
        )
    except BrokenPipeError:  # the workbench closed the pipe: it ended
        sys.stderr.close()
        return 0
