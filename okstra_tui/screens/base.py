"""What every view shares: its location, a breadcrumb line, the footer, and live refresh."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Protocol, Self, runtime_checkable

from rich.text import Text
from textual import events, on, work
from textual.app import ScreenStackError
from textual.screen import ModalScreen, Screen
from textual.widget import Widget

from okstra_core.store import Project, Task, TaskRef
from okstra_core.text import visible
from okstra_core.watch import Signature, changed, signature

from ..data.unread import Looks
from ..navigation import Location, OpenView, View
from ..ui_thread import call_ui
from ..widgets import read_only

#: Below this many columns a view lays its panels out for a small terminal (80x24 is most terminals' default).
NARROW_COLUMNS = 100

#: Seconds between two looks at the folders in view; changes show within two polls at most.
POLL_SECONDS = 1.0


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

    Subclasses name the files and folders they show (``watched_paths``) and how
    to reload (``reload``); a poll every second compares their mtimes and
    reloads only on change, keeping the cursor where the user left it.
    """

    #: Short description shown by ``?`` above the key list.
    HELP: ClassVar[str] = ""
    VIEW_NAME: ClassVar[View]

    def __init__(self) -> None:
        super().__init__()
        self._signature: Signature | None = None
        #: The theme this screen was last shown under (None until it has been shown and left once).
        self._shown_theme: str | None = None

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
        """Show the current crumbs (after the view was re-aimed at something else)."""
        for widget in self.query(Breadcrumbs):
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

    def watched_paths(self) -> list[Path]:
        return []

    def reload(self) -> None:
        """Re-read what the view shows; called when a watched path changed."""

    def on_mount(self) -> None:
        self.set_interval(POLL_SECONDS, self._poll, name="live-refresh")

    def _poll(self) -> None:
        try:
            current = self.app.screen
        except ScreenStackError:
            return  # the app is closing: its screens are gone while their timers may still fire
        if current is not self:
            return
        self._check_changes(self.watched_paths())

    @work(thread=True, exclusive=True, group="live-poll")
    def _check_changes(self, paths: list[Path]) -> None:
        call_ui(self.app, self._compare, signature(paths))

    def _compare(self, sig: Signature) -> None:
        if self._signature is None:
            self._signature = sig
            return
        previous = self._signature
        self._signature = {**previous, **sig}
        if changed(previous, sig):
            self.reload()

    def mark_seen(self) -> None:
        """Take the watched paths' current state as seen; call before reading them.

        Safe from a worker thread: it only stats and assigns.
        """
        self._signature = signature(self.watched_paths())
