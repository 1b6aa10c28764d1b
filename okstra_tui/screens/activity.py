"""Activity: what happened across the project, newest first, over a chosen window; Enter opens the artifact.

The events are the core's (``okstra_core.workflows.activity``), derived from
the store itself (timelines, reports, sidecars, design-prep inputs, fix
cycles, the inbox), so the view cannot disagree with it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import var

from okstra_core import layout
from okstra_core.errors import OkstraError
from okstra_core.store import Project
from okstra_core.workflows.activity import EVENT_LABELS, Event, activity

from ..data.catalog import shared_key_prefix
from ..navigation import Location, View
from ..widgets.footer import BindingsFooter
from ..widgets.summary_line import SummaryLine
from ..widgets.virtual_table import Column, VirtualTable
from .base import ViewScreen
from .checks import location_for

#: The windows ``w`` cycles through: (label, how far back; None for everything, "seen" for the last look).
WINDOWS: tuple[tuple[str, dt.timedelta | str | None], ...] = (
    ("everything", None),
    ("since you last looked", "seen"),
    ("today", dt.timedelta(days=1)),
    ("7 days", dt.timedelta(days=7)),
)

KIND_STYLES = {
    "run-failed": "bold red",
    "run-completed": "green",
    "decision-waiting": "bold magenta",
    "decision-made": "cyan",
    "design-confirmed": "cyan",
    "fix-cycle-opened": "yellow",
}


class ActivityScreen(ViewScreen):
    """Every event of the project in one list, newest first."""

    VIEW_NAME = View.ACTIVITY
    HELP = (
        "What happened across the project, newest first: runs started, completed and failed, decisions appearing "
        "and being made, design items confirmed, fix cycles opened. Everything is read from the store (timelines, "
        "reports, sidecars, design-prep inputs, fix-cycle logs, the inbox). w changes the window (everything, since "
        "you last looked, today, 7 days); Enter opens the event's file; R reads the store again."
    )

    BINDINGS = [
        Binding("w", "window", "Window"),
        Binding("R", "reread", "Re-read"),
        Binding("enter", "open_event", "Open", show=False),
    ]

    window: var[int] = var(0, init=False)
    """Which of :data:`WINDOWS` is shown."""

    def __init__(self) -> None:
        super().__init__()
        #: A fixed "now" for pictures and tests; None: the real clock.
        self.fixed_now: dt.datetime | None = None
        self.events: list[Event] | None = None
        self.key_prefix = ""

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield SummaryLine("Reading what happened…", id="activity-summary")
        table = VirtualTable(
            [
                Column("when", "when", 16),
                Column("what", "what", 13),
                Column("task", "task", min_width=16),
                Column("text", "", min_width=16),
            ],
            self._cells,
            id="activity-table",
            classes="pane",
        )
        table.border_title = "Activity"
        yield table
        yield BindingsFooter()

    def now(self) -> dt.datetime:
        return self.fixed_now or dt.datetime.now(dt.UTC)

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#activity-table", VirtualTable)

    def on_mount(self) -> None:
        self.watch(self, "window", self._reload_window, init=False)
        self.table.focus()

    def _reload_window(self) -> None:
        self.query_one("#activity-summary", SummaryLine).show([(Text("Reading what happened…"), 0)])
        self.load()

    def _since(self) -> dt.datetime | None:
        _label, back = WINDOWS[self.window]
        if back is None:
            return None
        if back == "seen":
            from okstra_tui.data import seen

            return seen.load(self.okstra.project.root).last_look()
        assert isinstance(back, dt.timedelta)
        return self.now() - back

    def read(self) -> list[Event] | str:
        since = self._since()
        try:
            return activity(Project(self.okstra.project.root), since)
        except (OkstraError, OSError) as exc:
            return f"Activity: {exc}"

    def show(self, events: list[Event] | str) -> None:
        if isinstance(events, str):
            self.notify(events, severity="error")
            return
        self.events = events
        self.key_prefix = shared_key_prefix(e.task for e in events)
        self.table.set_column_label("task", f"task ({self.key_prefix}…)" if self.key_prefix else "task")
        self.table.set_rows(list(events), keep=lambda e: (e.at, e.kind, e.task, e.text))
        label, _back = WINDOWS[self.window]
        count = len(events)
        parts = [
            (Text.assemble((f"{count}", "bold"), f" event{'s' if count != 1 else ''}"), 0),
            (Text.assemble("   window: ", (label, "bold"), " (w)"), 0),
        ]
        if not events and self.window != 0:
            parts.append((Text("   nothing happened in this window", style="italic"), 1))
        self.query_one("#activity-summary", SummaryLine).show(parts)

    def _cells(self, event: Event) -> list[Text | str]:
        return [
            event.at.strftime("%Y-%m-%d %H:%M"),
            Text(EVENT_LABELS.get(event.kind, event.kind), style=KIND_STYLES.get(event.kind, "")),
            Text(event.task.removeprefix(self.key_prefix)),
            Text(event.text),
        ]

    def action_window(self) -> None:
        self.window = (self.window + 1) % len(WINDOWS)

    def action_reread(self) -> None:
        self.load()

    def action_open_event(self) -> None:
        event = self.table.current_row
        if isinstance(event, Event):
            self._open(event)

    @on(VirtualTable.Selected, "#activity-table")
    def _selected(self, message: VirtualTable.Selected) -> None:
        if isinstance(message.row, Event):
            self._open(message.row)

    def _open(self, event: Event) -> None:
        root = self.okstra.project.root
        if event.path is None or not event.path.exists():
            self.open_view(Location(View.TASK, event.task_root))
            return
        self.open_view(location_for(root, layout.rel(event.path, root)))

    def current_path(self) -> Path | None:
        event = self.table.current_row
        return event.path if isinstance(event, Event) else None
