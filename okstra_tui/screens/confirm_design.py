"""Confirm a design-prep item: answer its fields and append a new input revision.

The form is built from the item in the approved planning snapshot (its
question and the fields it asks for); the answers go through
``okstra_core.workflows.design_prep.confirm``, the owner behind ``okstra
design-prep confirm``: it checks the answer against the item and appends the
next revision under the item's lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Input, Label, Static, TextArea

from okstra_core.errors import OkstraError
from okstra_core.store import Task
from okstra_core.text import visible

from ..widgets.shown import shown, shown_block
from .form import FormScreen

if TYPE_CHECKING:
    from okstra_core.models.report import DesignItem
    from okstra_core.workflows.reports import LoadedReport


def load_item(task: Task, prep_id: str) -> tuple[LoadedReport, DesignItem] | str:
    """``(report, item)`` of the approved snapshot, or why there is none (a one-line reason)."""
    from okstra_core.workflows.design_prep import design_item

    try:
        return design_item(task, prep_id)
    except OkstraError as exc:
        return exc.line(task.project.root)


class ConfirmDesignScreen(FormScreen):
    """A form for one design item; dismissed with the new input revision's path, or None."""

    SUBMIT_LABEL = "Confirm (new revision)"

    def __init__(self, task: Task, found: tuple[LoadedReport, DesignItem]) -> None:
        super().__init__(task)
        self.report, self.item = found

    @property
    def fields(self) -> list[str]:
        return list(self.item.fields) or ["answer"]

    def heading(self) -> Text:
        item = self.item
        return Text.assemble(
            ("Confirm ", "bold"), (visible(f"{item.prep_id} {item.title}"), "bold"), visible(f"  ({item.status})")
        )

    def body(self) -> ComposeResult:
        yield Static(shown_block(self.item.question or "(no question recorded)", style="italic"))
        # Field names come from the report data: widget ids go by position, and names are shown as text, not markup.
        for i, name in enumerate(self.fields):
            yield Label(shown(name), classes="form-question")
            yield TextArea(id=f"field-{i}")
        yield Label("confirmed by", classes="form-question")
        yield Input(value="user", id="design-by")

    def field_area(self, name: str) -> TextArea:
        return self.query_one(f"#field-{self.fields.index(name)}", TextArea)

    def answers(self) -> dict[str, str]:
        return {name: self.field_area(name).text for name in self.fields}

    def submit(self) -> Path:
        from okstra_core.workflows.design_prep import answers_text, confirm

        by = self.query_one("#design-by", Input).value.strip() or "user"
        return confirm(
            self.bundle.project.root, self.bundle, self.item.prep_id, answers_text(self.answers()), confirmed_by=by
        )
