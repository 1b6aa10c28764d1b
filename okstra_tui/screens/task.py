"""One task: workflow state from its manifest, instruction set, run timeline, related tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from okstra_core import layout
from okstra_core.errors import LoadError
from okstra_core.models.task import NextRecommendedPhase, TaskManifest

from ..navigation import Location
from ..summaries import TaskOverview, load_task
from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from .base import ViewScreen

NEXT_STYLES = {"ready": "bold green", "pending": "yellow", "blocked": "bold red", "terminal": "dim"}
STATE_STYLES = {"completed": "green", "done": "green", "in-progress": "cyan", "active": "cyan", "failed": "red",
                "blocked": "red", "pending": "yellow", "skipped": "dim", "not-started": "dim"}


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
    info = Table.grid(padding=(0, 2))
    info.add_column(style="bold", no_wrap=True)
    info.add_column()
    info.add_row("task key", m.task_key)
    if m.title:
        info.add_row("title", m.title)
    info.add_row("type / category", f"{m.task_type} / {m.work_category}")
    info.add_row("status", Text(m.current_status, style=STATE_STYLES.get(m.current_status, "")))
    if m.latest_run_status:
        info.add_row("latest run", f"{m.latest_run_status}  {m.latest_run_path or ''}")
    wf = m.workflow
    info.add_row("current phase", f"{wf.current_phase or '-'}  ({wf.current_phase_state or '-'})")
    info.add_row("last completed", wf.last_completed_phase or "-")
    info.add_row("next recommended", next_phase_text(wf.next_recommended_phase))
    corr = wf.next_recommended_phase_correction
    if corr is not None:
        info.add_row(Text("correction", style="bold yellow"),
                     Text.assemble("authored ", next_phase_text(corr.authored), "\napplied  ", next_phase_text(corr.applied)))
    if wf.awaiting_approval:
        info.add_row(Text("awaiting approval", style="bold magenta"), Text("yes — a person must approve", style="magenta"))
    else:
        info.add_row("awaiting approval", "no")
    info.add_row("last safe checkpoint", wf.last_safe_checkpoint or "-")
    fc = m.fix_cycles
    if fc is not None:
        line = f"{fc.count} cycle(s)"
        if fc.open_cycle_id:
            line += f", open: {fc.open_cycle_id}"
        if fc.latest is not None:
            line += f"\nlatest #{fc.latest.cycle}: {fc.latest.symptom}" + (
                f" (closed {fc.latest.closed_at})" if fc.latest.closed_at else " (open)")
        info.add_row("fix cycles", line)
    if m.phase_outcome:
        info.add_row("phase outcome", ", ".join(f"{k}: {v}" for k, v in m.phase_outcome.items()))
    phases = Table(title="workflow phase states", title_justify="left", title_style="bold", expand=False,
                   show_edge=False, box=None, padding=(0, 2))
    phases.add_column("phase")
    phases.add_column("state")
    for phase, state in wf.phase_states.items():
        marker = " ◀ current" if phase == wf.current_phase else ""
        phases.add_row(phase, Text(state + marker, style=STATE_STYLES.get(state, "")))
    return Group(info, Text(""), phases)


class TaskScreen(ViewScreen):
    """The overview of one task."""

    VIEW_NAME = "task"
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
        self.bundle = self.okstra_task(task_root)
        self.overview: TaskOverview | None = None

    def okstra_task(self, root: Path) -> Any:
        from ..app import open_task

        return open_task(root)

    @property
    def location(self) -> Location:
        return Location("task", self.task_root)

    def crumbs(self) -> list[str]:
        return ["Catalog", f"{self.task_root.parent.name}/{self.task_root.name}"]

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        with Horizontal():
            with VerticalScroll(id="task-overview", classes="pane"):
                yield Static("Loading…", id="task-manifest")
            with Vertical(id="task-side"):
                timeline: DataTable[Any] = DataTable(id="task-timeline", cursor_type="row", zebra_stripes=True,
                                                     classes="pane")
                timeline.border_title = "Timeline of runs"
                yield timeline
                files: DataTable[Any] = DataTable(id="task-files", cursor_type="row", classes="pane")
                files.border_title = "Instruction set, history & notes"
                yield files
                related: DataTable[Any] = DataTable(id="task-related", cursor_type="row", classes="pane")
                related.border_title = "Related tasks"
                yield related
        yield BindingsFooter()

    def on_mount(self) -> None:
        super().on_mount()
        t: DataTable[Any] = self.query_one("#task-timeline", DataTable)
        t.add_columns("when", "type", "stage", "status", "run dir", "fix cycle")
        f: DataTable[Any] = self.query_one("#task-files", DataTable)
        f.add_columns("file", "where")
        r: DataTable[Any] = self.query_one("#task-related", DataTable)
        r.add_columns("task key", "relation")
        t.focus()
        self._load()

    def watched_paths(self) -> list[Path]:
        root = self.task_root
        return [layout.task_manifest_path(root), layout.timeline_path(root), layout.instruction_set_dir(root),
                layout.history_dir(root), layout.runs_dir(root), layout.notes_dir(root)]

    def reload(self) -> None:
        self.bundle = self.okstra_task(self.task_root)
        self._load()

    @work(thread=True, exclusive=True, group="task-load")
    def _load(self) -> None:
        self.mark_seen()
        overview = load_task(self.bundle)
        self.app.call_from_thread(self._loaded, overview)

    def _loaded(self, ov: TaskOverview) -> None:
        self.overview = ov
        box = self.query_one("#task-overview", VerticalScroll)
        manifest_widget = self.query_one("#task-manifest", Static)
        for old in box.query(ErrorPanel):
            old.remove()
        if isinstance(ov.manifest, LoadError):
            manifest_widget.update(Text(f"{self.task_root.parent.name}/{self.task_root.name}", style="bold"))
            box.mount(ErrorPanel(ov.manifest, title="task-manifest.json"), before=manifest_widget)
        else:
            manifest_widget.update(manifest_renderable(ov.manifest))
        if isinstance(ov.fix_cycles, LoadError):
            box.mount(ErrorPanel(ov.fix_cycles, title="fix-cycles.jsonl"))
        self._fill_timeline(ov)
        self._fill_files(ov)
        self._fill_related(ov)

    def _fill_timeline(self, ov: TaskOverview) -> None:
        table: DataTable[Any] = self.query_one("#task-timeline", DataTable)
        cursor = table.cursor_row
        table.clear()
        timeline = ov.timeline
        if isinstance(timeline, LoadError):
            table.border_subtitle = f"timeline: {timeline.reason}"
            for rd in ov.run_dirs:
                table.add_row("?", rd.task_type, str(rd.stage or ""), "", rd.rel, "", key=str(rd.path))
        else:
            table.border_subtitle = f"{len(timeline.entries)} run(s)"
            for i, e in enumerate(timeline.entries):
                table.add_row(e.run_timestamp.replace("T", " ")[:19], e.task_type, str(e.stage or ""),
                              Text(e.status, style=STATE_STYLES.get(e.status, "")), e.run_dir, e.fix_cycle_id or "",
                              key=f"{i}:{self.okstra.project.root / e.run_dir}")
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1))

    def _fill_files(self, ov: TaskOverview) -> None:
        table: DataTable[Any] = self.query_one("#task-files", DataTable)
        cursor = table.cursor_row
        table.clear()
        root = self.task_root
        for path in ov.instruction_files:
            table.add_row(path.name, "instruction-set", key=str(path))
        for path in (layout.task_manifest_path(root), layout.task_index_path(root), layout.timeline_path(root),
                     layout.fix_cycles_path(root), layout.recap_log_path(root)):
            if path.exists() or path.is_symlink():
                table.add_row(path.name, path.parent.relative_to(root).as_posix() or ".", key=str(path))
        for path in ov.notes:
            table.add_row(path.name, "notes", key=str(path))
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1))

    def _fill_related(self, ov: TaskOverview) -> None:
        table: DataTable[Any] = self.query_one("#task-related", DataTable)
        table.clear()
        if isinstance(ov.manifest, LoadError):
            return
        for rel in ov.manifest.related_tasks:
            table.add_row(Text(rel.task_key, style="underline"), rel.relation, key=rel.task_key)
        table.border_subtitle = f"{len(ov.manifest.related_tasks)}"

    # ------------------------------------------------------------ events

    @on(DataTable.RowSelected, "#task-timeline")
    def _open_run(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value)
        run_dir = Path(key.split(":", 1)[1]) if ":" in key and not key.startswith("/") else Path(key)
        self.okstra.navigate(Location("runs", self.task_root, run_dir))

    @on(DataTable.RowSelected, "#task-files")
    def _open_file(self, event: DataTable.RowSelected) -> None:
        self.okstra.navigate(Location("file", self.task_root, Path(str(event.row_key.value))))

    @on(DataTable.RowSelected, "#task-related")
    def _open_related(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value)
        task = self.okstra.project.find_task(key)
        if task is None:
            self.notify(f"Related task {key} is not in this project.", severity="warning")
            return
        self.okstra.navigate(Location("task", task.root))

    def action_runs(self) -> None:
        self.okstra.navigate(Location("runs", self.task_root))

    def action_convergence(self) -> None:
        self.okstra.navigate(Location("convergence", self.task_root))

    def action_design_prep(self) -> None:
        self.okstra.navigate(Location("design-prep", self.task_root))

    def action_reports(self) -> None:
        self.okstra.navigate(Location("reports", self.task_root))

    def current_path(self) -> Path | None:
        focused = self.focused
        if isinstance(focused, DataTable) and focused.row_count and focused.id in ("task-files", "task-timeline"):
            key = str(focused.coordinate_to_cell_key(focused.cursor_coordinate).row_key.value)
            return Path(key.split(":", 1)[1]) if focused.id == "task-timeline" else Path(key)
        return self.task_root
