"""Home: every project the person works on, with the decisions waiting in each; Enter opens one.

The projects are the registry's (:func:`okstra_core.projects.discover`: the
managers of the manager home, the roots opened in the workbench, the roots
named on the command line), each read as ``okstra inbox --all`` reads it,
through its own store index. A root that cannot be read is a row of its own,
marked, with the reason. What the view read is recorded like any view's, so
it reloads when a project's inbox (or a manager's list of projects) changes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from okstra_core import reading, times
from okstra_core.errors import OkstraError
from okstra_core.projects import ProjectEntry, Registry, discover
from okstra_core.store import Project
from okstra_core.store_index import ChangedSince, changed_in_all
from okstra_core.text import counted, visible
from okstra_core.watch import UNSETTLED, Signature
from okstra_core.workflows.inbox_all import ProjectInbox, open_entry, read_project_inbox

from ..data.catalog import current_index
from ..navigation import View, WaitingCounted
from ..ui_thread import call_ui
from ..widgets.footer import BindingsFooter
from ..widgets.list_table import ListTable
from ..widgets.shown import shown
from .base import NARROW_COLUMNS, ViewScreen, holds
from .running import age

if TYPE_CHECKING:
    from okstra_core.check.cache import Verdict
    from okstra_core.workflows.overview import Overview

#: The table's columns, in order.
COLUMNS = ("project", "waiting", "changed", "running", "stalled", "activity", "check", "health", "root", "note")
COLUMN_WIDTHS = {
    "project": 20,
    "waiting": 7,
    "changed": 7,
    "running": 7,
    "stalled": 7,
    "activity": 8,
    "check": 10,
    "health": 11,
}
#: The columns a narrower terminal drops, the least important first, until the root has :data:`ROOT_MIN`
#: columns (and the note :data:`NOTE_MIN`); the panel below the table says all of them for the project highlighted.
DROPPED_FIRST = ("note", "check", "activity", "stalled")
ROOT_MIN = 12
NOTE_MIN = 30
#: The project column on a narrow terminal.
NARROW_PROJECT = 16
#: Changes told and kept until the next load; past this many, that load reads every project again.
CHANGES_KEPT = 256
#: Seconds between two updates of the ages on screen (the store is not read again for them).
TICK_SECONDS = 30.0

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
    #: Its runs in progress and last activity (None when it was not read).
    overview: Overview | None = None
    #: How many tasks the catalog would mark as changed since the person last looked (None: not read).
    changed: int | None = None
    #: The verdict of the project's last full check, as the check cache keeps it (None: none kept).
    verdict: Verdict | None = None


#: Each project's row as last read, with every path it was read from (what makes it stale), by root.
Kept = dict[Path, tuple[HomeRow, Signature]]


@dataclass(frozen=True, slots=True)
class HomeData:
    rows: list[HomeRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The projects alone (the registry), their inboxes still being read: shown first, at once.
    counting: bool = False
    #: Every count of what waits is in; the other columns are still being read.
    reading_more: bool = False
    #: Each project's row with what it was read from (a whole read's; None for the partial ones).
    kept: Kept | None = None
    #: The changes told before this read began (:attr:`HomeScreen._changes`' numbers up to this one).
    taken: int = 0


def project_row(entry: ProjectEntry) -> HomeRow:
    """*entry* read: its inbox through its store index (afresh when there is none), never an exception."""
    row, got = waiting_row(entry)
    return completed_row(row, got)


def waiting_row(entry: ProjectEntry) -> tuple[HomeRow, ProjectInbox | None]:
    """*entry*'s count of what waits (its inbox, through its store index), and the inbox read when it could be."""
    if not entry.readable:
        return HomeRow(entry, problem=entry.reason or entry.health), None
    try:
        index = current_index(entry.root)
        with nullcontext() if isinstance(index, str) else index:
            got = read_project_inbox(entry, None if isinstance(index, str) else index)
    except (OkstraError, OSError) as exc:
        return HomeRow(entry, problem=f"cannot be read ({exc})"), None
    inbox = got.inbox
    if inbox is None:
        return HomeRow(got.entry, problem=got.problem or "cannot be read"), None
    unread = len(inbox.unreadable) + len(inbox.unlisted)
    return HomeRow(got.entry, waiting=len(inbox.items), unreadable=unread), got


