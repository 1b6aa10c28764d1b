"""Home: every project the person works on, with the decisions waiting in each; Enter opens one.

The projects are the registry's (:func:`okstra_core.projects.discover`: the
managers of the manager home, the roots opened in the workbench, the roots
named on the command line), each read as ``okstra inbox --all`` reads it,
through its own store index. A root that cannot be read is a row of its own,
marked, with the reason. What the view read is recorded like any view's, so
it reloads when a project's inbox (or a manager's list of projects) changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from okstra_core.errors import OkstraError
from okstra_core.projects import ProjectEntry, Registry, discover
from okstra_core.text import visible
from okstra_core.workflows.inbox_all import ProjectInbox, read_project_inbox

from ..navigation import View
from ..ui_thread import call_ui
from ..widgets.footer import BindingsFooter
from ..widgets.list_table import ListTable
from ..widgets.shown import shown
from .base import NARROW_COLUMNS, ViewScreen

#: The table's columns: the note (why a project is not read) only on a wide terminal (the panel below says it).
COLUMNS = ("project", "waiting", "health", "root", "note")
COLUMN_WIDTHS = {"project": 24, "waiting": 7, "health": 11}

#: How each health that is not read is marked (with the reason beside it).
MARKS = {
    "missing": "✗ missing",
    "unreadable": "✗ unreadable",
    "no-store": "✗ no store",
    "duplicate": "✗ duplicate",
}


@dataclass(frozen=True, slots=True)
class HomeRow:
    """One project: its registry entry, and its inbox or why it was not read (one line)."""

    entry: ProjectEntry
    waiting: int | None = None
    problem: str | None = None
    #: Files or folders of the store the inbox could not read (the count is then a floor).
    unreadable: int = 0


@dataclass(frozen=True, slots=True)
class HomeData:
    rows: list[HomeRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The projects alone (the registry), their inboxes still being read: shown first, at once.
    counting: bool = False


def project_row(entry: ProjectEntry) -> HomeRow:
    """*entry* read: its inbox through its store index (afresh when there is none), never an exception."""
    if not entry.readable:
        return HomeRow(entry, problem=entry.reason or entry.health)
    from okstra_core.check.cache import open_store_index

    try:
        index = open_store_index(entry.root)
        if isinstance(index, str):
            got = read_project_inbox(entry)
        else:
            with index:
                got = read_project_inbox(entry, index)
    except (OkstraError, OSError) as exc:
        return HomeRow(entry, problem=f"cannot be read ({exc})")
    return _row(got)


def _row(got: ProjectInbox) -> HomeRow:
    inbox = got.inbox
    if inbox is None:
        return HomeRow(got.entry, problem=got.problem or "cannot be read")
    unread = len(inbox.unreadable) + len(inbox.unlisted)
    return HomeRow(got.entry, waiting=len(inbox.items), unreadable=unread)


def list_projects(home: Path | None, named: tuple[Path, ...], remembered: bool) -> HomeData:
    """The registry alone, before any inbox is read (what Home shows while it counts)."""
    registry: Registry = discover(home, named=named, remembered=remembered)
    rows = [HomeRow(e) if e.readable else project_row(e) for e in registry.entries]
    return HomeData(rows, list(registry.notes), counting=True)


def read_home(home: Path | None, named: tuple[Path, ...], remembered: bool) -> HomeData:
    """The registry and each project's inbox."""
    registry: Registry = discover(home, named=named, remembered=remembered)
    return HomeData([project_row(entry) for entry in registry.entries], list(registry.notes))


def shown_root(root: Path, base: tuple[Path, str]) -> str:
    """*root* as the table shows it: a root under *base*'s folder from its label (``~/src/shop``)."""
    folder, label = base
    if root == folder:
        return label
    if root.is_relative_to(folder):
        return f"{label}/{root.relative_to(folder)}"
    return str(root)


