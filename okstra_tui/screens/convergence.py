"""Convergence: groups and roster, each round's plan and votes, the terminal state, migrations."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from okstra_core import layout
from okstra_core.errors import LoadError
from okstra_core.models.convergence import (
    ConvergenceFinal,
    ConvergenceGroups,
    ConvergenceWork,
    RoundPlan,
    RoundResults,
)
from okstra_core.text import counted, visible

from ..data.convergence import ConvergenceTrail, load_convergence
from ..navigation import Location, View
from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from ..widgets.shown import shown, shown_block
from .base import ViewScreen

VOTE_STYLES = {"agree": "bold green", "disagree": "bold red", "abstain": "dim"}
VERDICT_STYLES = {"confirmed": "bold green", "rejected": "bold red", "disputed": "bold yellow", "open": "cyan"}


def groups_table(groups: ConvergenceGroups) -> Table:
    table = Table(
        title=escape(visible(f"Round 0 groups · roster: {', '.join(groups.roster)}")),
        title_justify="left",
        title_style="bold",
        expand=True,
    )
    table.add_column("group", no_wrap=True)
    table.add_column("title")
    table.add_column("tickets")
    table.add_column("findings (analyser: summary)")
    for g in groups.groups:
        findings = "\n".join(f"{f.analyser_id}: {f.summary}" for f in g.findings)
        table.add_row(shown(g.group_id), shown(g.title), shown(", ".join(g.tickets)), shown_block(findings))
    return table


def vote_matrix(round_no: int, plan: Any, results: Any, group_ids: list[str]) -> RenderableType:
    """Analyser x finding-group matrix of one round's votes, with the plan's assignments."""
    parts: list[RenderableType] = []
    if isinstance(plan, LoadError):
        parts.append(shown(f"plan: {plan}", style="red"))
        plan = None
    if isinstance(results, LoadError):
        parts.append(shown(f"results: {results}", style="red"))
        results = None
    assigned: dict[str, set[str]] = {}
    roster: list[str] = []
    if isinstance(plan, RoundPlan):
        roster = list(plan.roster)
        for d in plan.dispatches:
            if d.analyser_id is not None:
                assigned[d.analyser_id] = set(d.group_ids)
    outcomes: dict[str, Any] = {}
    if isinstance(results, RoundResults):
        for o in results.outcomes:
            if o.analyser_id is None:
                continue
            outcomes[o.analyser_id] = o
            if o.analyser_id not in roster:
                roster.append(o.analyser_id)
    columns = list(group_ids)
    for o in outcomes.values():
        for v in o.votes:
            if v.group_id not in columns:
                columns.append(v.group_id)
    state = "planned" if plan is not None and results is None else "collected" if results is not None else "missing"
    table = Table(title=f"Round {round_no} · {state}", title_justify="left", title_style="bold")
    table.add_column("analyser", no_wrap=True)
    table.add_column("status")
    for gid in columns:
        table.add_column(escape(visible(gid)), justify="center")
    for analyser in roster:
        outcome = outcomes.get(analyser)
        votes = {v.group_id: v.vote for v in outcome.votes} if outcome else {}
        cells: list[Text] = []
        for gid in columns:
            if gid in votes:
                cells.append(shown(votes[gid], style=VOTE_STYLES.get(votes[gid], "")))
            elif gid in assigned.get(analyser, set()):
                cells.append(Text("pending" if outcome is None else "no vote", style="yellow"))
            else:
                cells.append(Text("·", style="dim"))
        status = shown(
            outcome.status if outcome else ("dispatched" if analyser in assigned else "-"),
            style="red" if outcome and outcome.status != "completed" else "",
        )
        table.add_row(shown(analyser), status, *cells)
    parts.append(table)
    return Group(*parts)


def trail_renderables(trail: ConvergenceTrail, root: Path) -> list[Widget]:
    """The widgets of one trail, errors inline."""
    out: list[Widget] = []
    final = trail.final
    head = shown(f"{trail.run.label} · state seq {trail.seq_text}", style="bold")
    if isinstance(final, ConvergenceFinal):
        head.append(
            visible(f"   terminal: {final.terminal_state} after {_rounds(final.rounds)}"),
            style="bold green" if final.terminal_state == "converged" else "bold yellow",
        )
    elif isinstance(trail.work, ConvergenceWork):
        head.append(visible(f"   working: {trail.work.status}, queue {len(trail.work.queue)}"), style="cyan")
    out.append(Static(head, classes="section-title"))
    for label, value in (("groups", trail.groups), ("work", trail.work), ("final", final)):
        if isinstance(value, LoadError):
            out.append(ErrorPanel(value, title=f"convergence {label}"))
    group_ids: list[str] = []
    if isinstance(trail.groups, ConvergenceGroups):
        group_ids = [g.group_id for g in trail.groups.groups if g.group_id is not None]
        out.append(Static(groups_table(trail.groups)))
    for round_no in sorted(set(trail.plans) | set(trail.results)):
        out.append(Static(vote_matrix(round_no, trail.plans.get(round_no), trail.results.get(round_no), group_ids)))
    if isinstance(trail.work, ConvergenceWork):
        work = Table(title="Working state", title_justify="left", title_style="bold")
        work.add_column("group")
        work.add_column("state")
        work.add_column("votes")
        for gid, st in trail.work.findings.items():
            votes = ", ".join(f"{a}={v}" for a, v in st.votes.items())
            work.add_row(shown(gid), shown(st.state or "-", style=VERDICT_STYLES.get(st.state or "", "")), shown(votes))
        rounds = ", ".join(f"r{r.round}:{r.status}" for r in trail.work.rounds)
        out.append(
            Static(Group(work, shown(f"rounds: {rounds or '-'}   queue: {', '.join(trail.work.queue) or 'empty'}")))
        )
    if isinstance(final, ConvergenceFinal):
        table = Table(
            title=escape(visible(f"Terminal state: {final.terminal_state} (finalized {final.finalized_at})")),
            title_justify="left",
            title_style="bold",
        )
        table.add_column("group")
        table.add_column("verdict")
        table.add_column("votes")
        for g in final.groups:
            table.add_row(
                shown(g.group_id or "-"),
                shown(g.verdict or "-", style=VERDICT_STYLES.get(g.verdict or "", "")),
                shown(", ".join(f"{a}={v}" for a, v in g.votes.items())),
            )
        out.append(Static(table))
    if trail.migrations:
        lines = Text("Migrations (byte-for-byte archives of replaced legacy state):\n", style="bold")
        for path in trail.migrations:
            lines.append(visible(f"  {layout.rel(path, root)}") + "\n", style="")
        out.append(Static(lines))
    return out


class ConvergenceScreen(ViewScreen):
    """Every convergence trail of one task."""

    VIEW_NAME = View.CONVERGENCE
    HELP = (
        "Convergence decision trails under each run's state/: the lead's Round 0 groups and roster, each round's "
        "plan and votes as an analyser × finding-group matrix, the working state, the terminal state, and the "
        "migration archives."
    )

    def __init__(self, task_root: Path) -> None:
        super().__init__()
        self.task_root = task_root

    @classmethod
    def from_location(cls, location: Location) -> Self:
        return cls(location.task_root)

    @property
    def location(self) -> Location:
        return Location(View.CONVERGENCE, self.task_root)

    def crumbs(self) -> list[str]:
        return ["Catalog", f"{self.task_root.parent.name}/{self.task_root.name}", "Convergence"]

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield VerticalScroll(Static("Loading…"), id="convergence-body", classes="pane")
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.query_one("#convergence-body").focus()

    def read(self) -> list[ConvergenceTrail]:
        return load_convergence(self.open_task(self.task_root))

    async def show(self, trails: list[ConvergenceTrail]) -> None:
        body = self.query_one("#convergence-body", VerticalScroll)
        y = body.scroll_y
        widgets: list[Widget] = []
        if not trails:
            widgets.append(Static("This task has no convergence state."))
        for trail in trails:
            widgets.extend(trail_renderables(trail, self.okstra.project.root))
        with self.app.batch_update():
            await body.remove_children()
            await body.mount_all(widgets)
        body.scroll_to(y=y, animate=False)

    def current_path(self) -> Path | None:
        return self.task_root


def _rounds(rounds: int | None) -> str:
    return "an unrecorded number of rounds" if rounds is None else counted(rounds, "round")