def completed_row(row: HomeRow, got: ProjectInbox | None) -> HomeRow:
    """*row* with the rest of its columns (runs, activity, tasks changed, check verdict): *got*, its inbox, was
    read (else the row is what it is)."""
    if got is None:
        return row
    # Imported here, in the worker that completes the rows: its models are not needed for the first frame.
    from okstra_core.workflows.overview import read_overview

    entry = row.entry
    try:
        index = current_index(entry.root)
        with nullcontext() if isinstance(index, str) else index:
            project = open_entry(entry)
            used = None if isinstance(index, str) else index
            overview = read_overview(project, used) if isinstance(project, Project) else None
        changed = None if overview is None else changed_since_looked(entry.root, overview.task_roots)
    except (OkstraError, OSError) as exc:
        return HomeRow(entry, problem=f"cannot be read ({exc})")
    if overview is None:
        return HomeRow(entry, problem="cannot be read")
    from okstra_core.check.cache import last_verdict

    return replace(row, overview=overview, changed=changed, verdict=last_verdict(entry.root))


def changed_since_looked(root: Path, task_roots: Iterable[Path]) -> int:
    """How many of the tasks the catalog would mark (•) as changed since the person last looked (its seen
    state, read, never written: a project never opened in the workbench has none)."""
    from okstra_tui.data import seen

    state = seen.load(root)
    return 0 if state.first else len(state.unread(seen.signatures(root, task_roots)))


def list_projects(home: Path | None, named: tuple[Path, ...], remembered: bool) -> HomeData:
    """The registry alone, before any inbox is read (what Home shows while it counts)."""
    registry: Registry = discover(home, named=named, remembered=remembered)
    rows = [HomeRow(e) if e.readable else project_row(e) for e in registry.entries]
    return HomeData(rows, list(registry.notes), counting=True)


def read_home(
    home: Path | None,
    named: tuple[Path, ...],
    remembered: bool,
    counted: Callable[[HomeData], None] | None = None,
    previous: Kept | None = None,
    changed: frozenset[str] | None = None,
) -> HomeData:
    """The registry and each project's inbox and overview; *counted*, when given, is first handed every project's
    count of what waits alone (the headline, before the other columns are read).

    A project of *previous* (the rows last read) none of whose paths *changed* (the paths changed since) is not
    read again: its row stands, and what it was read from is recorded as read now. When what changed is not known
    (*changed* None), each path a row was read from is looked at (one ``stat`` each): a row whose paths all still
    have the metadata recorded stands too, which costs a fraction of reading its project again.
    """
    registry: Registry = discover(home, named=named, remembered=remembered)
    notes = list(registry.notes)
    entries = registry.entries
    reused: Kept = {}
    if previous is not None:
        look = ChangedSince(None if changed is None else set(changed))
        for entry in entries:
            before = previous.get(entry.root)
            if before is None or before[0].entry != entry or UNSETTLED in before[1].values():
                continue  # a path read within the clock's resolution of a write is looked at again
            if holds(look, before[1]):
                reused[entry.root] = before
    waiting: dict[Path, tuple[HomeRow, ProjectInbox | None, Signature]] = {}
    for entry in entries:
        if entry.root not in reused:
            with reading.recording() as reads:
                row, got = waiting_row(entry)
            waiting[entry.root] = (row, got, reads.paths)
    if counted is not None:
        shown = [reused[e.root][0] if e.root in reused else waiting[e.root][0] for e in entries]
        counted(HomeData(shown, notes, reading_more=True))
    kept: Kept = {}
    for entry in entries:
        if entry.root in reused:
            row, read = reused[entry.root]
            reading.note_reads(read)
        else:
            row, got, read = waiting[entry.root]
            with reading.recording() as reads:
                row = completed_row(row, got)
            read = {**reads.paths, **read}  # the first look wins: the count was made from that one
        kept[entry.root] = (row, read)
    return HomeData([kept[e.root][0] for e in entries], notes, kept=kept)


