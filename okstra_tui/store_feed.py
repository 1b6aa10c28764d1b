"""The workbench's one change feed: a thread waits on the store watcher and hands each burst of changes to the app.

One :class:`okstra_core.watch.StoreWatcher` per open project (file events,
else polling), so that views do not each look at the store on their own: the
app turns each burst into one :class:`~okstra_tui.navigation.StoreChanged`
for every view, and a view re-reads only when what it read is among the paths
named (or when they cannot be named).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from okstra_core import layout
from okstra_core.store import Project
from okstra_core.watch import StoreWatcher

#: Seconds a wait lasts before the thread looks whether it should stop.
WAIT_SECONDS = 1.0


class StoreFeed:
    """Calls *deliver* from its own thread with the paths changed in each burst (None: cannot say which)."""

    def __init__(self, root: Path, deliver: Callable[[frozenset[str] | None], None]) -> None:
        self.root = root
        self._deliver = deliver
        self._stop = threading.Event()
        self._watcher: StoreWatcher | None = None
        self._thread = threading.Thread(target=self._run, name="okstra-store-feed", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        from okstra_core.workflows.inbox import watched_paths

        project = Project(self.root)
        try:
            watcher = StoreWatcher(layout.okstra_dir(self.root), lambda: watched_paths(project))
        except OSError:
            return  # no store to watch (it went away): the views' own reads say so
        self._watcher = watcher
        if self._stop.is_set():
            watcher.close()
            return
        while not self._stop.is_set():
            if watcher.wait(WAIT_SECONDS):
                taken = watcher.take_changed()
                self._deliver(None if taken is None else frozenset(str(p) for p in taken))

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.close()