def cut_middle(text: str, width: int) -> str:
    """*text* in at most *width* characters: its middle replaced by "…" when it is longer (both ends kept, the end
    longer: a root's last folders name it best)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail = -(-(width - 1) * 2 // 3)
    head = width - 1 - tail
    return text[:head] + "…" + text[len(text) - tail :]


def _health(row: HomeRow, current: bool) -> Text:
    entry = row.entry
    if not entry.readable:
        return Text(MARKS.get(entry.health, f"✗ {entry.health}"), style="bold red")
    if row.problem is not None:
        return Text("✗ not read", style="bold red")
    if row.unreadable:
        return Text("! partly", style="bold yellow")
    text = Text("open" if current else "ok", style="bold green" if current else "green")
    if entry.health == "nested":
        text.append(" nested", style="dim")
    return text


def _note(row: HomeRow) -> str:
    """The one line said beside a row: why it is not read, what could not be read, or nothing."""
    if row.problem is not None:
        return row.problem
    entry = row.entry
    if row.unreadable:
        n = row.unreadable
        return f"{n} file{'s' if n != 1 else ''} or folder{'s' if n != 1 else ''} of the store could not be read"
    if entry.health == "nested":
        return entry.reason or "inside another project's root"
    return ""


def _summary(data: HomeData) -> Text:
    rows = data.rows
    if data.counting:
        n = sum(1 for r in rows if r.problem is None)
        return Text(f"Counting what waits in {n} project{'s' if n != 1 else ''}…", style="dim")
    read = [r for r in rows if r.waiting is not None]
    waiting = sum(r.waiting or 0 for r in read)
    with_some = sum(1 for r in read if r.waiting)
    if not rows:
        text = Text("No project yet: open one (okstra-tui PROJECT) or register it with a manager.", style="bold")
    elif waiting:
        text = Text(f"{waiting} decision{'s' if waiting != 1 else ''} waiting", style="bold")
        text.append(f" in {with_some} of the {len(read)} project{'s' if len(read) != 1 else ''} read")
    else:
        plural = "s" if len(read) != 1 else ""
        text = Text(f"Nothing waits in the {len(read)} project{plural} read.", style="bold green")
    not_read = len(rows) - len(read)
    if not_read:
        text.append(f"; {not_read} cannot be read", style="bold red")
    if data.notes:
        n = len(data.notes)
        text.append(f"  {n} note{'s' if n != 1 else ''}: ", style="bold yellow")
        text.append(visible(data.notes[0]) + (" …" if n > 1 else ""), style="yellow")
    if rows:
        text.append("; Enter opens a project", style="dim")
    return text


class HomeScreen(ViewScreen):
    """Every project, with what waits in each."""

    VIEW_NAME = View.HOME
    HELP = (
        "Every project you work on: those the managers of the manager home register, those opened in the "
        "workbench and those named on the command line (the same list as `okstra inbox --all`), each with the "
        "decisions waiting in it. A root that cannot be read (missing, not a folder, without a store, an id taken "
        "twice) is marked, with the reason. Enter opens a project (its catalog); H comes back here from any view. "
        "The counts follow decisions made in any project."
    )

    BINDINGS = [Binding("enter", "open_project", "Open project", priority=True)]

    def __init__(self) -> None:
        super().__init__()
        self.data = HomeData()
        #: The width of each column shown (set by :meth:`fit_width`).
        self.widths: dict[str, int] = {}

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield Static(Text("Reading every project…", style="dim"), id="home-summary")
        table: DataTable[Text | str] = ListTable(id="home-table", cursor_type="row", classes="pane")
        table.border_title = "Projects"
        yield table
        detail = VerticalScroll(Static("", id="home-detail"), id="home-detail-box", classes="pane")
        detail.border_title = "Project"
        yield detail
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.query_one("#home-table", DataTable).focus()

    def first_load(self) -> None:
        """The projects at once (the registry alone), then what waits in each (the load, which takes longer and
        starts once they are painted, so that it does not hold their frame back)."""
        self._list_projects()

    @work(thread=True, exclusive=True, group="home-list")
    def _list_projects(self) -> None:
        listed: HomeData | None
        try:
            listed = list_projects(*self._sources())
        except (OkstraError, OSError):
            listed = None  # the load says why
        call_ui(self.app, self._show_listed, listed)

    def _show_listed(self, listed: HomeData | None) -> None:
        if listed is not None and not self.reads:  # what waits in each is not shown yet
            self.show(listed)
        self.call_after_refresh(self.load)

    def fit_width(self, width: int) -> None:
        """Fixed widths per terminal width (no jumping on a live refresh); the note goes first when narrow."""
        super().fit_width(width)
        tables = self.query("#home-table")
        if not tables:
            return
        table: DataTable[Text | str] = tables.first(DataTable)
        shown_columns = [c for c in COLUMNS if c != "note" or width >= NARROW_COLUMNS]
        fixed = sum(COLUMN_WIDTHS[c] + 2 for c in shown_columns if c in COLUMN_WIDTHS)
        rest = max(width - fixed - 6, 20)
        widths: dict[str, int] = dict(COLUMN_WIDTHS)
        if "note" in shown_columns:
            widths["root"] = max(rest * 3 // 5, 16)
            widths["note"] = max(rest - widths["root"] - 2, 12)
        else:
            widths["root"] = rest
        self.widths = widths
        if [str(key.value) for key in table.columns] != shown_columns:
            table.clear(columns=True)
            for label in shown_columns:
                table.add_column(label, width=widths[label], key=label)
            self._fill()
            return
        for key, column in table.columns.items():
            column.width = widths[str(key.value)]
        self._fill()

    def read(self) -> HomeData:
        home, named, remembered = self._sources()
        return read_home(home, named, remembered)

    def _sources(self) -> tuple[Path | None, tuple[Path, ...], bool]:
        app = self.app
        return (
            getattr(app, "okstra_home", None),
            tuple(getattr(app, "named_roots", ())),
            bool(getattr(app, "remembered", True)),
        )

    def show(self, data: HomeData) -> None:
        self.data = data
        self.query_one("#home-summary", Static).update(_summary(data))
        self._fill()

    def _fill(self) -> None:
        table: DataTable[Text | str] = self.query_one("#home-table", DataTable)
        if not table.columns:
            return
        previous = self._current_id()
        table.clear()
        current = self.okstra.project.root
        base = self._base()
        widths = self.widths
        for n, row in enumerate(self.data.rows):
            entry = row.entry
            is_current = entry.readable and entry.root == current
            waiting = (
                Text("…" if self.data.counting and row.problem is None else "—", style="dim")
                if row.waiting is None
                else Text(f"{row.waiting}{'+' if row.unreadable else ''}", style="bold" if row.waiting else "dim")
            )
            cells = {
                "project": shown(entry.project_id, "bold" if is_current else ""),
                "waiting": waiting,
                "health": _health(row, is_current),
                "root": Text(cut_middle(visible(shown_root(entry.root, base)), widths.get("root", 40))),
                "note": _one_line(_note(row), "red" if row.problem else "dim"),
            }
            if row.problem is not None and "note" not in widths:
                cells["root"] = cells["note"]  # narrow: why it is not read (the panel below names the root)
            table.add_row(*(cells[str(c.value)] for c in table.columns), key=f"row:{n}")
        for index, row in enumerate(self.data.rows):
            # The cursor stays on its project; at first on the project open.
            if row.entry.project_id == previous or (previous is None and row.entry.root == current):
                table.move_cursor(row=index)
                break
        self._detail()

    def _base(self) -> tuple[Path, str]:
        """The folder whose roots are shown from a label (the home folder as ``~``)."""
        base: tuple[Path, str] | None = getattr(self.app, "root_base", None)
        return base or (Path.home(), "~")

    def _current_id(self) -> str | None:
        row = self.selected()
        return row.entry.project_id if row is not None else None

    def selected(self) -> HomeRow | None:
        table: DataTable[Text | str] = self.query_one("#home-table", DataTable)
        if not table.row_count or not self.data.rows:
            return None
        key = str(table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value)
        index = int(key.removeprefix("row:"))
        return self.data.rows[index] if index < len(self.data.rows) else None

    @on(DataTable.RowHighlighted, "#home-table")
    def _highlighted(self) -> None:
        self._detail()

    def _detail(self) -> None:
        box = self.query_one("#home-detail", Static)
        row = self.selected()
        if row is None:
            box.update("")
            return
        entry = row.entry
        text = Text()
        text.append(visible(entry.project_id), style="bold")
        text.append("\n")
        lines = [("root", shown_root(entry.root, self._base())), ("health", entry.health)]
        if row.waiting is not None:
            lines.append(("waiting", f"{row.waiting} decision{'s' if row.waiting != 1 else ''}"))
        note = _note(row)
        if note:
            lines.append(("note", note))
        if entry.symlink is not None:
            lines.append(("given", f"{entry.symlink}, a symlink; read at its target"))
        if entry.aliases:
            lines.append(("aliases", ", ".join(entry.aliases)))
        lines.append(("from", "; ".join(s.describe() for s in entry.sources)))
        for label, value in lines:
            text.append(f"\n{label:<8} ", style="bold")
            text.append(visible(value))
        text.append("\n\n")
        if row.problem is None:
            text.append("Enter opens the project (its catalog; i its inbox).", style="italic")
        else:
            text.append("This project cannot be opened until its root is fixed.", style="italic")
        box.update(text)

    @on(DataTable.RowSelected, "#home-table")
    def _row_selected(self) -> None:
        self.action_open_project()

    def action_open_project(self) -> None:
        row = self.selected()
        if row is None:
            return
        if row.problem is not None:
            self.notify(f"{row.entry.project_id}: {row.problem}", severity="warning", timeout=6)
            return
        opener = getattr(self.app, "open_project", None)
        if opener is not None:
            opener(row.entry.root)

    def current_path(self) -> Path | None:
        row = self.selected()
        return row.entry.root if row is not None else None


def _one_line(value: str, style: str) -> Text:
    text = Text(visible(value), style=style)
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text