def registry_sources(app: object) -> tuple[Path | None, tuple[Path, ...], bool]:
    """Where the workbench's list of projects comes from (:func:`okstra_core.projects.discover`'s arguments): the
    manager home, the roots named on the command line, and whether the roots opened in the workbench count."""
    return (
        getattr(app, "okstra_home", None),
        tuple(getattr(app, "named_roots", ())),
        bool(getattr(app, "remembered", True)),
    )


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


def column_widths(width: int) -> tuple[list[str], dict[str, int]]:
    """The columns a terminal *width* columns wide shows, and the width of each."""
    widths: dict[str, int] = dict(COLUMN_WIDTHS)
    if width < NARROW_COLUMNS:
        widths["project"] = NARROW_PROJECT
    shown_columns = list(COLUMNS)

    def rest() -> int:
        fixed = sum(widths[c] + 2 for c in shown_columns if c in COLUMN_WIDTHS)
        return width - fixed - 6 - (2 if "note" in shown_columns else 0)

    for column in DROPPED_FIRST:
        if rest() >= ROOT_MIN + (NOTE_MIN if "note" in shown_columns else 0):
            break
        shown_columns.remove(column)
    room = max(rest(), ROOT_MIN)
    if "note" in shown_columns:
        widths["root"] = max(room * 3 // 5, ROOT_MIN)
        widths["note"] = max(room - widths["root"], NOTE_MIN // 2)
    else:
        widths["root"] = room
    return shown_columns, widths


def _count(value: int | None, style: str = "bold") -> Text:
    """A count as a cell: "—" when not read, dim when nothing."""
    if value is None:
        return Text("—", style="dim")
    return Text(str(value), style=style if value else "dim")


def verdict_cell(verdict: Verdict | None) -> Text:
    """The last check's verdict in a few characters: "✗ 3 err", "! 2 warn", "✓ clean", "—" when none is kept."""
    if verdict is None:
        return Text("—", style="dim")
    if verdict.errors:
        return Text(f"✗ {verdict.errors} err", style="bold red")
    if verdict.warnings:
        return Text(f"{'✗' if verdict.strict else '!'} {verdict.warnings} warn", style="bold yellow")
    return Text("✓ clean", style="green")


def verdict_line(verdict: Verdict | None, now: dt.datetime) -> str:
    """The verdict said whole, with its age."""
    if verdict is None:
        return "none kept (run okstra check, or x in the project)"
    counts = ", ".join(
        counted(n, word)
        for n, word in ((verdict.errors, "error"), (verdict.warnings, "warning"), (verdict.infos, "info"))
    )
    said = "failed" if verdict.failed else "passed"
    return f"{said}: {counts} in {verdict.files} files ({age(now - verdict.at)} ago)"


class HomeScreen(ViewScreen):
    """Every project, with what waits in each."""

    VIEW_NAME = View.HOME
    HELP = (
        "Every project you work on: those the managers of the manager home register, those opened in the "
        "workbench and those named on the command line (the same list as `okstra inbox --all`). Per project: "
        "waiting, the decisions waiting in it; changed, the tasks changed since you last looked at them (those the "
        "catalog marks •); running, its runs in progress, and stalled, those with nothing written for 15 minutes "
        "(red running: some stalled); activity, how long ago the store last recorded anything; check, the verdict "
        "of the last `okstra check` (✗ errors, ! warnings, ✓ clean; — when none is kept: Home never runs a "
        "check). A narrow terminal drops the last of these; the panel below says all of them. A root that cannot "
        "be read (missing, not a folder, without a store, an id taken twice) is marked, with the reason, and "
        "shows — for every count. Enter opens a project (its catalog); O switches between projects from any "
        "view, as the palette's Open project commands do; H comes back here. ctrl+f here searches every project "
        "at once, and I shows their insights side by side. The counts follow changes in any project."
    )

    BINDINGS = [Binding("enter", "open_project", "Open project", priority=True)]

    def __init__(self) -> None:
        super().__init__()
        self.data = HomeData()
        self._said_counted = False
        #: What the clock decided on screen at the last fill (:meth:`refresh_ages`).
        self._clock_shown: tuple[object, ...] = ()
        #: Each project's row as last read, and the changes told since (numbered; None: cannot say which
        #: paths): a reload reads again only the projects they touch.
        self._kept: Kept = {}
        self._changes: list[tuple[int, frozenset[str] | None]] = []
        self._told = 0
        #: The width of each column shown (set by :meth:`fit_width`).
        self.widths: dict[str, int] = {}
        #: The time ages are counted to (None: the clock's; pictures fix it).
        self.fixed_now: dt.datetime | None = None

    def now(self) -> dt.datetime:
        return self.fixed_now or dt.datetime.now(dt.UTC)

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
        self.set_interval(TICK_SECONDS, self.refresh_ages, name="home-ages")

    def refresh_ages(self) -> None:
        """Ages and stalled marks again from the clock (the store is not read): the table is filled again only when
        one of them reads differently now (most ages change once an hour or a day; a fill costs a whole render)."""
        if self._clock_text(self.now()) != self._clock_shown:
            self._fill()

    def _clock_text(self, now: dt.datetime) -> tuple[object, ...]:
        """What the clock decides on screen at *now*: each row's stalled count and activity age, and the panel's
        lines of the project highlighted."""
        rows = tuple(_clock_of(row.overview, now) for row in self.data.rows)
        selected = self.selected() if self.is_mounted else None
        return rows, () if selected is None else tuple(self._overview_lines(selected))

    def first_load(self) -> None:
        """The projects at once (the registry alone), then what waits in each (the load, which takes longer and
        starts once they are painted, so that it does not hold their frame back)."""
        self._list_projects()

    @work(thread=True, exclusive=True, group="home-list", description="home-list")
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
        """Fixed widths per terminal width (no jumping on a live refresh); the least important columns go first
        when narrow (:data:`DROPPED_FIRST`)."""
        super().fit_width(width)
        tables = self.query("#home-table")
        if not tables:
            return
        table: DataTable[Text | str] = tables.first(DataTable)
        shown_columns, widths = column_widths(width)
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
        load = self._loads
        # The changes told before this read began; they are forgotten once its result is shown (a later one's is
        # shown instead when a later load supersedes it, and they count for that one too).
        taken = self._told
        changed = changed_in_all(paths for n, paths in list(self._changes) if n <= taken)
        data = read_home(
            home,
            named,
            remembered,
            lambda counted: call_ui(self.app, self._show_counted, load, counted),
            previous=dict(self._kept),
            changed=changed,
        )
        return replace(data, taken=taken)

    def paths_changed(self, paths: frozenset[str] | None) -> None:
        self._told += 1
        if len(self._changes) >= CHANGES_KEPT:
            # Told of many while not reading (hidden, say): the next load reads every project again.
            self._changes = [(self._told, None)]
        else:
            self._changes.append((self._told, paths))

    def _show_counted(self, load: int, counted: HomeData) -> None:
        """Every project's count of what waits, while the rest of the load reads the other columns (unless a
        later load is under way: it waits for the UI thread, so it comes before the load's own result)."""
        if load == self._loads and not self.reads:  # a reload shows its whole result at once (no "…" flashing)
            self.show(counted)

    def _sources(self) -> tuple[Path | None, tuple[Path, ...], bool]:
        return registry_sources(self.app)

    def show(self, data: HomeData) -> None:
        self.data = data
        if data.kept is not None:
            self._kept = data.kept
            self._changes = [(n, paths) for n, paths in self._changes if n > data.taken]
        self.query_one("#home-summary", Static).update(_summary(data))
        self._fill()
        listed = getattr(self.app, "projects_listed", None)
        if listed is not None:  # the follower of the other projects follows the projects listed
            listed(frozenset(row.entry.root for row in data.rows if row.entry.readable))
        if not data.counting and not self._said_counted:
            # Every project's count is in: the notices' readings of every project may start now.
            self._said_counted = True
            self.post_message(WaitingCounted())

    def _fill(self) -> None:
        table: DataTable[Text | str] = self.query_one("#home-table", DataTable)
        if not table.columns:
            return
        previous = self._current_id()
        table.clear()
        current = self.okstra.project.root
        base = self._base()
        widths = self.widths
        now = self.now()
        for n, row in enumerate(self.data.rows):
            entry = row.entry
            is_current = entry.readable and entry.root == current
            waiting = (
                Text("…" if self.data.counting and row.problem is None else "—", style="dim")
                if row.waiting is None
                else Text(f"{row.waiting}{'+' if row.unreadable else ''}", style="bold" if row.waiting else "dim")
            )
            overview = row.overview
            stalled, ago = _clock_of(overview, now) or (None, None)  # what the clock redraws (_clock_text)
            running = None if overview is None else len(overview.running)
            cells = {
                "project": shown(entry.project_id, "bold" if is_current else ""),
                "waiting": waiting,
                "changed": _count(row.changed, "bold cyan"),
                "running": _count(running, "bold red" if stalled else "bold"),
                "stalled": _count(stalled, "bold red"),
                "activity": Text(ago, style="") if ago is not None else Text("—", style="dim"),
                "check": verdict_cell(row.verdict) if overview is not None else Text("—", style="dim"),
                "health": _health(row, is_current),
                "root": Text(cut_middle(visible(shown_root(entry.root, base)), widths.get("root", 40))),
                "note": _one_line(_note(row), "red" if row.problem else "dim"),
            }
            if self.data.reading_more and row.problem is None and overview is None:
                for column in ("changed", "running", "stalled", "activity", "check"):
                    cells[column] = Text("…", style="dim")  # still being read
            if row.problem is not None and "note" not in widths:
                cells["root"] = cells["note"]  # narrow: why it is not read (the panel below names the root)
            table.add_row(*(cells[str(c.value)] for c in table.columns), key=f"row:{n}")
        for index, row in enumerate(self.data.rows):
            # The cursor stays on its project; at first on the project open.
            if row.entry.project_id == previous or (previous is None and row.entry.root == current):
                table.move_cursor(row=index)
                break
        self._detail()
        self._clock_shown = self._clock_text(now)

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
        lines.extend(self._overview_lines(row))
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

    def _overview_lines(self, row: HomeRow) -> list[tuple[str, str]]:
        overview = row.overview
        if overview is None:
            reading = self.data.reading_more and row.problem is None
            return [("running", "runs, activity and changes still being read…")] if reading else []
        now = self.now()
        n, stalled, changed = len(overview.running), overview.stalled(now), row.changed or 0
        running = f"{n} run{'s' if n != 1 else ''} in progress" + (f", {stalled} stalled" if stalled else "")
        last = overview.last_activity
        return [
            ("changed", f"{changed} task{'s' if changed != 1 else ''} changed since you last looked"),
            ("running", running),
            ("activity", f"{age(now - last)} ago ({times.iso(last)})" if last is not None else "none recorded"),
            ("check", verdict_line(row.verdict, now)),
        ]

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


def _clock_of(overview: Overview | None, now: dt.datetime) -> tuple[int, str | None] | None:
    """What the clock decides in a row at *now*: its stalled count and activity age."""
    if overview is None:
        return None
    last = overview.last_activity
    return overview.stalled(now), None if last is None else age(now - last)


def _one_line(value: str, style: str) -> Text:
    text = Text(visible(value), style=style)
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text
