"""Now running: every run in progress across tasks, its workers, and a stalled mark; it updates live.

The runs are the core's (``okstra_core.workflows.running``). Ages are worked
out from the view's clock every few seconds without reading the store again;
the store is read again when a watched folder of a running run changes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import var

from okstra_core.errors import OkstraError
from okstra_core.store import Project
from okstra_core.workflows.running import RunningRun, WorkerActivity, running_runs

from ..data.catalog import shared_key_prefix
from ..navigation import Location, View
from ..widgets.footer import BindingsFooter
from ..widgets.summary_line import SummaryLine
from ..widgets.virtual_table import Column, VirtualTable
from .base import ViewScreen

#: The stalled thresholds ``t`` cycles through, in minutes (15 first: the default).
THRESHOLDS = (15, 30, 60, 5)

#: Seconds between two updates of the ages on screen.
TICK_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class WorkerRow:
    """A worker line under its run."""

    run: RunningRun
    worker: WorkerActivity


def age(delta: dt.timedelta | None) -> str:
    """A short age: ``45s``, ``12m``, ``3h 05m``, ``4d 02h`` (``-`` when unknown)."""
    if delta is None:
        return "-"
    seconds = int(delta.total_seconds())
    if seconds < 60:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 24:
        return f"{hours}h {minutes % 60:02d}m"
    return f"{hours // 24}d {hours % 24:02d}h"


class RunningScreen(ViewScreen):
    """The runs in progress, each followed by its workers."""

    VIEW_NAME = View.RUNNING
    HELP = (
        "Every run in progress across tasks: its task, type and stage, how long it has run, and how long nothing "
        "of it was written. A run quiet for longer than the threshold is marked STALLED (t changes the threshold). "
        "Under each run, its workers from the team-state ledger and their transcripts, each with its last event "
        "and its age. Enter opens the run's files."
    )

    BINDINGS = [
        Binding("t", "threshold", "Stalled after"),
        Binding("enter", "open_run", "Open run", show=False),
    ]

    threshold: var[int] = var(THRESHOLDS[0], init=False)
    """Minutes without a write after which a run is stalled."""

    def __init__(self) -> None:
        super().__init__()
        #: A fixed "now" for pictures and tests; None: the real clock.
        self.fixed_now: dt.datetime | None = None
        self.runs: list[RunningRun] | None = None
        self.key_prefix = ""

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield SummaryLine("Looking for runs in progress…", id="running-summary")
        table = VirtualTable(
            [
                Column("task", "task", min_width=16),
                Column("run", "run / worker", 22),
                Column("for", "running for", 11, give_way=1),
                Column("quiet", "quiet for", 9),
                Column("state", "state", min_width=12),
            ],
            self._cells,
            id="running-table",
            classes="pane",
        )
        table.border_title = "Now running"
        yield table
        yield BindingsFooter()

    def now(self) -> dt.datetime:
        return self.fixed_now or dt.datetime.now(dt.UTC)

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#running-table", VirtualTable)

    def on_mount(self) -> None:
        self.watch(self, "threshold", self.refresh_ages, init=False)
        self.set_interval(TICK_SECONDS, self.refresh_ages, name="running-ages")
        self.table.focus()

    def read(self) -> list[RunningRun] | str:
        try:
            return running_runs(Project(self.okstra.project.root))
        except (OkstraError, OSError) as exc:
            return f"Now running: {exc}"

    def show(self, runs: list[RunningRun] | str) -> None:
        if isinstance(runs, str):
            self.notify(runs, severity="error")
            return
        self.runs = runs
        self.key_prefix = shared_key_prefix(r.task for r in runs)
        self.table.set_column_label("task", f"task ({self.key_prefix}…)" if self.key_prefix else "task")
        rows: list[RunningRun | WorkerRow] = []
        for run in runs:
            rows.append(run)
            rows.extend(WorkerRow(run, w) for w in run.workers)
        self.table.set_rows(rows, keep=_identity)
        self.refresh_ages()

    def refresh_ages(self) -> None:
        """Work out the ages and stalled marks again from the clock (the store is not read)."""
        runs = self.runs
        if runs is None:
            return
        now = self.now()
        after = dt.timedelta(minutes=self.threshold)
        stalled = sum(1 for r in runs if r.stalled(now, after))
        parts = [
            (Text.assemble((f"{len(runs)}", "bold"), f" run{'s' if len(runs) != 1 else ''} in progress"), 0),
            (Text.assemble("   ", (f"{stalled} stalled", "bold red")) if stalled else Text(""), 0),
            (Text.assemble("   stalled after ", (f"{self.threshold} min", "bold"), " without a write (t)"), 1),
        ]
        if not runs:
            parts.append((Text("   nothing is running", style="italic"), 0))
        self.query_one("#running-summary", SummaryLine).show(parts)
        self.table.invalidate()

    def _cells(self, row: RunningRun | WorkerRow) -> list[Text | str]:
        now = self.now()
        if isinstance(row, WorkerRow):
            worker = row.worker
            since = None if worker.last_at is None else max(now - worker.last_at, dt.timedelta(0))
            return ["", Text(f"  ↳ {worker.worker_id}"), "", Text(age(since), style="dim"), Text(worker.last_event)]
        label = row.task_type + (f" stage-{row.stage}" if row.stage else "")
        stalled = row.stalled(now, dt.timedelta(minutes=self.threshold))
        state = Text("STALLED", style="bold red") if stalled else Text(row.status, style="cyan")
        return [
            Text(row.task.removeprefix(self.key_prefix), style="bold"),
            Text(label, style="bold"),
            age(row.running_for(now)),
            Text(age(row.quiet_for(now)), style="bold red" if stalled else ""),
            state,
        ]

    def action_threshold(self) -> None:
        index = THRESHOLDS.index(self.threshold) if self.threshold in THRESHOLDS else -1
        self.threshold = THRESHOLDS[(index + 1) % len(THRESHOLDS)]

    def action_open_run(self) -> None:
        self._open(self.table.current_row)

    @on(VirtualTable.Selected, "#running-table")
    def _selected(self, message: VirtualTable.Selected) -> None:
        self._open(message.row)

    def _open(self, row: object) -> None:
        run = row.run if isinstance(row, WorkerRow) else row
        if isinstance(run, RunningRun):
            self.open_view(Location(View.RUNS, run.task_root, run.run_dir))

    def current_path(self) -> Path | None:
        row = self.table.current_row
        run = row.run if isinstance(row, WorkerRow) else row
        return run.run_dir if isinstance(run, RunningRun) else None


def _identity(row: object) -> object:
    if isinstance(row, WorkerRow):
        return ("worker", str(row.run.run_dir), row.worker.worker_id)
    if isinstance(row, RunningRun):
        return ("run", str(row.run_dir))
    return row
