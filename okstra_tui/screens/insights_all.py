"""Insights across every project of Home's list (I on Home): ``okstra stats --all``'s per-project table.

Each project's statistics are :func:`okstra_core.stats.compute_for`'s, as
``okstra stats --all`` reads them; the table has its columns (tasks, runs by
outcome, fix cycles) and the panel below says more of the highlighted project
(time per phase, where its tasks stop, convergence, its notes). Enter opens the
project and its own Insights, with the charts. ``/`` narrows every project with
the filters of Insights (the CLI's ``--since``, ``--type``, ``--task``). A
project that cannot be read is one row, marked, with the reason.

What the statistics read is recorded, as for any view: the table follows
changes in any project (and in the list of projects).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Input, Static

from okstra_core.projects import ProjectEntry, discover
from okstra_core.stats import OUTCOMES, STOP_LABELS, STOPS, Filters, Stats, compute_for
from okstra_core.text import visible

from ..data.insights import describe_filters, parse_filters
from ..navigation import Location, OpenView, View
from ..widgets.footer import BindingsFooter
from ..widgets.list_table import ListTable
from ..widgets.shown import cut
from .base import NARROW_COLUMNS, ViewScreen
from .home import MARKS, registry_sources, shown_root

#: The table's columns after the project: the header each shows (the note only on a wide terminal).
NUMBERS = ("tasks", "runs", *OUTCOMES, "fix cycles")
HEADERS = {"in-progress": "in progress"}
#: Notes of the highlighted project the panel shows (the project's Insights lists them all).
NOTES_SHOWN = 3


@dataclass(frozen=True, slots=True)
class ProjectStats:
    """One project: its registry entry and its statistics, or the one line saying why it could not be read."""

    entry: ProjectEntry
    stats: Stats | str

    @property
    def read(self) -> bool:
        return not isinstance(self.stats, str)

    def numbers(self) -> dict[str, int] | None:
        """The row's numbers by column (``okstra stats --all``'s), None when the project was not read."""
        stats = self.stats
        if isinstance(stats, str):
            return None
        return {
            "tasks": len(stats.tasks),
            "runs": len(stats.runs),
            **stats.outcome_totals(),
            "fix cycles": stats.fix_cycles_total(),
        }


@dataclass(frozen=True, slots=True)
class AllStats:
    projects: list[ProjectStats] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    filters: Filters = field(default_factory=Filters)


def read_all(home: Path | None, named: tuple[Path, ...], remembered: bool, filters: Filters) -> AllStats:
    """Every project of the list with its statistics under *filters* (``okstra stats --all``'s)."""
    registry = discover(home, named=named, remembered=remembered)
    per_project = [ProjectStats(entry, compute_for(entry, filters)) for entry in registry.entries]
    return AllStats(per_project, list(registry.notes), filters)


def summary(data: AllStats) -> Text:
    read = [p for p in data.projects if isinstance(p.stats, Stats)]
    tasks = sum(len(p.stats.tasks) for p in read if isinstance(p.stats, Stats))
    runs = sum(len(p.stats.runs) for p in read if isinstance(p.stats, Stats))
    if not data.projects:
        return Text("No project yet: open one (okstra-tui PROJECT) or register it with a manager.", style="bold")
    text = Text(f"{tasks} tasks, {runs} runs in the {len(read)} project{'s' if len(read) != 1 else ''} read")
    text.stylize("bold")
    said = describe_filters(data.filters)
    if said:
        text.append(f"  filter {visible(said)}", style="bold yellow")
    not_read = len(data.projects) - len(read)
    if not_read:
        text.append(f"; {not_read} cannot be read", style="bold red")
    if data.notes:
        text.append(f"; {len(data.notes)} note{'s' if len(data.notes) != 1 else ''} on the list", style="yellow")
    text.append("  Enter: the project's Insights · /: filter", style="dim")
    return text


def detail(row: ProjectStats, base: tuple[Path, str]) -> Text:
    """The panel under the table: the highlighted project in a few lines."""
    entry = row.entry
    text = Text(visible(entry.project_id), style="bold")
    text.append(f"  {visible(shown_root(entry.root, base))}", style="dim")
    stats = row.stats
    if isinstance(stats, str):
        text.append(f"\n{MARKS.get(entry.health, '✗ not read')}: ", style="bold red")
        text.append(visible(stats))
        return text
    outcomes = stats.outcome_totals()
    text.append(f"\n{len(stats.tasks)} tasks, {len(stats.runs)} runs: ")
    text.append(", ".join(f"{outcomes[o]} {HEADERS.get(o, o)}" for o in OUTCOMES))
    text.append(f"; {stats.fix_cycles_total()} fix cycles")
    lines = [
        ("time per phase", " · ".join(f"{visible(s.task_type)} {s.median / 60:.1f} min" for s in stats.phases)),
        ("tasks stop at", _stops(stats)),
        ("convergence", _rounds(stats)),
    ]
    for label, value in lines:
        text.append(f"\n{label:<16}", style="bold")
        text.append(value or "—")
    for note in stats.notes[:NOTES_SHOWN]:
        text.append("\nnote: ", style="bold")
        text.append(visible(note), style="dim")
    if len(stats.notes) > NOTES_SHOWN:
        text.append(f"\n+{len(stats.notes) - NOTES_SHOWN} more notes in the project's Insights", style="dim")
    return text


def _stops(stats: Stats) -> str:
    counts = {stop: sum(row.stops.get(stop, 0) for row in stats.funnel) for stop in STOPS}
    return " · ".join(f"{STOP_LABELS[stop]} {n}" for stop, n in counts.items() if n)


def _rounds(stats: Stats) -> str:
    parts = [f"{n} after {k} round{'s' if k != 1 else ''}" for k, n in sorted(stats.rounds.items())]
    parts += [f"{n} {visible(state)}" for state, n in sorted(stats.not_converged.items())]
    return " · ".join(parts)


class InsightsAllScreen(ViewScreen):
    """One row per project: its tasks, runs by outcome and fix cycles."""

    VIEW_NAME = View.INSIGHTS_ALL
    HELP = (
        "How the agents are working in every project of Home's list, side by side (the per-project table of "
        "`okstra stats --all`): tasks, runs by outcome and fix cycles. The panel below says more of the "
        "highlighted project: time per phase, where its tasks stop, convergence and its notes. Enter opens the "
        "project and its own Insights (the charts). / narrows every project with since:WHEN, type:TYPE and "
        "task:GLOB. A project that cannot be read is one row, with the reason. The numbers follow changes in "
        "any project."
    )
    BINDINGS = [
        Binding("enter", "open_project", "Project's insights", priority=True),
        Binding("slash", "filter", "Filter"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.data = AllStats()
        self.filters = Filters()

    def crumbs(self) -> list[str]:
        return ["Home", "Insights across projects"]

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield Static(Text("Reading every project…", style="dim"), id="ia-summary")
        yield Input(placeholder="since:YYYY-MM-DD type:TYPE task:GLOB  (Enter applies, empty clears)", id="ia-filter")
        table: DataTable[Text] = ListTable(id="ia-table", cursor_type="row", classes="pane")
        table.border_title = "Projects"
        yield table
        box = VerticalScroll(Static("", id="ia-detail"), id="ia-detail-box", classes="pane")
        box.border_title = "Project"
        yield box
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.query_one("#ia-filter", Input).display = False
        self.query_one("#ia-table", DataTable).focus()

    def read(self) -> AllStats:
        home, named, remembered = registry_sources(self.app)
        return read_all(home, named, remembered, self.filters)

    def show(self, data: AllStats) -> None:
        self.data = data
        self.query_one("#ia-summary", Static).update(summary(data))
        self._fill()

    def fit_width(self, width: int) -> None:
        super().fit_width(width)
        if self.query("#ia-table"):
            self._fill()

    def _columns(self) -> list[tuple[str, int]]:
        """Each column shown and its width: the numbers as wide as their headers, the project and the note
        sharing the rest (no note on a narrow terminal: the panel says it)."""
        width = self.app.size.width
        numbers = [(key, len(HEADERS.get(key, key))) for key in NUMBERS]
        rest = width - 6 - sum(w + 2 for _, w in numbers) - 2
        if width < NARROW_COLUMNS:
            return [("project", max(rest, 10)), *numbers]
        project = min(max(rest // 3, 12), 24)
        return [("project", project), *numbers, ("note", max(rest - project - 2, 12))]

    def _fill(self) -> None:
        table: DataTable[Text] = self.query_one("#ia-table", DataTable)
        columns = self._columns()
        previous = self._current_id()
        table.clear(columns=True)
        for key, width in columns:
            table.add_column(HEADERS.get(key, key), key=key, width=width)
        for n, row in enumerate(self.data.projects):
            numbers = row.numbers()
            cells: list[Text] = []
            for key, width in columns:
                if key == "project":
                    cells.append(cut(row.entry.project_id, width))
                elif key == "note":
                    cells.append(cut(Text(visible(self._note(row)), style="dim" if row.read else "red"), width))
                elif numbers is None:
                    first = key == NUMBERS[0]  # the mark in the first number's cell, a dash in the others
                    cells.append(Text("✗" if first else "—", style="bold red" if first else "dim"))
                else:
                    cells.append(Text(str(numbers[key]), justify="right", style="" if numbers[key] else "dim"))
            table.add_row(*cells, key=str(n))
            if row.entry.project_id == previous:
                table.move_cursor(row=n)
        self._detail()

    @staticmethod
    def _note(row: ProjectStats) -> str:
        stats = row.stats
        if isinstance(stats, str):
            entry = row.entry  # the root is in the panel below: the note says why
            return f"{MARKS.get(entry.health, '✗ not read')}: {stats if entry.readable else entry.reason or stats}"
        count = len(stats.notes)
        return f"{count} note{'s' if count != 1 else ''}" if count else ""

    def _base(self) -> tuple[Path, str]:
        base: tuple[Path, str] | None = getattr(self.app, "root_base", None)
        return base or (Path.home(), "~")

    def selected(self) -> ProjectStats | None:
        table: DataTable[Text] = self.query_one("#ia-table", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        index = int(str(key))
        return self.data.projects[index] if index < len(self.data.projects) else None

    def _current_id(self) -> str | None:
        row = self.selected()
        return None if row is None else row.entry.project_id

    @on(DataTable.RowHighlighted, "#ia-table")
    def _detail(self) -> None:
        row = self.selected()
        self.query_one("#ia-detail", Static).update("" if row is None else detail(row, self._base()))

    def action_open_project(self) -> None:
        """The highlighted project opened (as Enter on Home does), then its Insights."""
        box = self.query_one("#ia-filter", Input)
        if box.has_focus:  # Enter in the filter line applies it
            self._apply_filter(box)
            return
        row = self.selected()
        if row is None:
            return
        if not row.read:
            self.notify(f"{row.entry.project_id}: {row.stats}", severity="warning", timeout=6)
            return
        app = self.app
        opener = getattr(app, "open_project", None)
        if opener is None:
            return
        okstra = self.okstra
        opener(row.entry.root)
        if okstra.project.root == row.entry.root:
            app.post_message(OpenView(Location(View.INSIGHTS)))

    def current_path(self) -> Path | None:
        row = self.selected()
        return None if row is None else row.entry.root

    # ---------------------------------------------------------- filter

    def action_filter(self) -> None:
        box = self.query_one("#ia-filter", Input)
        box.display = True
        box.value = describe_filters(self.filters)
        box.focus()

    def _apply_filter(self, box: Input) -> None:
        parsed = parse_filters(box.value)
        if isinstance(parsed, str):
            self.notify(parsed, severity="warning", timeout=5)
            return
        self.filters = parsed
        box.display = False
        self.query_one("#ia-table", DataTable).focus()
        self.load()
