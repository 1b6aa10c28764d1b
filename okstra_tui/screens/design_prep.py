"""Design-prep: items with status, their request, every input revision and the resolver's verdict."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Self

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from okstra_core import layout, names
from okstra_core.text import counted, visible

from ..data.preview import PreviewTarget, artifact_for
from ..navigation import Location, View
from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from ..widgets.preview import ArtifactPreview
from ..widgets.shown import shown
from ..widgets.virtual_table import Column, VirtualTable
from .base import ViewScreen

if TYPE_CHECKING:
    from okstra_core.store import Task
    from okstra_core.workflows.design_prep import Resolution

VERDICT_STYLES = {
    "authoritative": "bold green",
    "superseded": "dim",
    "duplicate-revision": "bold yellow",
    "stale-fingerprint": "bold yellow",
    "invalid": "bold red",
    "legacy-unassessed": "yellow",
}
VERDICT_LABELS = {
    "authoritative": "authoritative",
    "superseded": "superseded",
    "duplicate-revision": "skipped: duplicate",
    "stale-fingerprint": "skipped: stale",
    "invalid": "skipped: invalid",
}
STATUS_STYLES = {"confirmed": "green", "provisional": "yellow", "blocked": "red"}


@dataclass(frozen=True, slots=True)
class PrepRow:
    """One line of the table: an item (``key`` ``item:<id>``) or one of its files (``key`` its path)."""

    key: str
    name: Text
    status: Text
    rev: str
    verdict: Text


def prep_rows(res: Resolution) -> list[PrepRow]:
    """Each design item, then its request and its input revisions with the resolver's verdict."""
    rows: list[PrepRow] = []
    for item in res.items:
        auth = item.authoritative
        if res.legacy_unassessed:
            verdict = Text("legacy-unassessed", style="yellow")
        elif auth:
            verdict = Text(f"r{auth.revision} authoritative", style="green")
        else:
            verdict = Text("no authoritative input", style="yellow" if item.status != "confirmed" else "dim")
        status = shown(item.status, style=STATUS_STYLES.get(item.status, ""))
        rows.append(
            PrepRow(f"item:{item.prep_id}", shown(f"{item.prep_id} {item.title}", style="bold"), status, "", verdict)
        )
        if item.request is not None:
            ok = {
                True: Text("matches snapshot", style="green"),
                False: Text("differs from snapshot", style="red"),
                None: Text("-", style="dim"),
            }[item.request_ok]
            request_name = names.parse_in_category(layout.DESIGN_PREP_REQUESTS, item.request.name)
            request_seq = request_name.seq_text if request_name is not None else "?"
            rows.append(PrepRow(str(item.request), shown(f"  request · seq {request_seq}"), Text(), "", ok))
        for v in item.inputs:
            input_name = names.parse_in_category(layout.DESIGN_PREP_INPUTS, v.path.name)
            stamp = input_name.stamp if input_name is not None and input_name.stamp else v.path.name
            rows.append(
                PrepRow(
                    str(v.path),
                    shown(f"  input · {stamp}"),
                    Text(),
                    f"r{v.revision}" if v.revision else "?",
                    shown(VERDICT_LABELS.get(v.verdict, v.verdict), style=VERDICT_STYLES.get(v.verdict, "")),
                )
            )
    return rows


def resolve(task: Task) -> Resolution:
    """The resolver's verdicts for the task's latest planning report."""
    from okstra_core.workflows.design_prep import resolve as resolve_design_prep

    return resolve_design_prep(task)


