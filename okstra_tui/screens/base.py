"""What every view shares: its location, a breadcrumb line, the footer, and live refresh."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self, runtime_checkable

from rich.text import Text
from textual import events, on, work
from textual.app import ScreenStackError
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widget import Widget

from okstra_core import layout, reading
from okstra_core.store import Project, Task, TaskRef
from okstra_core.store_index import ChangedSince
from okstra_core.text import visible
from okstra_core.watch import POLL_SHARE, UNSETTLED, Signature

from ..data.catalog import KeptWaiting
from ..data.unread import Looks
from ..navigation import Location, OpenView, StoreChanged, StoreWatched, View
from ..ui_thread import call_ui
from ..widgets import read_only
from ..widgets.preview import ArtifactPreview

#: Below this many columns a view lays its panels out for a small terminal (80x24 is most terminals' default).
NARROW_COLUMNS = 100

#: Seconds after a load that read a file written just before, to look at it once more (the racy window).
RACY_SECONDS = 0.2

#: A view that any change in the store may change (:attr:`ViewScreen.WHOLE_STORE`) reads again at least this many
#: seconds after the change (a burst of writes is one reading), and spends at most this share of a core doing so:
#: after a reading that took *t* seconds, the next starts no sooner than *t* / share after it.
WHOLE_STORE_SECONDS = 0.5
WHOLE_STORE_SHARE = 0.2
#: Where the store is polled (no file events, no watchman), nothing tells a whole-store view of a file written
#: where no view read: it reads again on its own, at least this many seconds after its last reading ended and
#: spending at most this share of a core (the share a polling watcher spends).
WHOLE_STORE_POLL_SECONDS = 5.0
WHOLE_STORE_POLL_SHARE = POLL_SHARE


@runtime_checkable
class Workbench(Protocol):
    """What a view needs from the app that shows it: the project it browses."""

    @property
    def project(self) -> Project:
        """The current read-side handle (it caches what it read)."""
        ...

    def fresh_project(self) -> Project:
        """A new read-side handle, for a reading that must see the files as they are now."""
        ...

    @property
    def looks(self) -> Looks:
        """The session's visits to tasks: what is new inside a task since the person last looked."""
        ...

    @property
    def project_label(self) -> str:
        """How the breadcrumbs name the project."""
        ...

    def kept_waiting(self, root: Path) -> KeptWaiting:
        """The count of what waits in the project at *root* as the store index keeps it (read in a thread)."""
        ...

    @property
    def store_polled(self) -> bool:
        """Whether the project's store is polled (nothing names a change where no view read)."""
        ...

    @property
    def store_watched(self) -> bool:
        """Whether the change feed watches the project's store already (a reading begun now misses no change)."""
        ...

    def told_since(self, kept: str | None) -> bool:
        """Whether the change feed has told every change to what the inbox reads since it was kept with *kept*."""
        ...

    @property
    def watching_feed(self) -> object | None:
        """The change feed once it watches the project's store (None: not yet); a new one per project opened."""
        ...


def holds(look: ChangedSince, read: Signature) -> bool:
    """True when every path in *read* still has the metadata recorded (as *look* sees it)."""
    return all(look.holds(path, sig) for path, sig in read.items())


