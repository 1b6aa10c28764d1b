"""The workbench's one change feed: a thread waits on the store watcher and hands each burst of changes to the app.

One :class:`okstra_core.watch.StoreWatcher` per open project (file events,
else polling), so that views do not each look at the store on their own: the
app turns each burst into one :class:`~okstra_tui.navigation.StoreChanged`
for every view, and a view re-reads only when what it read is among the paths
named (or when they cannot be named).

The views tell the feed what they read (:meth:`StoreFeed.follow`): when the
watcher polls (no file events here), those paths and what the inbox reads are
what it polls; a path outside the store (the manager home, the write log in
the user's state folder), which no store watcher sees, is looked at once a
second by the feed itself, but for what lies in the stores of the projects
the follower of the other projects watches (:meth:`StoreFeed.leave_to`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from okstra_core import layout
from okstra_core.store import Project
from okstra_core.watch import Signature, StoreWatcher, differs, signature

#: Seconds a wait lasts before the thread looks at the paths outside the store and whether it should stop.
WAIT_SECONDS = 1.0


class StoreFeed:
    """Calls *deliver* from its own thread with the paths changed in each burst (None: cannot say which)."""

    def __init__(self, root: Path, deliver: Callable[[frozenset[str] | None], None]) -> None:
        self.root = root
        self._deliver = deliver
        self._store = os.fspath(layout.okstra_dir(root)) + os.sep
        self._stop = threading.Event()
        self._watcher: StoreWatcher | None = None
        self._lock = threading.Lock()
        self._followed: dict[object, frozenset[str]] = {}
        self._outside: Signature = {}
        #: Folders (with a trailing separator) whose paths another watcher follows: not looked at here.
        self._left: tuple[str, ...] = ()
        #: The paths the feed looks at itself and every path followed, worked out again only when either changes
        #: (Home follows tens of thousands of paths of the other projects: sorting them out once a second costs).
        self._looked_at: tuple[list[str], set[str]] | None = None
        self._thread = threading.Thread(target=self._run, name="okstra-store-feed", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def follow(self, reader: object, paths: Iterable[str] | Signature) -> None:
        """*reader* (a view) read *paths*: look at them from now on, in place of what it read before.

        Given what the reader saw of each path (a :data:`Signature`), a path outside the store is compared with
        that at the feed's next look, so that a change made between the reading and that look is not missed.
        """
        with self._lock:
            self._followed[reader] = frozenset(paths)
            self._looked_at = None
            if isinstance(paths, Mapping):
                for path, sig in paths.items():
                    if not path.startswith(self._store):
                        self._outside.setdefault(path, sig)

    def drop(self, reader: object) -> None:
        """*reader* is gone: what it read is no longer looked at for it."""
        with self._lock:
            self._followed.pop(reader, None)
            self._looked_at = None

    def leave_to(self, folders: Iterable[Path]) -> None:
        """Another watcher follows what lies in *folders* (the stores of the other projects) and says when it
        changes: the feed no longer looks at it once a second (an empty *folders*: it looks at everything again)."""
        with self._lock:
            self._left = tuple(os.fspath(f) + os.sep for f in folders)
            self._looked_at = None

    def followed(self) -> set[str]:
        with self._lock:
            return set().union(*self._followed.values())

    def _poll_paths(self) -> list[Path]:
        """What a polling watcher looks at: what the inbox reads and what the views read inside the store."""
        from okstra_core.workflows.inbox import read_paths

        inside = {p for p in self.followed() if p.startswith(self._store)}
        return [*read_paths(Project(self.root)), *(Path(p) for p in sorted(inside))]

    def _outside_changes(self) -> set[str]:
        """The paths outside the store that views read and that changed since the feed last looked."""
        with self._lock:
            if self._looked_at is None:
                every: set[str] = set().union(*self._followed.values())
                skipped = (self._store, *self._left)
                self._looked_at = (sorted(p for p in every if not p.startswith(skipped)), every)
                # A path no longer followed is forgotten; one left to another watcher keeps what was seen of it.
                self._outside = {p: sig for p, sig in self._outside.items() if p in every}
            outside, _ = self._looked_at
            # What a reader saw of a path it began to follow meanwhile is the baseline of this look.
            before = {p: self._outside[p] for p in outside if p in self._outside}
        now = signature([Path(p) for p in outside])
        with self._lock:
            self._outside.update(now)
        return {p for p, sig in now.items() if p in before and differs({p: before[p]}, {p: sig})}

    def _run(self) -> None:
        watcher: StoreWatcher | None
        try:
            watcher = StoreWatcher(layout.okstra_dir(self.root), self._poll_paths)
        except OSError:
            # No store to watch (it went away): the views' own reads say so; what they read outside it (other
            # projects, the manager home) is still looked at.
            watcher = None
        self._watcher = watcher
        if self._stop.is_set():
            if watcher is not None:
                watcher.close()
            return
        self._outside_changes()
        while not self._stop.is_set():
            if watcher is None:
                self._stop.wait(WAIT_SECONDS)
            elif watcher.wait(WAIT_SECONDS):
                taken = watcher.take_changed()
                self._deliver(None if taken is None else frozenset(str(p) for p in taken))
            outside = self._outside_changes()
            if outside and not self._stop.is_set():
                self._deliver(frozenset(outside))

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.close()
