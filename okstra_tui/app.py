"""The workbench app: navigation, global keys, the command palette, and shared comforts."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme

from okstra_core import layout
from okstra_core.malloc import give_back
from okstra_core.preferences import Loaded, Preferences, preferences_path
from okstra_core.preferences import save as save_preferences
from okstra_core.store import Project
from okstra_core.text import visible

from .children import end_children
from .data.catalog import KeptWaiting
from .data.unread import Looks
from .hangup import driver_class, watch_hangup
from .navigation import TOP_VIEWS, History, Location, OpenView, StoreChanged, StoreWatched, View, WaitingCounted
from .notices import BURST, TITLES, NoticeWatcher, NotifyMode, desktop_sequence, mode_from_env, summary
from .others import OthersWatcher, others_options
from .screens.base import ViewScreen
from .screens.switch import ProjectPicker, ProjectsProvider
from .store_feed import StoreFeed
from .views import build_screen
from .widgets import read_only
from .widgets.footer import key_label

if TYPE_CHECKING:
    from textual.driver import Driver

    from okstra_core.workflows.inbox import PendingDecision
    from okstra_core.workflows.pulse import Notice

    from .screens.task import TaskScreen

#: Name under which the kept task view is installed (installed screens stay mounted when popped).
KEPT_TASK_SCREEN = "okstra-task-view"

#: Textual's own palette commands that write a file.
FILE_WRITING_COMMANDS = frozenset({"Screenshot"})

#: The views Search and Insights open across every project from (ctrl+f, I), and what they open there.
ACROSS_FROM = frozenset({View.HOME, View.SEARCH_ALL, View.INSIGHTS_ALL})
ACROSS = {View.SEARCH: View.SEARCH_ALL, View.INSIGHTS: View.INSIGHTS_ALL}

#: Above this many tasks the palette does not read the inbox on every opening (the inbox view, i, lists it).
PALETTE_INBOX_TASKS = 1000
#: The notices start once the catalog has counted what waits, and at the latest this many seconds after the start
#: (or, when the count at the start runs longer, once it has ended: it brings the store index up to date); in
#: either case not before the change feed watches (its first look done).
NOTICES_WAIT_SECONDS = 20.0
#: The longest the follower of the other projects waits for the notices' baseline check and first reading before
#: it starts.
OTHERS_AFTER_SECONDS = 60.0
#: Seconds between two looks at whether that check has ended.
OTHERS_POLL_SECONDS = 0.2


class OkstraApp(App[None]):
    """``okstra-tui``: browse one project's okstra store."""

    TITLE = "okstra workbench"
    CSS_PATH = "okstra.tcss"
    #: The palette's own commands, and "Open project ID" for every project that can be read.
    COMMANDS = App.COMMANDS | {ProjectsProvider}

    BINDINGS = [
        Binding("question_mark", "help", "Help"),
        Binding("escape", "back", "Back"),
        Binding("right_square_bracket,alt+right", "forward", "Forward"),
        Binding("left_square_bracket,alt+left", "back", "Back", show=False),
        Binding("H", "home", "Home"),
        Binding("O", "switch_project", "Switch project"),
        Binding("i", "inbox", "Inbox"),
        Binding("c", "catalog", "Catalog"),
        Binding("x", "checks", "Checks"),
        Binding("m", "managers", "Managers"),
        Binding("A", "activity", "Activity"),
        Binding("N", "running", "Now running"),
        Binding("W", "write_log", "Write log"),
        # Priority: ctrl+f opens Search from any view, even while a text field has the focus.
        Binding("ctrl+f", "search", "Search", priority=True),
        Binding("I", "insights", "Insights"),
        Binding("y", "copy_path", "Copy path"),
        Binding("e", "editor", "Open in $EDITOR"),
        Binding("P", "pager", "Open in $PAGER"),
        Binding("g", "latest_notice", "Latest notice"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        project: Project,
        *,
        demo_dir: Path | None = None,
        notify: NotifyMode | None = None,
        preferences: Loaded | None = None,
        named_roots: Iterable[Path] = (),
        start_home: bool = False,
        okstra_home: Path | None = None,
        remembered: bool = True,
        waiting: KeptWaiting | None = None,
    ) -> None:
        """*waiting*: the count of what waits in *project*, started before the workbench's modules were imported
        (else it starts here)."""
        super().__init__()
        self.project = project
        #: What the Home view lists: the managers of *okstra_home* (default: OKSTRA_HOME, else ~/.okstra), the
        #: roots opened in the workbench (when *remembered*) and the roots named on the command line.
        self.named_roots: tuple[Path, ...] = tuple(named_roots)
        self.okstra_home = okstra_home
        self.remembered = remembered
        #: Open on Home rather than on the project's catalog.
        self.start_home = start_home
        #: Roots under this folder are shown from its label in Home (``~/src/shop``).
        self.root_base: tuple[Path, str] = (Path.home(), "~")
        self.demo_dir = demo_dir
        #: The person's view preferences (the theme), kept across sessions; None: neither read nor written.
        self.preferences = preferences
        self.history = History()
        #: Screens below this index belong to a project opened earlier: out of reach of back and the top keys
        #: (the first screen of the stack cannot be replaced; the screens over it can).
        self._floor = 0
        self._kept_task: TaskScreen | None = None
        self.notify_mode: NotifyMode = notify if notify is not None else mode_from_env()
        self._notices: NoticeWatcher | None = None
        #: The notices were due before the change feed watched: they start once it does.
        self._notices_wanted = False
        #: The follower of every other project of the registry (notices naming their project, Home's counts).
        self._others: OthersWatcher | None = None
        #: The one change feed of the project (its thread starts after the first frame).
        self._feed = self._new_feed(self.project.root)
        self._stop_observing: Callable[[], None] = lambda: None
        #: The app's event loop once it is mounted (a signal handler schedules the leaving on it).
        self._loop_running: asyncio.AbstractEventLoop | None = None
        #: The notices of the latest announcement, newest first (``g`` opens the first).
        self.latest_notices: list[Notice] = []
        #: What is new inside each task since the person last looked (the catalog's visits).
        self._looks = Looks()
        #: The count of what waits as the store index keeps it, read from the start for the catalog's first frame.
        if waiting is None or waiting.root != project.root:
            waiting = None if start_home else KeptWaiting(project.root, early=True)
        self._kept_waiting: KeptWaiting | None = waiting
        #: The count at the start, while it may run: whole-store readings wait for it.
        self._start_count = waiting
        if waiting is not None:
            # Polled, the feed's first look at what the inbox reads waits for this count, however long it runs (a
            # cold count of 100,000 tasks took 110 s on a quiet disk, 22 minutes on a shared one): it brings the
            # store index up to date, so a cold index is built once, in the counting child, not also in here. A
            # view that read before the feed watched looks again once it does (StoreWatched).
            self._feed.ready = waiting.join

    @property
    def project_label(self) -> str:
        """How the breadcrumbs name the project: its folder's name, or for the demo where it lies (its whole
        path, ``~`` for the home folder), so that the okstra commands can be pointed at it."""
        root = self.project.root
        if self.demo_dir is None:
            return root.name
        home = Path.home()
        return "demo " + ("~/" + str(root.relative_to(home)) if root.is_relative_to(home) else str(root))

    @property
    def looks(self) -> Looks:
        return self._looks

    def kept_waiting(self, root: Path) -> KeptWaiting:
        """The kept count of what waits in the project at *root*: the one read since the start, once, else one
        read from now."""
        started, self._kept_waiting = self._kept_waiting, None
        return started if started is not None and started.root == root else KeptWaiting(root)

    def fresh_project(self) -> Project:
        """A new read-side handle (the old one caches what it read)."""
        self.project = Project(self.project.root)
        return self.project

    def get_default_screen(self) -> Screen[None]:
        """The catalog (or Home) is the bottom of the stack (no blank screen is built under it)."""
        self._pause_gc_until_painted()
        return build_screen(Location(View.HOME if self.start_home else View.CATALOG))

    def _pause_gc_until_painted(self) -> None:
        """Keep the cyclic collector out of start-up, then freeze what start-up built.

        The first frame builds a few hundred thousand long-lived objects (the rows
        of a 10,000-task catalog, the widgets), none of them cyclic: collecting
        while they are made only walks them again and again. Once the frame is
        painted the collector resumes, and ``gc.freeze`` moves them out of its
        later walks.
        """
        was_enabled = gc.isenabled()
        gc.disable()

        def painted() -> None:
            if was_enabled:
                gc.enable()
            gc.freeze()
            give_back()  # what building the first frame read and let go (a large catalog's listing)

        self.call_after_refresh(painted)

    def on_mount(self) -> None:
        self.sub_title = visible(str(self.project.root))
        if read_only.read_only():
            self.title = f"{self.TITLE} (read-only)"
        if self.preferences is not None:
            self._apply_preferences(self.preferences)

        if self.notify_mode != "off":
            # The notices' first reading of the whole store (and its baseline check) starts once the catalog (or
            # Home, every project's) has counted what waits, so that the count does not share the processor with
            # them; at the latest after NOTICES_WAIT_SECONDS, or once the count at the start has ended; and not
            # before the change feed's looks of its start are done (see _start_notices_once).
            self.set_timer(NOTICES_WAIT_SECONDS, self._notices_due)
        self.call_after_refresh(self._start_feed)
        if not self.is_headless and not self.is_web and sys.__stdin__ is not None:
            watch_hangup(sys.__stdin__.fileno(), self._terminal_gone)
        self.app_resume_signal.subscribe(self, self._paint_again)
        self._loop_running = asyncio.get_running_loop()

    def _paint_again(self, _app: App[None]) -> None:
        """Back from a suspension (Ctrl+Z, then ``fg``): the terminal shows nothing of what it showed, so all of
        the screen is painted again, not only what changed."""
        self.screen.refresh(self.screen.region, layout=True)

    def get_driver_class(self) -> type[Driver]:
        return driver_class(super().get_driver_class())

    def leave_from_signal(self, signum: int) -> bool:
        """From a signal handler in the main thread: ask the workbench to leave as on ``q``, with 128 + *signum* as
        its status. The handler only schedules the leaving on the app's loop: raising from it instead would unwind
        whatever the signal interrupted, maybe inside a lock or a queue's operation that then stays taken, and the
        leaving would wait on it for ever. False when the app's loop is not running (yet, or any more): the caller
        leaves its own way."""
        loop = self._loop_running
        if loop is None or loop.is_closed() or not loop.is_running():
            return False
        loop.call_soon_threadsafe(partial(self.exit, return_code=128 + signum))
        return True

    def _terminal_gone(self) -> None:
        """From the hang-up watcher's thread: the terminal is gone, so the workbench leaves (as on ``q``)."""
        try:
            self.call_from_thread(self.exit)
        except RuntimeError:
            return  # the app is closing already

    def _apply_preferences(self, loaded: Loaded) -> None:
        """Take the kept theme (one warning, and the default, for a file or theme that cannot serve), then keep
        each theme the person picks."""
        warning = loaded.warning
        theme = loaded.preferences.theme
        if theme is not None and theme not in self.available_themes:
            warning = f"{preferences_path()}: theme {theme!r} is not one of the workbench's; using the default"
        elif theme is not None:
            self.theme = theme
        if warning is not None:
            self.notify(visible(warning), severity="warning", timeout=8, markup=False)
        self.theme_changed_signal.subscribe(self, self._keep_theme)

    def _keep_theme(self, theme: Theme) -> None:
        kept = self.preferences
        if kept is None or kept.preferences.theme == theme.name:
            return
        self.preferences = Loaded(kept.preferences.with_theme(theme.name))
        self.run_worker(partial(self._save_preferences, self.preferences.preferences), thread=True, group="prefs")

    def _save_preferences(self, chosen: Preferences) -> None:
        """In a worker: replace the preferences file; a failure is one warning."""
        problem = save_preferences(chosen)
        if problem is not None:
            self.call_from_thread(self.notify, visible(problem), severity="warning", timeout=8, markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that could write (the editor) are shown disabled under the read-only guard."""
        if read_only.disabled(action):
            return None
        return True

    def on_unmount(self) -> None:
        end_children()
        self._feed.close()
        self._stop_observing()
        if self._notices is not None:
            self._notices.close()
        self._close_others()

    # ------------------------------------------------------------- the change feed

    def _new_feed(self, root: Path) -> StoreFeed:
        feed = StoreFeed(root, self._deliver_changes, self._warn_polled, self._store_watched, self._store_looked)
        if self.notify_mode != "off":
            feed.leave_others()  # the follower of the other projects (started with the notices) watches them
        return feed

    def _start_feed(self) -> None:
        self._feed.start()

    def follow_reads(self, reader: object, read: Mapping[str, object]) -> None:
        """A view read *read*: the feed looks at it from now on (see :class:`~okstra_tui.store_feed.StoreFeed`)."""
        self._feed.follow(reader, read)

    def drop_reads(self, reader: object) -> None:
        self._feed.drop(reader)

    @property
    def store_polled(self) -> bool:
        """Whether the project's store is polled: a view that any file may change reads again on its own."""
        return self._feed.polled

    @property
    def store_watched(self) -> bool:
        """Whether the change feed watches the project's store already: a reading that begins now misses nothing."""
        return self._feed.started.is_set()

    def told_since(self, kept: str | None) -> bool:
        """Whether the change feed watches the project's store and has told every change to what the inbox reads
        since it was kept in the store index with the MAC *kept* (:meth:`StoreFeed.told_since`)."""
        return self._feed.told_since(kept)

    @property
    def watching_feed(self) -> object | None:
        """The change feed once it watches the project's store (None: not yet): a reading that began under it
        misses no change."""
        feed = self._feed
        return feed if feed.started.is_set() else None

    def _store_watched(self) -> None:
        """From the feed's thread: its watcher is in place; every view is told (nothing once the app is closing)."""
        with contextlib.suppress(RuntimeError):
            self.call_from_thread(self._watched)

    def _watched(self) -> None:
        self._tell_views(StoreWatched)
        # What the feed's first look read and let go (polled, every path the inbox read), given back before the
        # notices read.
        give_back()

    def _store_looked(self) -> None:
        """From the feed's thread: the looks of its start are done."""
        with contextlib.suppress(RuntimeError):
            self.call_from_thread(self._looked)

    def _looked(self) -> None:
        # Polled, the feed's first full look after its start asked the store index of every path the inbox read
        # again: what it let go is given back before the notices read. They start on the count that settled
        # meanwhile, or here if they were due already.
        give_back()
        if self._notices_wanted:
            self._start_notices_once()

    def _tell_views(self, message: type[StoreWatched]) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, ViewScreen):
                screen.post_message(message())

    def _deliver_changes(self, paths: frozenset[str] | None) -> None:
        """From the feed's thread: tell the notices' child, and every view on the UI thread (nothing once the app
        is closing)."""
        if self._notices is not None:
            self._notices.changed(paths)
        try:
            self.call_from_thread(self._store_changed, paths)
        except RuntimeError:
            return

    def _warn_polled(self, text: str) -> None:
        """From the feed's thread: why the project's store is polled, once."""
        with contextlib.suppress(RuntimeError):  # the app is closing
            self.call_from_thread(self.notify, visible(text), severity="warning", timeout=15, markup=False)

    def _store_changed(self, paths: frozenset[str] | None) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, ViewScreen):
                screen.post_message(StoreChanged(paths))

    # ------------------------------------------------------------- projects

    def open_project(self, root: Path) -> None:
        """Switch the workbench to the project at *root*: its own change feed and notices, its catalog on top of
        Home (which stays under it: back returns there), and the root kept among the projects opened."""
        from okstra_core.errors import LoadError

        if root == self.project.root:
            self._go_top(View.CATALOG)
            return
        opened = Project.open(root)
        if isinstance(opened, LoadError):  # gone since Home read it
            self.notify(f"Cannot open {root}: {opened.reason}", severity="warning", timeout=6)
            return
        self._feed.close()
        self._stop_observing()
        self._stop_observing = lambda: None
        if self._notices is not None:
            self._notices.close()
            self._notices = None
        self._close_others()
        if self.demo_dir is not None and not root.is_relative_to(self.demo_dir):
            self.demo_dir = None  # the breadcrumbs name it by its folder
        self.project = Project(root)
        self.latest_notices = []
        self._looks = Looks()
        self.history.clear_forward()
        self.sub_title = visible(str(root))
        self._feed = self._new_feed(root)
        # The stack becomes the new project's catalog, over Home when Home was on it (back returns there).
        views = self._view_stack()
        had_home = any(v.VIEW_NAME is View.HOME for v in views)
        while len(self.screen_stack) > self._floor + 1:
            self.pop_screen()
        bottom = views[0] if views else None
        if bottom is not None and bottom.VIEW_NAME is View.HOME:
            bottom.refresh_breadcrumbs()
            self._feed.follow(bottom, bottom.depends_on)
        else:
            # The bottom view (the first project's catalog) stays under, out of reach: a new stack starts over it.
            self._floor = len(self.screen_stack)
            if had_home:
                self.push_screen(build_screen(Location(View.HOME)))
        self.push_screen(build_screen(Location(View.CATALOG)))
        self._feed.start()
        if self.notify_mode != "off":
            self._start_notices()
        if self.demo_dir is None:
            self.run_worker(partial(self._remember, root), thread=True, group="remember")

    def _remember(self, root: Path) -> None:
        """In a worker: keep *root* among the projects opened in the workbench; a failure is one warning."""
        from okstra_core.errors import OkstraError
        from okstra_core.projects import remember_root

        try:
            remember_root(root)
        except OkstraError as exc:
            self.call_from_thread(self.notify, visible(str(exc)), severity="warning", timeout=6, markup=False)

    # ------------------------------------------------------------- notices

    def on_waiting_counted(self, _: WaitingCounted) -> None:
        self._start_notices_once()

    def _notices_due(self) -> None:
        """The notices start now, or when the count at the start ends if it still runs: their first reading of
        the whole store goes through the store index the count brings up to date, rather than build it beside."""
        count = self._start_count
        if count is None or count.join(0):
            self._start_notices_once()
            return

        def after_the_count() -> None:
            count.join()
            with contextlib.suppress(RuntimeError):  # the app is closing
                self.call_from_thread(self._start_notices_once)

        threading.Thread(target=after_the_count, name="okstra-notices-due", daemon=True).start()

    def _start_notices_once(self) -> None:
        """Start the notices unless they run, once the change feed's looks of its start are done: polled, its first
        two looks at everything the inbox read (hundreds of thousands of paths on a large store) and their baseline
        check and first reading of the whole store would otherwise hold their memory at the same time."""
        if self._notices is not None or self.notify_mode == "off":
            return
        if not self._feed.looked.is_set():
            self._notices_wanted = True  # started by _looked
            return
        self._notices_wanted = False
        self._start_notices()

    def _start_notices(self) -> None:
        from okstra_core.writes import observe_writes

        self._notices = NoticeWatcher(self.project.root, self._deliver_notices)
        stop_own, stop_others = observe_writes(self._notices.own_write), observe_writes(self._own_write_elsewhere)

        def stop_observing() -> None:
            stop_own()
            stop_others()

        self._stop_observing = stop_observing
        notices = self._notices
        notices.start()
        # The follower of the other projects starts once the notices' baseline check and first reading of the
        # whole store have ended (or after OTHERS_AFTER_SECONDS): its first readings, a process of its own, and
        # theirs do not add up at the start. Its snapshot then makes every view that read in the other stores
        # look again (the feed left them to it from the start: one watcher per store).
        started = time.monotonic()

        def when_checked() -> None:
            if (notices.checks_ready and notices.ready) or time.monotonic() - started >= OTHERS_AFTER_SECONDS:
                timer.stop()
                self._start_others_for(notices)

        timer = self.set_interval(OTHERS_POLL_SECONDS, when_checked)

    def _start_others_for(self, notices: NoticeWatcher) -> None:
        if self._notices is notices and self._others is None:  # not closed or started again meanwhile
            self._start_others()

    def _start_others(self) -> None:
        others = OthersWatcher(self.project.root, self._others_options(), self._deliver_notices, self._others_moved)
        others.following = partial(self._leave_to, others)
        self._others = others
        others.start()

    def _leave_to(self, others: OthersWatcher, roots: frozenset[Path]) -> None:
        """From the follower's thread: the feed leaves the stores *others* follows to it (none: it ended)."""
        if self._others is others:
            self._feed.leave_to(layout.okstra_dir(root) for root in roots)

    def _own_write_elsewhere(self, path: Path) -> None:
        others = self._others
        if others is not None:
            others.own_write(path)

    def _others_options(self) -> list[str]:
        return others_options(self.okstra_home, self.named_roots, self.remembered)

    def _close_others(self) -> None:
        if self._others is not None:
            self._others.close()
            self._others = None

    def _others_moved(self, paths: frozenset[str] | None) -> None:
        """From the follower's thread: a project other than the one open changed (*paths*, None: it cannot say
        which); the views that read there look again (on the UI thread; nothing once the app is closing)."""
        try:
            self.call_from_thread(self._elsewhere_changed, paths)
        except RuntimeError:
            return

    def _elsewhere_changed(self, paths: frozenset[str] | None) -> None:
        store = os.fspath(layout.okstra_dir(self.project.root)) + os.sep
        for screen in self.screen_stack:
            if not isinstance(screen, ViewScreen):
                continue
            if paths is not None or any(not path.startswith(store) for path in screen.depends_on):
                screen.post_message(StoreChanged(paths))

    def projects_listed(self, roots: frozenset[Path]) -> None:
        """Home read the registry's readable projects at *roots*: a follower that follows others (a project was
        registered or dropped since it started) is started afresh."""
        others = self._others
        if others is None or others.projects is None:
            return
        wanted = roots - {Path(os.path.realpath(self.project.root))}
        if wanted != others.projects:
            others.close()
            self._start_others()

    def _deliver_notices(self, found: list[Notice]) -> None:
        """From the watching thread: show *found* on the UI thread (nothing once the app is closing)."""
        try:
            self.call_from_thread(self.announce, found)
        except RuntimeError:
            return  # the app stopped between the reading and now

    def announce(self, found: list[Notice]) -> None:
        """Tell the person about *found*: a toast each, or one for a burst; the bell or the desktop as asked."""
        if not found:
            return
        self.latest_notices = found
        if len(found) > BURST:
            title, body = "Since the last look", summary(found)
            self.notify(f"{body} · g opens the first", title=title, timeout=10)
        else:
            for n, notice in enumerate(found):
                title, body = TITLES[notice.kind], f"{notice.task}: {notice.text}"
                if notice.project is not None:
                    body = f"{notice.project} · {body}"
                severity: SeverityLevel = "error" if notice.kind in ("run-failed", "check-failed") else "information"
                hint = (" · g opens it" if len(found) == 1 else " · g opens this one") if n == 0 else ""
                self.notify(body + hint, title=title, severity=severity, timeout=10)
        if self.notify_mode in ("bell", "desktop"):
            self.bell()
        if self.notify_mode == "desktop":
            self.write_to_terminal(desktop_sequence(title, body))

    def write_to_terminal(self, sequence: str) -> None:
        """Send *sequence* (built by us, never store text) to the terminal the app draws on."""
        driver = self._driver
        if driver is not None:
            driver.write(sequence)
            driver.flush()

    def action_latest_notice(self) -> None:
        """Open what the latest notice is about: the inbox for a decision, the task for a run."""
        if not self.latest_notices:
            self.notify("No notice yet.", timeout=2)
            return
        notice = self.latest_notices[0]
        open_root = Path(os.path.realpath(self.project.root))
        if notice.project_root is not None and notice.project_root != open_root:
            self.open_project(notice.project_root)  # another project's decision: its inbox
            if Path(os.path.realpath(self.project.root)) == notice.project_root:
                self._go_top(View.INBOX)
            return
        if notice.kind == "decision":
            self._go_top(View.INBOX)
        elif notice.kind == "check-failed":
            self._go_top(View.CHECKS)
        elif notice.task_root is not None:
            self.navigate(Location(View.TASK, task=notice.task_root))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Notifications name store files: shown as text, control characters visible (never markup)."""
        super().notify(visible(message), title=visible(title), severity=severity, timeout=timeout, markup=False)

    # ---------------------------------------------------------- navigation

    def build_screen(self, location: Location) -> Screen[None]:
        """The screen that shows *location* (the kept task view for a task, when it is free)."""
        if location.view is View.TASK:
            return self._task_screen(location.task_root)
        return build_screen(location)

    def _task_screen(self, root: Path) -> Screen[None]:
        """A task view showing *root*: the kept one when it is not on the stack, else a new one.

        Building a task screen (three tables, the overview, the footer) costs far
        more than a navigation step may; one is kept mounted across back and
        forward and re-aimed at the next task opened.
        """
        from .screens.task import TaskScreen

        kept = self._kept_task
        if kept is not None and kept not in self.screen_stack:
            kept.show_task(root)
            return kept
        screen = TaskScreen(root)
        if kept is None:
            self._kept_task = screen
            self.install_screen(screen, name=KEPT_TASK_SCREEN)
        return screen

    @on(OpenView)
    def _open_view(self, message: OpenView) -> None:
        self.navigate(message.location)

    def navigate(self, location: Location) -> None:
        """Open *location* on top of the current view; back returns here."""
        self.history.clear_forward()
        self.push_screen(self.build_screen(location))

    def _view_stack(self) -> list[ViewScreen]:
        return [s for s in self.screen_stack[self._floor :] if isinstance(s, ViewScreen)]

    async def action_back(self) -> None:
        views = self._view_stack()
        if len(views) <= 1 or not isinstance(self.screen, ViewScreen):
            return
        self.history.left(self.screen.location)
        self.pop_screen()

    def action_forward(self) -> None:
        location = self.history.take_forward()
        if location is None:
            self.notify("Nothing to go forward to.", timeout=2)
            return
        self.push_screen(self.build_screen(location))

    def _go_top(self, view: View) -> None:
        if view is View.CATALOG:
            while len(self._view_stack()) > 1:
                self.pop_screen()
            views = self._view_stack()
            if views and views[0].VIEW_NAME is not View.CATALOG:  # opened on Home: the catalog goes over it
                self.navigate(Location(View.CATALOG))
            return
        if view is View.HOME:
            views = self._view_stack()
            if any(v.VIEW_NAME is View.HOME for v in views):
                while isinstance(self.screen, ViewScreen) and self.screen.VIEW_NAME is not View.HOME:
                    self.pop_screen()
                return
        if isinstance(self.screen, ViewScreen) and view is self.screen.VIEW_NAME:
            return
        self.navigate(Location(view))

    def action_home(self) -> None:
        self._go_top(View.HOME)

    def action_switch_project(self) -> None:
        """A picker of the projects that can be opened; Enter switches to one."""
        if isinstance(self.screen, ProjectPicker):
            return

        def chosen(root: Path | None) -> None:
            if root is not None:
                self.open_project(root)

        self.push_screen(ProjectPicker(), chosen)

    def action_catalog(self) -> None:
        self._go_top(View.CATALOG)

    def action_checks(self) -> None:
        self._go_top(View.CHECKS)

    def action_managers(self) -> None:
        self._go_top(View.MANAGERS)

    def action_inbox(self) -> None:
        self._go_top(View.INBOX)

    def action_activity(self) -> None:
        self._go_top(View.ACTIVITY)

    def action_running(self) -> None:
        self._go_top(View.RUNNING)

    def action_write_log(self) -> None:
        self._go_top(View.WRITE_LOG)

    def action_search(self) -> None:
        """Open Search (on Home, across every project; on it already, put the cursor back in its query)."""
        screen = self.screen
        if isinstance(screen, ViewScreen) and screen.VIEW_NAME in (View.SEARCH, View.SEARCH_ALL):
            screen.focus_query()
            return
        if isinstance(screen, ViewScreen):
            self.navigate(Location(self._across(View.SEARCH)))

    def action_insights(self) -> None:
        self._go_top(self._across(View.INSIGHTS))

    def _across(self, view: View) -> View:
        """*view*, or on Home (and the views across projects) its form across every project of Home's list."""
        screen = self.screen
        if isinstance(screen, ViewScreen) and screen.VIEW_NAME in ACROSS_FROM:
            return ACROSS.get(view, view)
        return view

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen))

    # ------------------------------------------------------------ comforts

    def _current_path(self) -> Path | None:
        screen = self.screen
        return screen.current_path() if isinstance(screen, ViewScreen) else None

    def action_copy_path(self) -> None:
        path = self._current_path()
        if path is None:
            self.notify("Nothing selected to copy.", severity="warning")
            return
        self.copy_to_clipboard(str(path))
        self.notify(f"Copied {path}", timeout=3)

    def _run_external(self, variable: str, fallback: str) -> None:
        import shlex
        import subprocess

        path = self._current_path()
        if path is None:
            self.notify("Nothing selected to open.", severity="warning")
            return
        command = [*shlex.split(os.environ.get(variable) or fallback), str(path)]
        try:
            with self.suspend():
                subprocess.run(command, check=False)
        except Exception as exc:  # a missing program (OSError), a terminal that cannot be handed over
            self.notify(f"Cannot run {command[0]}: {exc}", severity="error")

    def action_editor(self) -> None:
        if read_only.disabled("editor"):
            self.notify(read_only.REASON, severity="warning")
            return
        self._run_external("EDITOR", "vi")

    def action_pager(self) -> None:
        self._run_external("PAGER", "less")

    # ----------------------------------------------------- command palette

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Every key binding with a description, so the palette offers every action."""
        for command in super().get_system_commands(screen):
            if command.title in FILE_WRITING_COMMANDS and read_only.read_only():
                # Textual's screenshot saves a file in the working folder: disabled, with the reason.
                yield SystemCommand(
                    f"{command.title} (disabled: {read_only.REASON})",
                    command.help,
                    partial(self.notify, read_only.REASON, severity="warning"),
                )
                continue
            yield command
        seen: set[str] = set()
        base = screen
        from .screens.help import HelpScreen

        if isinstance(screen, HelpScreen):
            base = screen.under
        for key, active in base.active_bindings.items():
            binding = active.binding
            if not binding.description or binding.action in seen or binding.action in ("quit",):
                continue
            seen.add(binding.action)
            if not active.enabled and read_only.disabled(binding.action):
                yield SystemCommand(
                    f"{binding.description} (disabled: {read_only.REASON})",
                    f"key: {key_label(key)}",
                    partial(self.notify, read_only.REASON, severity="warning"),
                )
                continue
            yield SystemCommand(
                binding.description, f"key: {key_label(key)}", partial(self.run_action, binding.action, active.node)
            )
        yield from self._decision_commands()
        for view in TOP_VIEWS:
            action = f"app.{view}"
            if view not in seen:
                yield SystemCommand(f"Go to {view}", "top-level view", partial(self.run_action, action))

    def _decision_commands(self) -> Iterable[SystemCommand]:
        """One palette command per pending decision: it opens the decision's wizard."""
        from okstra_core.workflows.inbox import pending_decisions

        from .screens.decisions import DECISIONS

        if len(self.project.task_refs) > PALETTE_INBOX_TASKS:
            return
        for decision in pending_decisions(Project(self.project.root)):
            title = f"Decide: {DECISIONS[decision.kind].label} · {decision.task}"
            if decision.item:
                title += f" {decision.item}"
            if read_only.read_only():
                title += " (read-only: review only)"
            yield SystemCommand(title, decision.summary, partial(self.open_decision, decision))

    def open_decision(self, decision: PendingDecision) -> None:
        """Open the wizard that makes *decision* over the current view (which re-reads after a write)."""
        from .screens.decisions import wizard_for_decision

        wizard = wizard_for_decision(self.project.root, decision)
        if isinstance(wizard, str):
            self.notify(visible(wizard), severity="warning", timeout=6, markup=False)
            return
        screen = self.screen
        if isinstance(screen, ViewScreen):
            screen.open_form(wizard)
        else:
            self.push_screen(wizard)