class Breadcrumbs(Widget):
    """The one line at the top naming the project and the path to this view (after a READ-ONLY badge, if so).

    When the line is too narrow the crumbs nearest the project give way to
    "…" first: the last crumb (where the view is) is the one to keep.
    """

    DEFAULT_CSS = """
    Breadcrumbs { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(self, project: str, crumbs: list[str]) -> None:
        super().__init__()
        self.project = project
        self.crumbs = crumbs

    def show(self, crumbs: list[str]) -> None:
        self.crumbs = crumbs
        self.refresh()

    def line(self, width: int) -> Text:
        """The crumbs fitted to *width* cells."""
        crumbs = list(self.crumbs)
        text = self._text(crumbs)
        while text.cell_len > width and len(crumbs) > 1 and crumbs[:2] != ["…", crumbs[-1]]:
            crumbs = ["…", *crumbs[2:]] if crumbs[0] == "…" else ["…", *crumbs[1:]]
            text = self._text(crumbs)
        text.truncate(max(width, 1), overflow="ellipsis")
        return text

    def _text(self, crumbs: list[str]) -> Text:
        text = read_only.badge()
        text.no_wrap = True
        if text:
            text.append(" ")
        text.append("okstra ", style="bold")
        text.append(visible(self.project), style="bold")
        for part in crumbs:
            text.append("  ›  ", style="dim")
            text.append(visible(part))
        return text

    def render(self) -> Text:
        return self.line(self.size.width)


class ViewScreen(Screen[None]):
    """Base of the navigable views.

    A view is :meth:`read` (in a worker, recorded) and :meth:`show` (on the UI
    thread); :meth:`load` runs one and hands its result to the other. The app's
    one change feed (:class:`~okstra_tui.navigation.StoreChanged`) makes the
    view look again at what it read, and reload only when that changed.
    """

    #: Short description shown by ``?`` above the key list.
    HELP: ClassVar[str] = ""
    VIEW_NAME: ClassVar[View]
    #: Whether any file of the store may change what the view shows, not only those it read (a search's hits, a
    #: check's findings: a file written anywhere may match or break the contract). Such a view reads again after
    #: any change in the store, no more often than :data:`WHOLE_STORE_SHARE` allows.
    WHOLE_STORE: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        #: What the last load read (each path with its metadata then): what makes the view stale.
        self.depends_on: Signature = {}
        #: What each part read: the load's (key "") and the parts a view reads besides (:meth:`read_also`).
        self._parts: dict[str, Signature] = {}
        #: How many loads have been shown.
        self.reads = 0
        self._loads = 0
        self._stale = False
        #: The theme this screen was last shown under (None until it has been shown and left once).
        self._shown_theme: str | None = None
        #: How long the last reading of a whole-store view took, when it ended (monotonic), and the reading to come.
        self._read_seconds = 0.0
        self._read_ended = 0.0
        self._rereading: Timer | None = None
        self._polling: Timer | None = None
        #: The change feed under which the view last looked again at all it read (:meth:`_look_again_once`).
        self._checked_under: object | None = None

    # ------------------------------------------------------------ resuming

    @on(events.ScreenSuspend)
    def _remember_theme(self) -> None:
        self._shown_theme = self.app.theme

    @on(events.Resize)
    def _fit_width(self, event: events.Resize) -> None:
        self.fit_width(event.size.width)

    def fit_width(self, width: int) -> None:
        """Mark the view ``-narrow`` below :data:`NARROW_COLUMNS`: its panels stack or narrow (see okstra.tcss)."""
        self.set_class(width < NARROW_COLUMNS, "-narrow")

    @on(events.ScreenResume)
    def _keep_styles(self, event: events.ScreenResume) -> None:
        """A kept screen shown again under the same theme keeps its computed styles.

        Textual re-applies every CSS rule to every widget when a screen is pushed,
        which also throws away every widget's rendered lines; for a screen that
        was already styled and only hidden (the kept task view) that is most of
        the cost of showing it. Popping back to a screen skips it the same way.
        """
        self.fit_width(self.app.size.width)  # the terminal may have been resized while this view was hidden
        if self._shown_theme is not None and self._shown_theme == self.app.theme:
            event.refresh_styles = False

    @classmethod
    def from_location(cls, location: Location) -> Self:
        """A screen showing *location* (the views that show one task or file override this)."""
        return cls()

    @property
    def okstra(self) -> Workbench:
        """The app showing this view."""
        app = self.app
        if not isinstance(app, Workbench):
            raise TypeError("okstra views run inside the okstra workbench app")
        return app

    def open_task(self, task_root: Path) -> Task:
        """The task at *task_root*, read afresh (whether or not the catalog names it)."""
        project = Project(self.okstra.project.root)
        return TaskRef(project, task_root.parent.name, task_root.name, task_root).open()

    def open_view(self, location: Location) -> None:
        """Open *location* on top of this view; back returns here."""
        self.post_message(OpenView(location))

    @property
    def location(self) -> Location:
        return Location(self.VIEW_NAME)

    def crumbs(self) -> list[str]:
        return [self.VIEW_NAME.capitalize()]

    def breadcrumbs(self) -> Breadcrumbs:
        return Breadcrumbs(self.okstra.project_label, self.crumbs())

    def refresh_breadcrumbs(self) -> None:
        """Show the current crumbs (after the view was re-aimed at something else, or the project changed)."""
        for widget in self.query(Breadcrumbs):
            widget.project = self.okstra.project_label
            widget.show(self.crumbs())

    def current_path(self) -> Path | None:
        """The file or folder that "copy path", "editor" and "pager" act on."""
        return None

    def focus_query(self) -> None:
        """Put the cursor in the view's text field, for a view that has one (Search)."""

    def open_form(self, form: ModalScreen[Path | None]) -> None:
        """Show a decision wizard; once it wrote a file (it says which), re-read the view."""

        def written(path: Path | None) -> None:
            if path is not None:
                self.reload()

        self.app.push_screen(form, written)

    # ---------------------------------------------------------------- live

    def read(self) -> Any:
        """What the view shows, read from the store (in a worker thread: no widget access).

        Every file read, folder listed and path probed through :mod:`okstra_core.reading` while it runs is
        recorded: the view reloads when one of them changes, and only then. Nothing lists them by hand.
        """
        return None

    def show(self, data: Any) -> Awaitable[None] | None:
        """Put *data*, what :meth:`read` returned, on screen (on the UI thread; it may be a coroutine)."""
        return None

    def load(self) -> None:
        """Read what the view shows in a worker and show it; a load started later supersedes this one."""
        self._loads += 1
        self._stale = False
        self._read_in_worker(self._loads)

    def reload(self) -> None:
        """Re-read what the view shows (what it read changed, or a write was made from it)."""
        self.load()

    @on(events.Mount)
    def _first_load(self) -> None:
        # A handler of its own: Textual calls every class's ``on_mount``, so the views' own run as well.
        self.first_load()

    def first_load(self) -> None:
        """What the view reads when it is mounted: a :meth:`load` (a view that paints its first frame another way
        overrides this)."""
        self.load()

    @work(thread=True, exclusive=True, group="view-read", description="view-read")
    def _read_in_worker(self, load: int) -> None:
        began = getattr(self.app, "watching_feed", None)
        with reading.recording() as reads:
            data = self.read()
        call_ui(self.app, self._hand_back, load, data, reads.paths, began)

    def _hand_back(self, load: int, data: Any, read: Signature, began: object | None) -> Awaitable[None] | None:
        if load != self._loads:
            return None  # a later load is under way: it shows what is there now
        self.read_done(read, began)
        return self.show(data)

    def read_done(self, read: Signature, began: object | None = None) -> None:
        """The view now shows what was read as *read*: what makes it stale from now on. *began*: the change feed
        that watched the store when the reading began (None: none did, or it is not known)."""
        self.reads += 1
        self._parts[""] = read
        if began is not None and began is getattr(self.app, "watching_feed", None):
            self._checked_under = began  # every change since the reading began is told
        self._depend_on()

    def read_also(self, part: str, read: Signature | None) -> None:
        """*part* of the view (the rows scrolled into view) read *read* besides its load: that, too, makes the view
        stale, until the part is read anew (None: it is shown no more, or will be read afresh)."""
        if read is None:
            self._parts.pop(part, None)
        else:
            self._parts[part] = {**read, **self._parts.get(part, {})}
        self._depend_on()

    def _depend_on(self) -> None:
        read: Signature = {}
        for part in self._parts.values():
            for path, sig in part.items():
                read.setdefault(path, sig)
        self.depends_on = read
        follow = getattr(self.app, "follow_reads", None)
        if follow is not None:
            follow(self, read)
        if any(sig == UNSETTLED for sig in read.values()):
            # Written within the clock's resolution of the read: a second write could keep its metadata.
            self.set_timer(RACY_SECONDS, lambda: self._verify(None, []))
        self._look_again_once()

    def _look_again_once(self) -> None:
        """A reading that began before the change feed watched the store may have missed a change made in
        between, which no burst tells of: the first reading shown once it watches is looked at again, whole
        (once per feed, unless the reading began under it)."""
        feed = getattr(self.app, "watching_feed", None)
        if feed is None or feed is self._checked_under:
            return
        self._checked_under = feed
        self._look_again(None)

    def _look_again(self, changed: frozenset[str] | None) -> None:
        parts = [(preview, preview.depends_on) for preview in self.query(ArtifactPreview) if preview.depends_on]
        if self.depends_on or parts:
            self._verify(changed, parts)

    @on(StoreWatched)
    def _feed_watches(self) -> None:
        """The feed watches the store from now on: what the view shows was read before (a reading under way ends
        in :meth:`_look_again_once`); a whole-store view reads again, any other looks again at what it read."""
        feed = getattr(self.app, "watching_feed", None)
        if feed is None or feed is self._checked_under:
            return
        if self.WHOLE_STORE and self.reads:
            self._store_moved()
        else:
            self._look_again(None)

    def paths_changed(self, paths: frozenset[str] | None) -> None:
        """The app's change feed told of *paths* (None: it cannot say which), before the view looks again at what
        it read (a view that reads in parts keeps them, to read again only the parts they touch)."""

    def read_took(self, seconds: float) -> None:
        """A whole-store view's reading took *seconds* and has just ended: the next waits accordingly. Where the
        store is polled, the next comes anyway, once the share of a core a polling watcher spends allows."""
        self._read_seconds = seconds
        self._read_ended = time.monotonic()
        if self._polling is not None:
            self._polling.stop()
        due = max(WHOLE_STORE_POLL_SECONDS, seconds / WHOLE_STORE_POLL_SHARE)
        self._polling = self.set_timer(due, self._poll_whole)

    def _poll_whole(self) -> None:
        self._polling = None
        if self.okstra.store_polled and self._rereading is None:
            self._went_stale(True, [])

    def store_moved(self, paths: frozenset[str] | None) -> bool:
        """Whether *paths* (None: cannot say which) may change what a whole-store view shows: a path in the store."""
        if paths is None:
            return True
        store = os.fspath(layout.okstra_dir(self.okstra.project.root)) + os.sep
        return any(path.startswith(store) for path in paths)

    @on(StoreChanged)
    def _store_changed(self, event: StoreChanged) -> None:
        self.paths_changed(event.paths)
        parts = [(preview, preview.depends_on) for preview in self.query(ArtifactPreview) if preview.depends_on]
        if self.WHOLE_STORE and self.store_moved(event.paths):
            self._store_moved()
            if parts:
                self._verify(event.paths, parts, whole=False)
        elif self.depends_on or parts:
            self._verify(event.paths, parts)

    def _store_moved(self) -> None:
        """Read again once the burst is over and the share of a core allows (one reading for many changes)."""
        if self._rereading is not None:
            return
        due = self._read_ended + self._read_seconds / WHOLE_STORE_SHARE - time.monotonic()
        self._rereading = self.set_timer(max(WHOLE_STORE_SECONDS, due), self._reread_whole)

    def _reread_whole(self) -> None:
        self._rereading = None
        self._went_stale(True, [])

    @work(thread=True, exclusive=True, group="view-verify", description="view-verify")
    def _verify(
        self,
        changed: frozenset[str] | None,
        parts: list[tuple[ArtifactPreview, Signature]] | None = None,
        whole: bool = True,
    ) -> None:
        """Look again at what the view (and each preview in it) read that *changed* touches (all of it when None);
        read again what no longer holds (only the previews' reads, without *whole*)."""
        look = ChangedSince(None if changed is None else set(changed))
        view = whole and not holds(look, self.depends_on)
        stale = [preview for preview, shown in parts or () if not holds(look, shown)]
        if view or stale:
            call_ui(self.app, self._went_stale, view, stale)

    def _went_stale(self, view: bool, previews: list[ArtifactPreview]) -> None:
        for preview in previews:
            if preview.is_attached:
                preview.reload()
        if not view:
            return
        try:
            on_top = self.app.screen is self
        except ScreenStackError:
            return  # the app is closing
        if on_top:
            self.load()
        else:
            self._stale = True  # read again when it is shown, not while hidden

    @on(events.ScreenResume)
    def _resume_stale(self) -> None:
        if self._stale:
            self.load()

    @on(events.Unmount)
    def _unfollow(self) -> None:
        drop = getattr(self.app, "drop_reads", None)
        if drop is not None:
            drop(self)