class DesignPrepScreen(ViewScreen):
    """Per item: request, input revisions and verdicts; the highlighted file previews on the right."""

    VIEW_NAME = View.DESIGN_PREP
    HELP = (
        "Design items of the latest implementation-planning report with their status, the deterministic request "
        "and every confirmed input revision with the resolver's verdict: authoritative, superseded, skipped as a "
        "duplicate revision, skipped as stale (fingerprint mismatch), or legacy-unassessed for a markerless plan. "
        "a (or Enter on an item) opens the wizard that confirms the item, one step at a time: its request, one "
        "step per field, a review of the revision to append, then the resolver's verdict."
    )

    BINDINGS = [Binding("a", "confirm_item", "Confirm item")]

    def __init__(self, task_root: Path) -> None:
        super().__init__()
        self.task_root = task_root

    @classmethod
    def from_location(cls, location: Location) -> Self:
        return cls(location.task_root)

    @property
    def location(self) -> Location:
        return Location(View.DESIGN_PREP, self.task_root)

    def crumbs(self) -> list[str]:
        return ["Catalog", f"{self.task_root.parent.name}/{self.task_root.name}", "Design-prep"]

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        with Horizontal(id="dp-body"):
            with Vertical(id="dp-left"):
                yield Static("Resolving…", id="dp-summary")
                # The verdict never gives way and is never cut; the revision, then the status go first.
                table = VirtualTable(
                    [
                        Column("item", "item / file", min_width=24),
                        Column("status", "status", 11, give_way=2),
                        Column("rev", "rev", 3, give_way=1),
                        # As wide as the widest verdict shown (set with the rows).
                        Column("verdict", "verdict", len("verdict")),
                    ],
                    lambda row: (row.name, row.status, row.rev, row.verdict),
                    id="dp-table",
                    classes="pane",
                )
                table.border_title = "Items, requests and input revisions"
                yield table
            preview = ArtifactPreview(id="dp-preview", classes="pane")
            preview.border_title = "Preview"
            yield preview
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.table.focus()

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#dp-table", VirtualTable)

    def read(self) -> Resolution:
        return resolve(self.open_task(self.task_root))

    def show(self, res: Resolution) -> None:
        summary = self.query_one("#dp-summary", Static)
        left = self.query_one("#dp-left", Vertical)
        for old in left.query(ErrorPanel):
            old.remove()
        table = self.table
        cursor = table.cursor
        root = self.okstra.project.root
        if res.report is None:
            table.set_rows([])
            summary.update("This task has no implementation-planning report: no design items.")
            return
        head = Text.assemble(("approved snapshot: ", "bold"), visible(layout.rel(res.report, root)))
        if res.legacy_unassessed:
            head.append("\nlegacy-unassessed: a markerless legacy plan; it proceeds unassessed", style="bold yellow")
        skipped = sum(1 for w in res.warnings if "skipped" in w)
        if skipped:
            head.append(
                f"\n⚠ {counted(skipped, 'input')} skipped by the resolver (see the verdict column)", style="yellow"
            )
        summary.update(head)
        if res.error:
            left.mount(ErrorPanel(f"{res.report}: {res.error}", title="planning report"), after=summary)
        rows = prep_rows(res)
        widest = max((row.verdict.cell_len for row in rows), default=0)
        table.set_columns([*table.columns[:-1], replace(table.columns[-1], width=max(widest, len("verdict")))])
        table.set_rows(rows, keep=lambda row: row.key, at=cursor)

    @on(VirtualTable.Highlighted, "#dp-table")
    def _highlighted(self, event: VirtualTable.Highlighted) -> None:
        key = event.row.key
        if key.startswith("item:"):
            return
        path = Path(key)
        artifact = artifact_for(self.okstra.project, path)
        target = PreviewTarget(
            path, layout.rel(path, self.okstra.project.root), artifact, artifact.kind if artifact else "file"
        )
        self.query_one("#dp-preview", ArtifactPreview).show(target, self.okstra.project.root)

    @on(VirtualTable.Selected, "#dp-table")
    def _selected(self, event: VirtualTable.Selected) -> None:
        key = event.row.key
        if key.startswith("item:"):
            self.action_confirm_item()
        else:
            self.open_view(Location(View.FILE, self.task_root, Path(key)))

    def action_confirm_item(self) -> None:
        from .wizard_design import wizard_for_item

        rows = self.table.rows[: self.table.cursor + 1]
        prep_id = next((row.key.removeprefix("item:") for row in reversed(rows) if row.key.startswith("item:")), None)
        if prep_id is None:
            self.notify("Move to a design item first.", severity="warning")
            return
        wizard = wizard_for_item(self.open_task(self.task_root), prep_id)
        if isinstance(wizard, str):
            self.notify(visible(wizard), severity="warning", markup=False)
            return
        self.open_form(wizard)

    def current_path(self) -> Path | None:
        target = self.query_one("#dp-preview", ArtifactPreview).target
        return target.path if target is not None else self.task_root
