"""Reports: the reading copy rendered in the app, the HTML in a browser, the direction-selection chain."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Self

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from okstra_core import layout, names, reading
from okstra_core.errors import LoadError
from okstra_core.store import Artifact, Task
from okstra_core.text import visible
from okstra_core.watch import Signature

from ..navigation import Location, View
from ..ui_thread import call_ui
from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from ..widgets.shown import shown
from ..widgets.store_markdown import StoreMarkdown
from ..widgets.virtual_table import Column, VirtualTable
from .base import ViewScreen

if TYPE_CHECKING:
    from okstra_core.workflows.direction import ChainCheck

# --------------------------------------------------------------- reports


def reading_copy(art: Artifact) -> tuple[str | None, LoadError | None]:
    """The reading copy of a report data file, rendered by the core's renderer (the stored ``.md`` is derived)."""
    from okstra_core.render.markdown import render_markdown
    from okstra_core.render.source import load_report_model

    model = load_report_model(art.path)
    if isinstance(model, LoadError):
        return None, model
    try:
        # The Markdown view parses with HTML off, so the data's own ``<`` is kept (no ``&lt;`` in code).
        return render_markdown(model, neutralise_html=False), None
    except Exception as exc:  # the renderer must never take the view down
        return None, LoadError(art.path, f"cannot render: {exc}")


def chain_checks(task: Task) -> list[ChainCheck] | str:
    """The direction-selection chain's checks, or a one-line reason they could not run."""
    from okstra_core.workflows.direction import check_chain

    try:
        return list(check_chain(task))
    except Exception as exc:  # a broken chain file must show, not crash
        return f"cannot check the chain: {exc}"


#: What every final report's data file name starts with, from the name grammar (said once, in the column title).
REPORT_PREFIX = names.KINDS_BY_NAME["final-report-data"].template.partition("{")[0]
REPORT_LABEL = "report"
#: The part of the view (:meth:`~okstra_tui.screens.base.ViewScreen.read_also`) the reading copy read.
READING_COPY = "reading-copy"


def shared_affixes(filenames: list[str]) -> tuple[str, str]:
    """The ``final-report-`` prefix and ``.data.json`` suffix, when every name has them (else empty)."""
    prefix = REPORT_PREFIX if filenames and all(f.startswith(REPORT_PREFIX) for f in filenames) else ""
    suffix = names.REPORT_DATA_SUFFIX
    suffix = (
        suffix if filenames and all(f.endswith(suffix) and len(f) > len(prefix + suffix) for f in filenames) else ""
    )
    return prefix, suffix


def run_cell(art: Artifact) -> str:
    """What the run adds to the report's name: its stage, or the whole run when the name names another type."""
    if art.name.task_type == art.run.task_type:
        return "" if art.run.stage is None else layout.stage_dir_name(art.run.stage)
    return art.run.label


