"""Insights: pictures of how the agents are working, across every task (the numbers of ``okstra stats``).

Six charts, one at a time (``1``-``6``, ``n``/``p``): runs per day by outcome,
time per phase (median and quartiles), the funnel of tasks by phase reached,
fix cycles per task, convergence rounds until agreement, and transcript and
prompt sizes by worker. Beside the chart, its bars as a list; Enter on a row
lists the tasks behind it, and Enter there opens one. ``/`` narrows with the
CLI's filters. The statistics are computed in a thread worker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, OptionList, Static
from textual.widgets.option_list import Option

from okstra_core.store import Project
from okstra_core.text import visible

from ..data.insights import Chart, charts, describe_filters, parse_filters
from ..navigation import Location, View
from ..widgets.chart import ChartPlot
from ..widgets.footer import BindingsFooter
from ..widgets.list_table import ListOptions, ListTable
from ..widgets.shown import cut
from .base import ViewScreen

#: The list of tasks behind a bar shows at most this many (the count says how many there are).
TASKS_SHOWN = 500

#: Lines the notes take under the chart: up to this many notes show in full; with more, the first ones
#: and a count of the rest, which ``o`` lists.
NOTES_LINES = 2


def notes_text(notes: list[str]) -> Text:
    """The notes under the chart: each on its line, or the first ones and how many more ``o`` shows."""
    shown = notes if len(notes) <= NOTES_LINES else notes[: NOTES_LINES - 1]
    lines = [Text.assemble(("note: ", "bold"), (visible(note), "dim")) for note in shown]
    if len(shown) < len(notes):
        more = len(notes) - len(shown)
        lines.append(Text.assemble((f"+{more} more notes", "bold"), (" (o: read every note)", "dim")))
    text = Text("\n").join(lines)
    text.no_wrap, text.overflow = True, "ellipsis"  # a long note is cut, never wrapped over the next one
    return text


#: Cells a DataTable column spends on its padding (one each side).
CELL_PADDING = 2


def bar_columns(chart: Chart, width: int) -> tuple[int, int]:
    """The widths of the item and value columns of *chart*'s bars in a table *width* cells wide.

    Each is as wide as its widest text when both fit; otherwise the items keep at most half and the values
    take the rest (a text still too long is cut with "…").
    """
    labels = max((cell_len(item.label) for item in chart.items), default=4)
    values = max((cell_len(item.value) for item in chart.items), default=5)
    room = max(width - 2 * CELL_PADDING, 2)
    if labels + values <= room:
        return labels, values
    label_width = max(min(labels, room // 2), 1)
    return label_width, max(room - label_width, 1)


class AllNotes(ModalScreen[None]):
    """Every note of the statistics in view, one per line (Escape closes)."""

    BINDINGS = [Binding("escape", "dismiss_none", "Close"), Binding("o", "dismiss_none", "Close", show=False)]

    def __init__(self, notes: list[str]) -> None:
        super().__init__()
        self.notes = notes

    def compose(self) -> ComposeResult:
        with Vertical(id="ins-all-notes", classes="pane") as box:
            box.border_title = f"Notes ({len(self.notes)})"
            body = Text("\n").join(Text(f"- {visible(note)}") for note in self.notes)
            yield Static(body if self.notes else Text("No notes.", style="dim"))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class TasksBehind(ModalScreen[Path | None]):
    """The tasks behind one chart item; Enter opens one (dismisses with its root)."""

    BINDINGS = [Binding("escape", "dismiss_none", "Close")]

    def __init__(self, title: str, tasks: list[Any]) -> None:
        super().__init__()
        self.title_text = title
        self.tasks = tasks[:TASKS_SHOWN]
        self.total = len(tasks)

    def compose(self) -> ComposeResult:
        with Vertical(id="ins-behind", classes="pane") as box:
            box.border_title = "Tasks behind this bar"
            more = f" (the first {TASKS_SHOWN})" if self.total > TASKS_SHOWN else ""
            yield Static(Text(f"{visible(self.title_text)}: {self.total} tasks{more}; Enter opens one", style="bold"))
            options = [Option(Text(visible(t.key)), id=str(i)) for i, t in enumerate(self.tasks)]
            yield ListOptions(*options, id="ins-behind-list")

    @on(OptionList.OptionSelected, "#ins-behind-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.tasks[int(event.option.id or 0)].root)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class InsightsScreen(ViewScreen):
    """Charts over every task in view, each with the list of what its bars stand for."""

    VIEW_NAME = View.INSIGHTS
    HELP = (
        "How the agents are working, across tasks (the numbers of `okstra stats`): runs per day by outcome, time "
        "per phase (median and quartiles), the funnel of tasks by phase reached and where they stop, fix cycles "
        "per task, convergence rounds until agreement, transcript and prompt sizes by worker. 1-6, n and p pick "
        "a chart; the list beside it holds its bars, and Enter on one lists the tasks behind it. / narrows with "
        "since:WHEN (a date, a UTC time or an age such as 7d), type:TYPE and task:GLOB (the CLI's --since, "
        "--type, --task). Series differ by pattern "
        "as well as colour; the notes under the chart count runs whose times could not serve (o lists them "
        "all when they do not fit)."
    )
    BINDINGS = [
        Binding("n", "next_chart", "Next chart"),
        Binding("p", "previous_chart", "Previous chart", show=False),
        Binding("slash", "filter", "Filter"),
        Binding("R", "reread", "Re-read"),
        Binding("o", "notes", "Notes", show=False),
        *(Binding(str(i), f"chart({i - 1})", f"Chart {i}", show=False) for i in range(1, 7)),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.stats: Any = None
        self.charts: list[Chart] = []
        self.index = 0
        self.filters: Any = None

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield Static(Text("Reading the store…", style="dim"), id="ins-summary")
        yield Input(placeholder="since:YYYY-MM-DD type:TYPE task:GLOB  (Enter applies, empty clears)", id="ins-filter")
        with Horizontal(id="ins-main"):
            yield ChartPlot(id="ins-chart")
            table: DataTable[Text] = ListTable(id="ins-items", cursor_type="row", classes="pane")
            table.border_title = "Bars"
            yield table
        yield Static("", id="ins-notes")
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.query_one("#ins-filter", Input).display = False
        self.query_one("#ins-items", DataTable).focus()

    def read(self) -> tuple[Any, list[Chart], dict[Any, Any]]:
        from okstra_core.stats import compute

        stats = compute(Project(self.okstra.project.root), self.filters)
        made = charts(stats)
        built = self.query_one("#ins-chart", ChartPlot).build_all(made)  # drawing, too, off the UI thread
        return stats, made, built

    def show(self, data: tuple[Any, list[Chart], dict[Any, Any]]) -> None:
        self._show(*data)

    def _show(self, stats: Any, made: list[Chart], built: dict[Any, Any] | None = None) -> None:
        self.stats = stats
        self.charts = made
        self.query_one("#ins-chart", ChartPlot).built = built or {}
        head = Text(f"{len(stats.tasks)} tasks, {len(stats.runs)} runs", style="bold")
        said = describe_filters(stats.filters)
        if said:
            head.append(f"  filter {visible(said)}", style="bold yellow")
        head.append("  1-6/n/p: chart · Enter on a bar: its tasks · /: filter", style="dim")
        self.query_one("#ins-summary", Static).update(head)
        self.query_one("#ins-notes", Static).update(notes_text(list(stats.notes)))
        self._draw()

    def _draw(self) -> None:
        if not self.charts:
            return
        chart = self.charts[self.index]
        self.query_one("#ins-chart", ChartPlot).show(chart)
        table: DataTable[Text] = self.query_one("#ins-items", DataTable)
        table.clear(columns=True)
        table.border_title = f"{self.index + 1}/{len(self.charts)} · {chart.title}"
        label_width, value_width = bar_columns(chart, table.scrollable_content_region.width)
        table.add_column("item", key="item", width=label_width)
        table.add_column("value", key="value", width=value_width)
        for i, item in enumerate(chart.items):
            # Cut with "…" to the pane (Enter shows the whole item and value).
            label = cut(item.label, label_width)
            table.add_row(label, cut(Text(item.value, style="dim"), value_width), key=str(i))

    def fit_width(self, width: int) -> None:
        super().fit_width(width)
        self.call_after_refresh(self._draw)  # the bars' columns follow the pane's new width

    def action_chart(self, index: int) -> None:
        if 0 <= index < max(len(self.charts), 1):
            self.index = index
            self._draw()

    def action_next_chart(self) -> None:
        if self.charts:
            self.action_chart((self.index + 1) % len(self.charts))

    def action_previous_chart(self) -> None:
        if self.charts:
            self.action_chart((self.index - 1) % len(self.charts))

    def action_reread(self) -> None:
        self.load()

    def action_notes(self) -> None:
        if self.stats is not None:
            self.app.push_screen(AllNotes(list(self.stats.notes)))

    # ---------------------------------------------------------- filter

    def action_filter(self) -> None:
        box = self.query_one("#ins-filter", Input)
        box.display = True
        box.value = describe_filters(self.filters) if self.filters is not None else ""
        box.focus()

    @on(Input.Submitted, "#ins-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        parsed = parse_filters(event.value)
        if isinstance(parsed, str):
            self.notify(parsed, severity="warning", timeout=5)
            return
        self.filters = parsed
        event.input.display = False
        self.query_one("#ins-items", DataTable).focus()
        self.load()

    # ----------------------------------------------------- drill down

    @on(DataTable.RowSelected, "#ins-items")
    def _item_selected(self, event: DataTable.RowSelected) -> None:
        if not self.charts or self.stats is None:
            return
        item = self.charts[self.index].items[int(str(event.row_key.value))]
        tasks = self.stats.behind(item.key)
        if not tasks:
            whole = visible(f"{item.label.strip()}: {item.value}")  # the row's whole text, which the table cuts
            self.notify(f"{whole}\nNo task behind this item.", markup=False, timeout=5)
            return

        def chosen(root: Path | None) -> None:
            if root is not None:
                self.open_view(Location(View.TASK, root))

        self.app.push_screen(TasksBehind(f"{item.label.strip()} ({item.value})", tasks), chosen)
