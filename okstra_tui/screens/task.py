"""One task: workflow state from its manifest, instruction set, run timeline, related tasks."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self

from rich.console import Group
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static

from okstra_core import layout, reading
from okstra_core.errors import LoadError
from okstra_core.models.task import NextRecommendedPhase, TaskManifest, Workflow
from okstra_core.text import counted, visible

from ..data.task import TaskOverview, load_task
from ..data.unread import NEW_MARK, marked
from ..navigation import Location, View
from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from ..widgets.key_values import KeyValues
from ..widgets.run_timeline import RunTimeline
from ..widgets.virtual_table import Column, VirtualTable
from .base import NARROW_COLUMNS, ViewScreen

if TYPE_CHECKING:
    from okstra_core.stats import RunPoint

NEXT_STYLES = {"ready": "bold green", "pending": "yellow", "blocked": "bold red", "terminal": "dim"}
STATE_STYLES = {
    "completed": "green",
    "done": "green",
    "in-progress": "cyan",
    "active": "cyan",
    "failed": "red",
    "blocked": "red",
    "pending": "yellow",
    "skipped": "dim",
    "not-started": "dim",
}


def next_phase_text(nxt: NextRecommendedPhase) -> Text:
    """The pointer as a person should read it: launchable only under ``ready``."""
    text = Text()
    text.append(nxt.status, style=NEXT_STYLES.get(nxt.status, "bold"))
    if nxt.phase:
        if nxt.launchable:
            text.append(f"  ▶ {nxt.phase} (launchable)", style="bold green")
        else:
            text.append(f"  {nxt.phase} (named, not launchable while {nxt.status})", style="dim")
    if nxt.rationale:
        text.append(f"\n{nxt.rationale}", style="italic")
    return text


def manifest_renderable(m: TaskManifest) -> Group:
    """Identity, workflow phase states, next phase, correction, approval, checkpoint, fix cycles."""
    info: list[tuple[Text | str, Text | str]] = []
    info.append(("task key", m.task_key))
    if m.title:
        info.append(("title", m.title))
    info.append(("type / category", f"{m.task_type or '-'} / {m.work_category or '-'}"))
    status = m.current_status or "-"
    info.append(("status", Text(status, style=STATE_STYLES.get(status, ""))))
    if m.latest_run_status:
        info.append(("latest run", f"{m.latest_run_status}  {m.latest_run_path or ''}"))
    wf = m.workflow or Workflow()
    info.append(("current phase", f"{wf.current_phase or '-'}  ({wf.current_phase_state or '-'})"))
    info.append(("last completed", wf.last_completed_phase or "-"))
    nxt = wf.next_recommended_phase
    info.append(("next recommended", next_phase_text(nxt) if nxt is not None else "-"))
    corr = wf.next_recommended_phase_correction
    if corr is not None:
        info.append(
            (
                Text("correction", style="bold yellow"),
                Text.assemble(
                    "authored ", next_phase_text(corr.authored), "\napplied  ", next_phase_text(corr.applied)
                ),
            )
        )
    if wf.awaiting_approval:
        info.append(
            (Text("awaiting approval", style="bold magenta"), Text("yes — a person must approve", style="magenta"))
        )
    else:
        info.append(("awaiting approval", "no"))
    info.append(("last safe checkpoint", str(wf.last_safe_checkpoint or "-")))
    fc = m.fix_cycles
    if fc is not None:
        line = counted(fc.count, "cycle")
        if fc.open_cycle_id:
            line += f", open: {fc.open_cycle_id}"
        if fc.latest is not None:
            line += f"\nlatest #{fc.latest.cycle}: {fc.latest.symptom}" + (
                f" (closed {fc.latest.closed_at})" if fc.latest.closed_at else " (open)"
            )
        info.append(("fix cycles", line))
    if isinstance(m.phase_outcome, dict) and m.phase_outcome:
        info.append(("phase outcome", ", ".join(f"{k}: {v}" for k, v in m.phase_outcome.items())))
    states: list[tuple[Text | str, Text | str]] = []
    for phase, state in wf.phase_states.items():
        marker = " ◀ current" if phase == wf.current_phase else ""
        state_text = str(state)
        states.append((Text(phase), Text(state_text + marker, style=STATE_STYLES.get(state_text, ""))))
    phases = KeyValues(states, label_style="", title="workflow phase states", header=("phase", "state"), indent=2)
    return Group(KeyValues(info), Text(""), phases)


@dataclass(frozen=True, slots=True)
class SideRow:
    """One line of a side table, and what Enter on it opens (a run dir, a file, a related task's key)."""

    cells: tuple[Text | str, ...]
    target: Path | str


def _side_cells(row: SideRow) -> tuple[Text | str, ...]:
    return row.cells


TIMELINE_COLUMNS = [
    Column("when", "when", 11, give_way=1),
    Column("type", "type", min_width=12),
    Column("stage", "st", 2),
    Column("status", "status", 12),
]
FILES_COLUMNS = [Column("file", "file", min_width=24), Column("where", "where", 16, give_way=1)]
RELATED_COLUMNS = [Column("key", "task key", min_width=20), Column("relation", "relation", 14)]


class TaskScreen(ViewScreen):
    """The overview of one task."""

    VIEW_NAME = View.TASK
    HELP = (
        "The task manifest's workflow state (the next recommended phase is launchable only under 'ready'), "
        "its instruction-set files, the timeline of runs and related tasks. Enter on a run opens it; "
        "Enter on a file previews it; Enter on a related task opens that task."
    )

    BINDINGS = [
        Binding("r", "runs", "Runs"),
        Binding("v", "convergence", "Convergence"),
        Binding("d", "design_prep", "Design-prep"),
        Binding("p", "reports", "Reports"),
    ]

    def __init__(self, task_root: Path) -> None:
        super().__init__()
        self.task_root = task_root
        self.bundle = self.open_task(task_root)
        self.overview: TaskOverview | None = None

    @classmethod
    def from_location(cls, location: Location) -> Self:
        return cls(location.task_root)

    @property
    def location(self) -> Location:
        return Location(View.TASK, self.task_root)

    def crumbs(self) -> list[str]:
        return ["Catalog", f"{self.task_root.parent.name}/{self.task_root.name}"]

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        with Horizontal(id="task-body"):
            with VerticalScroll(id="task-overview", classes="pane"):
                yield Static("Loading…", id="task-manifest")
            with Vertical(id="task-side"):
                with Vertical(id="task-runs"):
                    yield RunTimeline(id="task-picture", classes="pane")
                    timeline = VirtualTable(TIMELINE_COLUMNS, _side_cells, id="task-timeline", classes="pane")
                    timeline.border_title = "Timeline of runs"
                    yield timeline
                with Vertical(id="task-refs"):
                    files = VirtualTable(FILES_COLUMNS, _side_cells, id="task-files", classes="pane")
                    files.border_title = "Instruction set, history & notes"
                    yield files
                    related = VirtualTable(RELATED_COLUMNS, _side_cells, id="task-related", classes="pane")
                    related.border_title = "Related tasks"
                    yield related
        yield BindingsFooter()

    def fit_width(self, width: int) -> None:
        """Below :data:`NARROW_COLUMNS` the runs picture is one line (the timeline table keeps its rows)."""
        super().fit_width(width)
        for picture in self.query(RunTimeline):
            picture.set_compact(width < NARROW_COLUMNS)

    def _table(self, name: str) -> VirtualTable:
        return self.query_one(f"#task-{name}", VirtualTable)

    def on_mount(self) -> None:
        self._table("timeline").focus()
        self._show_now()

    def _show_now(self) -> None:
        """Read and show the task's overview on the UI thread; the whole task (its runs too) follows from a worker.

        A task's overview is its manifest, timeline and a few folder listings
        (milliseconds): reading them here paints the task in the same frame that
        shows the view, instead of a placeholder frame followed by a second one.
        """
        with reading.recording() as reads:
            overview = load_task(self.bundle, with_runs=False)
        self.read_done(reads.paths)
        self._loaded(overview, fresh=True)

    def show_task(self, task_root: Path) -> None:
        """Re-aim this (kept, currently hidden) view at *task_root*.

        The same task again only gets a look for changes; another task is read
        and shown with the cursors at the top.
        """
        if task_root == self.task_root and self.overview is not None:
            self._verify(None, [])
            return
        self.task_root = task_root
        self.bundle = self.open_task(task_root)
        self.overview = None
        if self.is_mounted:
            self.refresh_breadcrumbs()
            self.query_one("#task-overview", VerticalScroll).scroll_home(animate=False)
            self._table("timeline").focus()
            self._show_now()
            self.load()

    def read(self) -> TaskOverview:
        return load_task(self.open_task(self.task_root))

    def show(self, overview: TaskOverview) -> None:
        self.bundle = overview.task
        self._loaded(overview)

    def _loaded(self, ov: TaskOverview, fresh: bool = False) -> None:
        if ov.task.root != self.task_root:
            return  # read for a task this view no longer shows
        self.overview = ov
        box = self.query_one("#task-overview", VerticalScroll)
        manifest_widget = self.query_one("#task-manifest", Static)
        for old in box.query(ErrorPanel):
            old.remove()
        if isinstance(ov.manifest, LoadError):
            manifest_widget.update(Text(visible(f"{self.task_root.parent.name}/{self.task_root.name}"), style="bold"))
            box.mount(ErrorPanel(ov.manifest, title=layout.TASK_MANIFEST_FILE), before=manifest_widget)
        else:
            manifest_widget.update(manifest_renderable(ov.manifest))
        if isinstance(ov.fix_cycles, LoadError):
            box.mount(ErrorPanel(ov.fix_cycles, title=layout.FIX_CYCLES_FILE))
        self._fill_timeline(ov, fresh)
        self._fill_files(ov, fresh)
        self._fill_related(ov, fresh)
        if ov.runs is not None:
            self._show_picture(ov.task.root, ov.runs, ov.run_notes)

    def _show_picture(self, root: Path, runs: list[RunPoint], notes: list[str]) -> None:
        if root == self.task_root:
            self.query_one("#task-picture", RunTimeline).show(runs, notes)

    def _fill(self, name: str, rows: list[SideRow], fresh: bool) -> None:
        """Show *rows*; a reload keeps the cursor on the same target, a new task starts at the top."""
        self._table(name).set_rows(rows, keep=None if fresh else (lambda row: row.target))

    def _fill_timeline(self, ov: TaskOverview, fresh: bool) -> None:
        table = self._table("timeline")
        timeline = ov.timeline
        rows: list[SideRow] = []
        if isinstance(timeline, LoadError):
            table.border_subtitle = Text(visible(f"timeline: {timeline.reason}"))
            for rd in ov.run_dirs:
                rows.append(SideRow(("?", rd.task_type, str(rd.stage or ""), ""), rd.path))
        else:
            table.border_subtitle = counted(len(timeline.entries), "run")
            root = self.okstra.project.root
            new = self._new(root / e.run_dir for e in timeline.entries if e.run_dir)
            fresh_rows = sum(1 for e in timeline.entries if e.run_dir and root / e.run_dir in new)
            if fresh_rows:
                table.border_subtitle += f" · {NEW_MARK} {fresh_rows} new"
            for e in timeline.entries:
                status = Text(e.status or "-", style=STATE_STYLES.get(e.status or "", ""))
                if e.fix_cycle_id:
                    status.append(f" fix {e.fix_cycle_id}", style="yellow")
                # Entries of one task are days apart at most: month, day and time read best in a narrow column.
                stamp = e.run_timestamp or e.run_date_time_segment or ""
                when = stamp[5:16].replace("T", " ") or "?"
                target = root / e.run_dir if e.run_dir else self.task_root
                kind = marked(e.task_type or "?", target in new)
                rows.append(SideRow((when, kind, str(e.stage or ""), status), target))
        self._fill("timeline", rows, fresh)

    def _new(self, paths: Iterable[Path]) -> set[Path]:
        """Those of *paths* (runs, files) written since the person last looked at the task (see ``data.unread``)."""
        from okstra_tui.data import seen

        return self.okstra.looks.new_paths(seen.task_key(self.okstra.project.root, self.task_root), paths)

    def _fill_files(self, ov: TaskOverview, fresh: bool) -> None:
        root = self.task_root
        rows = [SideRow((path.name, layout.INSTRUCTION_SET_DIR), path) for path in ov.instruction_files]
        for path in (
            layout.task_manifest_path(root),
            layout.task_index_path(root),
            layout.timeline_path(root),
            layout.fix_cycles_path(root),
            layout.recap_log_path(root),
        ):
            if path.exists() or path.is_symlink():
                rows.append(SideRow((path.name, layout.rel(path.parent, root) or "."), path))
        rows.extend(SideRow((path.name, "notes"), path) for path in ov.notes)
        new = self._new(Path(row.target) for row in rows)
        rows = [
            SideRow((marked(str(row.cells[0]), Path(row.target) in new), *row.cells[1:]), row.target) for row in rows
        ]
        self._table("files").border_subtitle = f"{NEW_MARK} {len(new)} new" if new else ""
        self._fill("files", rows, fresh)

    def _fill_related(self, ov: TaskOverview, fresh: bool) -> None:
        related = [] if isinstance(ov.manifest, LoadError) else ov.manifest.related_tasks
        rows = [
            SideRow((Text(rel.task_key, style="underline"), rel.relation), rel.task_key)
            for rel in related
            if rel.task_key is not None
        ]
        self._table("related").border_subtitle = f"{len(rows)}"
        self._fill("related", rows, fresh)

    # ------------------------------------------------------------ events

    @on(VirtualTable.Selected, "#task-timeline")
    def _open_run(self, event: VirtualTable.Selected) -> None:
        self.okstra.looks.opened(Path(event.row.target))
        self.open_view(Location(View.RUNS, self.task_root, Path(event.row.target)))

    @on(VirtualTable.Selected, "#task-files")
    def _open_file(self, event: VirtualTable.Selected) -> None:
        self.okstra.looks.opened(Path(event.row.target))
        self.open_view(Location(View.FILE, self.task_root, Path(event.row.target)))

    def on_screen_resume(self) -> None:
        """Back from a run or a file: what was opened there is no longer marked new."""
        if self.overview is not None:
            self._fill_timeline(self.overview, fresh=False)
            self._fill_files(self.overview, fresh=False)

    @on(VirtualTable.Selected, "#task-related")
    def _open_related(self, event: VirtualTable.Selected) -> None:
        key = str(event.row.target)
        task = self.okstra.project.find_task(key)
        if task is None:
            self.notify(f"Related task {key} is not in this project.", severity="warning")
            return
        self.open_view(Location(View.TASK, task.root))

    def action_runs(self) -> None:
        self.open_view(Location(View.RUNS, self.task_root))

    def action_convergence(self) -> None:
        self.open_view(Location(View.CONVERGENCE, self.task_root))

    def action_design_prep(self) -> None:
        self.open_view(Location(View.DESIGN_PREP, self.task_root))

    def action_reports(self) -> None:
        self.open_view(Location(View.REPORTS, self.task_root))

    def current_path(self) -> Path | None:
        focused = self.focused
        if isinstance(focused, VirtualTable) and focused.id in ("task-files", "task-timeline"):
            row = focused.current_row
            if isinstance(row, SideRow):
                return Path(row.target)
        return self.task_root
