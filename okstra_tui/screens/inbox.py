"""The inbox: every decision waiting for a person, newest first, grouped by task; Enter opens its wizard.

The list is the core's (``okstra_core.workflows.inbox.read_inbox``, the
same as ``okstra inbox``), with the count of files it could not read. Approvals are listed with what the person must do:
the contract defines no approval file, so the workbench writes none.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey

from okstra_core.text import visible
from okstra_core.workflows.inbox import Inbox, PendingDecision

from ..data.catalog import current_inbox, shared_key_prefix
from ..navigation import Location, View
from ..widgets.footer import BindingsFooter
from ..widgets.list_table import ListTable
from ..widgets.shown import shown_block
from .base import NARROW_COLUMNS, ViewScreen
from .decisions import DECISIONS, wizard_for_decision

#: The table's columns; every one but the summary has a fixed width.
COLUMNS = ("decision", "item", "since", "summary")
COLUMN_WIDTHS = {"decision": 30, "item": 8, "since": 19}


def what_to_do(decision: PendingDecision) -> Text:
    """The detail pane: what the decision is, its file, and how it is made."""
    kind = DECISIONS[decision.kind]
    text = Text()
    text.append(kind.label, style=kind.style)
    if decision.item:
        text.append(f"  {decision.item}", style="bold")
    text.append("\n\n")
    text.append_text(shown_block(decision.summary))
    rows = [("task", decision.task), ("file", decision.path), ("since", decision.since)]
    if decision.detail:
        rows.append(("note", decision.detail))
    for label, value in rows:
        text.append(f"\n{label:<6} ", style="bold")
        text.append_text(shown_block(value))
    text.append("\n\n")
    text.append(kind.what_to_do(decision), style="italic")
    return text


def _summary(decisions: list[PendingDecision], unreadable: int, unlisted: tuple[tuple[str, str], ...]) -> Text:
    """The summary line: what waits, and what could not be read (the same counts as ``okstra inbox``)."""
    count = len(decisions)
    if not count:
        complete = not unreadable and not unlisted
        head = (
            Text("Nothing waits for you.", style="bold green")
            if complete
            else Text("Nothing waits in what could be read.", style="bold yellow")
        )
    else:
        tasks = len({d.task for d in decisions})
        head = Text(f"{count} waiting for you", style="bold")
        head.append(f" in {tasks} task{'s' if tasks != 1 else ''}; Enter opens a decision's wizard", style="dim")
    if unlisted:
        # Whole folders were not seen: every decision below them is missing. Name the first, as okstra inbox does.
        n = len(unlisted)
        folder, reason = unlisted[0]
        head.append(f"  {n} folder{'s' if n != 1 else ''} could not be listed", style="bold red")
        why = reason.removeprefix("cannot list folder: ")
        head.append(visible(f" ({folder}: {why}{', …' if n > 1 else ''})"), style="red")  # one line, inert
    if unreadable:
        # The list may lack what those files hold: say so, and where the reasons are.
        head.append(f"  {unreadable} file{'s' if unreadable != 1 else ''} could not be read", style="bold yellow")
    if unlisted or unreadable:
        head.append("; x runs the checks", style="dim")
    return head


class InboxScreen(ViewScreen):
    """Decisions waiting for a person, grouped by task, newest first."""

    VIEW_NAME = View.INBOX
    HELP = (
        "Every decision waiting for you, newest first, grouped by task (the same list as `okstra inbox`): a "
        "direction to choose, planning to prepare, clarification questions to answer or attach, design items to "
        "confirm, and tasks awaiting approval. Enter opens the decision's wizard (on a task row: the task). An "
        "approval is given in the lead's session; the workbench writes no approval file. A decision made anywhere "
        "(a verb, a wizard, a sidecar dropped in place) leaves the list on the next refresh."
    )

    BINDINGS = [Binding("enter", "decide", "Decide", priority=True), Binding("t", "open_task", "Open task")]

    def __init__(self) -> None:
        super().__init__()
        self.decisions: list[PendingDecision] = []
        #: The ``project:`` prefix every task key shares (said once, in the decision column's title).
        self.key_prefix = ""
        #: How many files the last reading could not read (said in the summary line).
        self.unreadable = 0
        #: The folders the last reading could not list, each with why (said in the summary line).
        self.unlisted: tuple[tuple[str, str], ...] = ()

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield Static(Text("Reading what waits…", style="dim"), id="inbox-summary")
        table: DataTable[Text | str] = ListTable(id="inbox-table", cursor_type="row", classes="pane")
        table.border_title = "Waiting for you"
        yield table
        detail = VerticalScroll(Static("", id="inbox-detail"), id="inbox-detail-box", classes="pane")
        detail.border_title = "What to do"
        yield detail
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.query_one("#inbox-table", DataTable).focus()

    def fit_width(self, width: int) -> None:
        """Give the summary what the terminal leaves; below :data:`NARROW_COLUMNS` the time goes first.

        The widths are fixed per terminal width, so the columns never jump as rows
        come and go on a live refresh (and never wait for the table to measure its
        rows); the time is in the "What to do" panel too.
        """
        super().fit_width(width)
        tables = self.query("#inbox-table")
        if not tables:
            return
        table: DataTable[Text | str] = tables.first(DataTable)
        shown = [label for label in COLUMNS if label != "since" or width >= NARROW_COLUMNS]
        fixed = sum(COLUMN_WIDTHS[label] + 2 for label in shown if label in COLUMN_WIDTHS)
        widths = {**COLUMN_WIDTHS, "summary": max(width - fixed - 6, 20)}
        if [str(key.value) for key in table.columns] != shown:
            previous = self._current_key()  # the rows go with the columns: keep the cursor's decision
            table.clear(columns=True)
            for label in shown:
                table.add_column(self._column_label(label), width=widths[label], key=label)
            if self.decisions:
                self._show(self.decisions, self.unreadable, previous, self.unlisted)
            return
        for key, column in table.columns.items():
            column.width = widths[str(key.value)]
        table.refresh(layout=True)

    def _column_label(self, label: str) -> Text:
        """A column's title; the decision column's says the shared project prefix (store text, never markup)."""
        if label != "decision" or not self.key_prefix:
            return Text(label)
        return Text.assemble(f"{label} (", visible(self.key_prefix), "…)")

    def read(self) -> Inbox:
        return current_inbox(self.okstra.project.root)

    def show(self, inbox: Inbox) -> None:
        unlisted = tuple((folder, inbox.unlisted_reasons.get(folder, "")) for folder in inbox.unlisted)
        self._show(inbox.items, len(inbox.unreadable), None, unlisted)

    def _show(
        self,
        decisions: list[PendingDecision],
        unreadable: int = 0,
        previous: str | None = None,
        unlisted: tuple[tuple[str, str], ...] = (),
    ) -> None:
        """Fill the table; the cursor stays on the row it was on (*previous*: that row's key, when it is gone)."""
        table: DataTable[Text | str] = self.query_one("#inbox-table", DataTable)
        if previous is None:
            previous = self._current_key()
        self.decisions = decisions
        self.unreadable = unreadable
        self.unlisted = unlisted
        table.clear()
        count = len(decisions)
        self.query_one("#inbox-summary", Static).update(_summary(decisions, unreadable, unlisted))
        prefix = shared_key_prefix(d.task for d in decisions)
        if prefix != self.key_prefix:
            self.key_prefix = prefix
            table.columns[ColumnKey("decision")].label = self._column_label("decision")
        order: dict[str, list[int]] = {}
        for i, d in enumerate(decisions):  # newest first; a task's group sits where its newest decision does
            order.setdefault(d.task, []).append(i)
        for task_key, indexes in order.items():
            n = len(indexes)
            cells = {
                "decision": shown_block(task_key.removeprefix(prefix), "bold underline"),
                "summary": Text(f"{n} decision{'s' if n != 1 else ''}", style="dim"),
            }
            table.add_row(*(cells.get(str(c.value), "") for c in table.columns), key=f"task:{task_key}")
            for i in indexes:
                d = decisions[i]
                cells = {
                    "decision": Text("  " + DECISIONS[d.kind].label, style=DECISIONS[d.kind].style),
                    "item": shown_block(d.item or ""),
                    "since": Text(d.since.replace("T", " ").removesuffix("Z"), style="dim"),
                    "summary": _cut(shown_block(d.summary)),
                }
                table.add_row(*(cells[str(c.value)] for c in table.columns), key=f"item:{i}")
        for row in range(table.row_count):
            key = str(table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value)
            if key.startswith("item:"):
                key = _identity(decisions[int(key.removeprefix("item:"))])
            if key == previous or (previous is None and key.startswith("same:")):
                table.move_cursor(row=row)
                break
        else:
            self._detail(None)
        if not count:
            self.query_one("#inbox-detail", Static).update(
                Text(
                    "A direction to choose, questions to answer, design items to confirm and approvals show here "
                    "as soon as a report or plan asks for them.",
                    style="dim",
                )
            )

    def _current_key(self) -> str | None:
        table: DataTable[Text | str] = self.query_one("#inbox-table", DataTable)
        if not table.row_count:
            return None
        key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        if key.startswith("item:") and self.decisions:
            # Re-find the same decision by what it is, not by its position in the old list.
            return _identity(self.decisions[int(key.removeprefix("item:"))])
        return key

    def selected(self) -> PendingDecision | None:
        table: DataTable[Text | str] = self.query_one("#inbox-table", DataTable)
        if not table.row_count:
            return None
        key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        if key.startswith("item:"):
            return self.decisions[int(key.removeprefix("item:"))]
        return None

    def selected_task_root(self) -> Path | None:
        decision = self.selected()
        table: DataTable[Text | str] = self.query_one("#inbox-table", DataTable)
        if decision is None and table.row_count:
            key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
            task_key = key.removeprefix("task:")
            decision = next((d for d in self.decisions if d.task == task_key), None)
        return decision.task_root if decision is not None else None

    @on(DataTable.RowHighlighted, "#inbox-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(self.selected())

    def _detail(self, decision: PendingDecision | None) -> None:
        box = self.query_one("#inbox-detail", Static)
        if decision is None:
            root = self.selected_task_root()
            box.update(
                Text(f"Enter opens the task {root.parent.name}/{root.name}.", style="dim") if root is not None else ""
            )
            return
        box.update(what_to_do(decision))

    @on(DataTable.RowSelected, "#inbox-table")
    def _row_selected(self) -> None:
        self.action_decide()

    def action_decide(self) -> None:
        decision = self.selected()
        if decision is None:
            self.action_open_task()
            return
        wizard = wizard_for_decision(self.okstra.project.root, decision)
        if isinstance(wizard, str):
            if decision.kind == "approval":
                self.notify(visible(wizard), severity="information", timeout=6, markup=False)
            else:
                self.notify(visible(wizard), severity="warning", timeout=6, markup=False)
            return
        self.open_form(wizard)

    def action_open_task(self) -> None:
        root = self.selected_task_root()
        if root is not None:
            self.open_view(Location(View.TASK, root))

    def current_path(self) -> Path | None:
        decision = self.selected()
        return self.okstra.project.root / decision.path if decision is not None else None


def _cut(text: Text) -> Text:
    """One line, ending in "…" where the column cuts it (the whole text is in the "What to do" panel)."""
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


def _identity(decision: PendingDecision) -> str:
    return f"same:{decision.kind}|{decision.task}|{decision.item}|{decision.path}"
