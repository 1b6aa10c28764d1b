"""The workbench's one change feed: a thread waits on the store watcher and hands each burst of changes to the app.

One :class:`okstra_core.watch.StoreWatcher` per open project (file events,
else polling), so that views do not each look at the store on their own: the
app turns each burst into one :class:`~okstra_tui.navigation.StoreChanged`
for every view, and a view re-reads only when what it read is among the paths
named (or when they cannot be named).

The views tell the feed what they read (:meth:`StoreFeed.follow`): when the
watcher polls (no file events here), it looks at those paths itself and asks
the store index what changed among what the inbox reads (the index looks at
each path it recorded, so the feed keeps no baseline of them). A path inside another project's store (Home reads every
project's inbox) is watched by a store watcher of that store, made when a view
first reads there and closed when none does any more, so that following many
large projects costs their file events rather than a look at every file they
read each second. While the follower of the other projects (a child of the
workbench) watches their stores, the feed leaves them to it
(:meth:`StoreFeed.leave_to`), and when such a follower is to start it leaves
every other store to it from the start (:meth:`StoreFeed.leave_others`): one
watcher per store, not one here and one there. Any other path outside the store (the manager
home, the write log in the user's state folder), which no store watcher sees,
is looked at once a second by the feed itself, as is a path in the store that a view read through a symlink
(the watcher names the symlink's target when it changes, which may lie outside the store).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from okstra_core import layout, reading
from okstra_core.watch import Signature, StoreWatcher, differs, signature

if TYPE_CHECKING:
    from okstra_core.workflows.inbox import InboxTold

#: Seconds a wait lasts before the thread looks at the paths outside the store and whether it should stop.
WAIT_SECONDS = 1.0
#: Seconds the feed waits on the watcher of another project's store at each look (it only takes what is due).
OTHER_WAIT_SECONDS = 0.001
#: Seconds between two looks of another project's watcher at its file events: Home follows many projects, and a
#: change there shows within the feed's second all the same.
OTHER_STEP_SECONDS = 0.25


class StoreFeed:
    """Calls *deliver* from its own thread with the paths changed in each burst (None: cannot say which)."""

    def __init__(
        self,
        root: Path,
        deliver: Callable[[frozenset[str] | None], None],
        warn: Callable[[str], None] | None = None,
        watching: Callable[[], None] | None = None,
        looked: Callable[[], None] | None = None,
    ) -> None:
        """*watching*: called once from the feed's thread when its watcher is in place (every change after that is
        told); *looked*: called once from there when the watcher's looks of the start are done too
        (:attr:`StoreWatcher.looked`)."""
        self.root = root
        self._deliver = deliver
        self._watching = watching
        self._looked_said = looked
        #: Set once the watcher is in place (or there is no store to watch).
        self.started = threading.Event()
        #: Set once the watcher's looks of the start are done (polled, a large store's first full looks each
        #: hold tens of megabytes for seconds: what starts after the start waits for them).
        self.looked = threading.Event()
        #: Waited for before a polling watcher's first look at what the inbox reads (:class:`InboxTold`): the
        #: count of what waits that brings the store index up to date as the workbench starts.
        self.ready: Callable[[], object] | None = None
        #: Told once, from the feed's thread, why the project's store is polled when polling was not asked for.
        self._warn = warn
        self._warned = False
        self._store = os.fspath(layout.okstra_dir(root)) + os.sep
        self._stop = threading.Event()
        self._watcher: StoreWatcher | None = None
        self._inbox_told: InboxTold | None = None
        self._lock = threading.Lock()
        self._followed: dict[object, frozenset[str]] = {}
        self._outside: Signature = {}
        #: A watcher of each other project's store (its folder, with a trailing separator) that views read in.
        self._others: dict[str, StoreWatcher] = {}
        #: Counts the changes to what the views follow; the grouping below is worked out again after one.
        self._version = 0
        #: What the views follow outside the store, as of a version: the paths the feed looks at itself, and the
        #: paths in each other project's store.
        self._grouped: tuple[int, list[str], dict[str, list[str]]] = (-1, [], {})
        #: Stores (folders with a trailing separator) another watcher follows and tells of: not looked at here.
        self._left: tuple[str, ...] = ()
        #: Every store but the project's own is left to another watcher (:meth:`leave_others`).
        self._left_all = False
        self._thread = threading.Thread(target=self._run, name="okstra-store-feed", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def follow(self, reader: object, paths: Iterable[str] | Signature) -> None:
        """*reader* (a view) read *paths*: look at them from now on, in place of what it read before.

        Given what the reader saw of each path (a :data:`Signature`), a path outside the store is compared with
        that at the feed's next look, so that a change made between the reading and that look is not missed.
        """
        with self._lock:
            self._version += 1
            self._followed[reader] = frozenset(paths)
            if isinstance(paths, Mapping):
                for path, sig in paths.items():
                    if not path.startswith(self._store) or reading.seen_through_link(path):
                        self._outside.setdefault(path, sig)

    def drop(self, reader: object) -> None:
        """*reader* is gone: what it read is no longer looked at for it."""
        with self._lock:
            self._version += 1
            self._followed.pop(reader, None)

    def leave_others(self) -> None:
        """Another watcher is to follow every other project's store: the feed neither watches nor looks at any
        (until :meth:`leave_to` says which stores that watcher follows once it does). What the views read there
        meanwhile is kept as they saw it: a store taken back is looked at against that."""
        with self._lock:
            self._version += 1
            self._left_all = True

    def leave_to(self, folders: Iterable[Path]) -> None:
        """Another watcher follows what lies in *folders* (the stores of the other projects) and says when it
        changes: the feed neither watches nor looks at it (an empty *folders*: it takes everything back, each
        path against how it was when it was left)."""
        left = tuple(os.fspath(f) + os.sep for f in folders)
        # What views read in the stores left from now on is kept as it is now: taken back, each path is looked
        # at against it, so a change made meanwhile shows. (Left with every other store, what they read there
        # is kept as the views saw it.)
        leaving = () if self._left_all else tuple(f for f in left if f not in self._left)
        now = signature([p for p in sorted(self.followed()) if leaving and p.startswith(leaving)])
        with self._lock:
            self._version += 1
            self._left = left
            self._left_all = False
            self._outside.update(now)

    def followed(self) -> set[str]:
        with self._lock:
            return set().union(*self._followed.values())

    def _poll_paths(self) -> list[str]:
        """What a polling watcher looks at itself: what the views read inside the store. What the inbox reads is
        asked of the store index (:meth:`_told`)."""
        return sorted(p for p in self.followed() if p.startswith(self._store))

    def _told(self) -> InboxTold:
        """What changed among what the inbox reads, for a polling watcher: the store index looks once at each path
        its kept inbox read, reads again only the tasks whose files changed, and names the paths that did (the
        workbench keeps no baseline of the hundreds of thousands of paths a large store's inbox reads)."""
        from okstra_core.commands.common import inbox_told

        self._inbox_told = inbox_told(self.root, ready=self.ready)
        return self._inbox_told

    def told_since(self, kept: str | None) -> bool:
        """Whether the feed watches and has told every change to what the inbox reads since the inbox was kept in
        the store index with the MAC *kept* (its polling watcher's first look compared with that very reading): a
        count of what waits that left it so misses nothing without a whole look."""
        watcher, told = self._watcher, self._inbox_told
        if not self.started.is_set() or watcher is None or watcher.mode != "poll" or told is None:
            return False
        return kept is not None and told.first_found == kept

    def _outside_changes(self) -> set[str]:
        """The paths outside the store that views read and that changed since the feed last looked."""
        looked, stores = self._grouped_outside()
        new, changed, unwatched = self._other_stores(stores)
        # A store watched from now on: what views read there before its watcher started is looked at once.
        joined = {p for store in new for p in stores[store]}
        now = signature([*looked, *sorted(joined), *(p for s in unwatched for p in stores[s])])
        with self._lock:
            before = self._outside
            seen = {p for p, sig in now.items() if p in before and differs({p: before[p]}, {p: sig})}
            # What a reader saw of a path it began to follow meanwhile stays the baseline of the next look.
            before.update((p, sig) for p, sig in now.items() if p not in joined)
            for path in joined:
                before.pop(path, None)
        return seen | changed

    def _grouped_outside(self) -> tuple[list[str], dict[str, list[str]]]:
        """What the views follow outside the store: the paths the feed looks at itself, and those in each other
        project's store (worked out again only when what the views follow changed, when the baselines of paths
        no longer looked at by the feed are dropped)."""
        with self._lock:
            if self._grouped[0] == self._version:
                return self._grouped[1], self._grouped[2]
            version = self._version
            followed = set().union(*self._followed.values())
            skipped = (self._store, *self._left)
            left_all = self._left_all
        looked: list[str] = []
        stores: dict[str, list[str]] = {}
        for path in sorted(followed):
            if path.startswith(self._store) and reading.seen_through_link(path):
                # Read through a symlink: the store's watcher names its target when it changes, never this path.
                looked.append(path)
            elif not path.startswith(skipped):
                store = layout.store_of(path)
                if store is None:
                    looked.append(path)
                elif not left_all:
                    stores.setdefault(store, []).append(path)
        with self._lock:
            left = self._left
            self._outside = {
                p: sig
                for p, sig in self._outside.items()
                if p in followed
                and (not p.startswith(self._store) or reading.seen_through_link(p))
                and (p.startswith(left) or layout.store_of(p) not in self._others)
            }
        self._grouped = (version, looked, stores)
        return looked, stores

    def _other_stores(self, stores: dict[str, list[str]]) -> tuple[list[str], set[str], list[str]]:
        """Watch the other projects' *stores* (and no others): the stores watched from now on, the paths the
        others saw change since the last look, and the stores that cannot be watched (gone: the feed looks at
        what was read there itself)."""
        for store in [s for s in self._others if s not in stores]:
            self._others.pop(store).close()
        new: list[str] = []
        unwatched: list[str] = []
        changed: set[str] = set()
        for store, paths in stores.items():
            watcher = self._others.get(store)
            if watcher is None:
                if self._stop.is_set():
                    break
                try:
                    made = StoreWatcher(Path(store), partial(self._followed_in, store), step=OTHER_STEP_SECONDS)
                except OSError:
                    unwatched.append(store)
                    continue
                self._others[store] = made
                new.append(store)
                if self._stop.is_set():  # closed while it started: close() did not see it
                    made.close()
            elif watcher.wait(OTHER_WAIT_SECONDS):
                taken = watcher.take_changed()
                changed.update(paths if taken is None else (str(p) for p in taken))
        return new, changed, unwatched

    def _followed_in(self, store: str) -> list[Path]:
        """What a polling watcher of another project's *store* looks at: what the views read there."""
        return [Path(p) for p in self._grouped[2].get(store, [])]

    @property
    def polled(self) -> bool:
        """Whether the project's store is polled (or not watched yet): only what the views read is looked at."""
        watcher = self._watcher
        return watcher is None or watcher.mode == "poll"

    def watching(self) -> int:
        """How many other projects' stores are watched."""
        return len(self._others)

    def _run(self) -> None:
        watcher: StoreWatcher | None
        try:
            watcher = StoreWatcher(layout.okstra_dir(self.root), self._poll_paths, told=self._told())
        except OSError:
            # No store to watch (it went away): the views' own reads say so; what they read outside it (other
            # projects, the manager home) is still looked at.
            watcher = None
        self._watcher = watcher
        if self._stop.is_set():
            if watcher is not None:
                watcher.close()
            return
        self.started.set()
        if self._watching is not None:
            self._watching()
        self._say_looked(watcher)
        # What changed since the views read it (their baselines) is told at the first look too.
        outside = self._outside_changes()
        if outside and not self._stop.is_set():
            self._deliver(frozenset(outside))
        while not self._stop.is_set():
            self._tell_polling(watcher)
            if watcher is None:
                self._stop.wait(WAIT_SECONDS)
            elif watcher.wait(WAIT_SECONDS):
                taken = watcher.take_changed()
                self._deliver(None if taken is None else frozenset(str(p) for p in taken))
            self._say_looked(watcher)
            outside = self._outside_changes()
            if outside and not self._stop.is_set():
                self._deliver(frozenset(outside))

    def _say_looked(self, watcher: StoreWatcher | None) -> None:
        if self.looked.is_set() or (watcher is not None and not watcher.looked.is_set()):
            return
        self.looked.set()
        if self._looked_said is not None:
            self._looked_said()

    def _tell_polling(self, watcher: StoreWatcher | None) -> None:
        """Say once why the store is polled (changes made elsewhere then show within seconds, not at once),
        unless polling was asked for."""
        if self._warned or self._warn is None or watcher is None or watcher.mode != "poll":
            return
        self._warned = True
        if "asked for" not in watcher.why:
            self._warn(f"{self.root.name}: {watcher.why}; changes made elsewhere show within seconds, not at once")

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.close()
        for watcher in list(self._others.values()):
            watcher.close()