class ReportsScreen(ViewScreen):
    """Reports of one task, its reading copy, and the direction-selection chain."""

    VIEW_NAME = View.REPORTS
    HELP = (
        "Final reports of every run of the task. The reading copy is rendered from the report data (the .md and "
        ".html siblings are derived, never the source). o opens the HTML sibling in the system browser. The "
        "direction-selection chain (option report → user-response sidecar → selected-direction → planning report) "
        "shows each digest and reference check as passed or failed. a opens the wizard that answers the selected "
        "report, one step at a time: choose a direction (option-selection in comparison mode) and answer its "
        "clarification questions, review the exact user-response sidecar, write it, then prepare planning or "
        "attach the answers."
    )

    BINDINGS = [Binding("o", "open_html", "Open HTML"), Binding("a", "respond", "Respond")]

    def __init__(self, task_root: Path, report: Path | None = None) -> None:
        super().__init__()
        self._rendering = asyncio.Lock()
        self.task_root = task_root
        self.initial = report
        self.reports: list[Artifact] = []
        #: The file-name prefix and suffix every report shares (shown once, in the report column's title).
        self.affixes = ("", "")

    @classmethod
    def from_location(cls, location: Location) -> Self:
        return cls(location.task_root, location.target)

    @property
    def location(self) -> Location:
        return Location(View.REPORTS, self.task_root, self.current_path())

    def crumbs(self) -> list[str]:
        return ["Catalog", f"{self.task_root.parent.name}/{self.task_root.name}", "Reports"]

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        with Horizontal(id="rep-main"):
            with Vertical(id="rep-left"):
                # The report's name never gives way; the run (only its stage, mostly) shrinks, then goes.
                table = VirtualTable(
                    [Column("report", REPORT_LABEL), Column("run", "run", 8, give_way=1)],
                    self._cells,
                    id="rep-table",
                    classes="pane",
                )
                table.border_title = "Reports"
                yield table
                chain = VerticalScroll(Static("Checking…", id="rep-chain"), id="rep-chain-box", classes="pane")
                chain.border_title = "Direction-selection chain"
                yield chain
            body = VerticalScroll(Static("Select a report.", id="rep-note"), id="rep-body", classes="pane")
            body.border_title = "Reading copy"
            yield body
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.table.focus()

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#rep-table", VirtualTable)

    def _cells(self, art: Artifact) -> list[Text]:
        prefix, suffix = self.affixes
        name = art.name.filename.removeprefix(prefix)
        return [shown(name.removesuffix(suffix) if suffix else name), shown(run_cell(art), style="dim")]

    def _fit_columns(self, reports: list[Artifact]) -> None:
        """Say the shared prefix and suffix once, in the title; the name column is as wide as the longest name."""
        self.affixes = prefix, suffix = shared_affixes([a.name.filename for a in reports])
        title = f"{prefix}…{suffix}" if prefix or suffix else REPORT_LABEL
        widest = max((cells[0].cell_len for cells in map(self._cells, reports)), default=0)
        self.table.set_columns(
            [Column("report", title, max(widest, len(title))), Column("run", "run", give_way=1, min_width=7)]
        )

    def read(self) -> tuple[list[Artifact], list[ChainCheck] | str]:
        task = self.open_task(self.task_root)
        reports = [a for rd in task.run_dirs for a in rd.of_kind("final-report-data")]
        return reports, chain_checks(task)

    def show(self, data: tuple[list[Artifact], list[ChainCheck] | str]) -> None:
        reports, checks = data
        table = self.table
        previous = self.current_path() or self.initial
        self.reports = reports
        self._fit_columns(reports)
        table.set_rows(reports, at=next((i for i, art in enumerate(reports) if art.path == previous), 0))
        chain = self.query_one("#rep-chain", Static)
        if isinstance(checks, str):
            chain.update(shown(checks, style="yellow"))
        elif not checks:
            chain.update(Text("No direction selection in this task.", style="dim"))
        else:
            lines = Text()
            for i, c in enumerate(checks):
                if i:
                    lines.append("\n")
                lines.append("✔ passed  " if c.ok else "✘ failed  ", style="bold green" if c.ok else "bold red")
                lines.append(visible(c.step), style="bold")
                lines.append(f"\n          {visible(c.detail)}", style="" if c.ok else "red")
            chain.update(lines)
        if not reports:
            self.query_one("#rep-note", Static).update("This task has no final reports yet.")

    @on(VirtualTable.Highlighted, "#rep-table")
    def _highlighted(self, event: VirtualTable.Highlighted) -> None:
        self._render_report(event.row)

    @work(thread=True, exclusive=True, group="reading-copy", description="reading-copy")
    def _render_report(self, art: Artifact) -> None:
        with reading.recording() as reads:
            text, note = reading_copy(art)
        call_ui(self.app, self._rendered, art, text, note, reads.paths)

    async def _rendered(self, art: Artifact, text: str | None, note: LoadError | None, read: Signature) -> None:
        # What the reading copy read makes the view stale too (an agent rewriting the report in place changes
        # no folder the view listed); reloaded, the view renders the report again.
        self.read_also(READING_COPY, None)
        self.read_also(READING_COPY, read)
        body = self.query_one("#rep-body", VerticalScroll)
        widgets: list[Widget] = [
            Static(shown(layout.rel(art.path, self.okstra.project.root), style="bold"), id="rep-note")
        ]
        if note is not None:
            widgets.append(ErrorPanel(note, title="Report data"))
        if text is not None:
            widgets.append(StoreMarkdown(text, id="rep-markdown"))
        async with self._rendering:  # two renderings at once would each mount their widgets
            with self.app.batch_update():
                await body.remove_children()
                await body.mount_all(widgets)
        body.scroll_home(animate=False)

    def action_open_html(self) -> None:
        path = self.current_path()
        if path is None:
            self.notify("No report selected.", severity="warning")
            return
        html = path.with_name(path.name.replace(names.REPORT_DATA_SUFFIX, ".html"))
        if not html.is_file():
            self.notify(f"No HTML sibling: {html.name}", severity="warning")
            return
        self.app.open_url(html.resolve().as_uri())
        self.notify(f"Opened {html.name} in the browser", timeout=3)

    def action_respond(self) -> None:
        from .wizard_direction import wizard_for_report

        path = self.current_path()
        if path is None:
            self.notify("No report selected.", severity="warning")
            return
        wizard = wizard_for_report(self.open_task(self.task_root), path)
        if isinstance(wizard, str):
            self.notify(visible(wizard), severity="warning", markup=False)
            return
        self.open_form(wizard)

    def current_path(self) -> Path | None:
        if not self.is_mounted:
            return self.initial
        art = self.table.current_row
        return art.path if isinstance(art, Artifact) else None
