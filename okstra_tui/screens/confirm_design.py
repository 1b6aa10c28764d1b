"""Confirm a design-prep item: answer its fields and append a new input revision.

The form is built from the item in the approved planning snapshot (its
question and the fields it asks for); the answers go through
``okstra_core.workflows.design_prep.confirm``, the owner behind ``okstra
design-prep confirm``: it checks the answer against the item and appends the
next revision under the item's lock. A refusal shows as one line in the form
and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static, TextArea

from okstra_core.errors import OkstraError
from okstra_core.store import Task


def load_item(task: Task, prep_id: str) -> Any:
    """``(report, item)`` of the approved snapshot, or why there is none (a one-line reason)."""
    from okstra_core.workflows.design_prep import design_item

    try:
        return design_item(task, prep_id)
    except OkstraError as exc:
        return str(exc)


def one_line(project_root: Path, exc: OkstraError) -> str:
    """A refusal as one line, naming the file relative to the project."""
    if exc.path is None:
        return exc.reason
    where = exc.path.relative_to(project_root).as_posix() if exc.path.is_relative_to(project_root) else str(exc.path)
    return f"{where}: {exc.reason}"


class ConfirmDesignScreen(ModalScreen[Path | None]):
    """A form for one design item; dismissed with the new input revision's path, or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "confirm", "Confirm")]

    DEFAULT_CSS = """
    ConfirmDesignScreen { align: center middle; }
    ConfirmDesignScreen > Vertical {
        width: 90%; height: 90%; border: thick $accent; background: $surface; padding: 0 1;
    }
    ConfirmDesignScreen #design-body { height: 1fr; }
    ConfirmDesignScreen .design-field { margin-top: 1; text-style: bold; }
    ConfirmDesignScreen TextArea { height: 5; }
    ConfirmDesignScreen #design-error { color: $error; height: auto; }
    ConfirmDesignScreen #design-buttons { height: 3; align-horizontal: right; }
    ConfirmDesignScreen Button { margin-left: 2; }
    """

    def __init__(self, task: Task, found: tuple[Any, Any]) -> None:
        super().__init__()
        self.bundle = task
        self.report, self.item = found

    @property
    def fields(self) -> list[str]:
        return list(self.item.fields) or ["answer"]

    def compose(self) -> ComposeResult:
        item = self.item
        with Vertical():
            yield Static(Text.assemble(("Confirm ", "bold"), (f"{item.prep_id} {item.title}", "bold"),
                                       f"  ({item.status})"), id="design-title")
            with VerticalScroll(id="design-body"):
                yield Static(Text(item.question or "(no question recorded)", style="italic"))
                for name in self.fields:
                    yield Label(name, classes="design-field")
                    yield TextArea(id=f"field-{name}")
                yield Label("confirmed by", classes="design-field")
                yield Input(value="user", id="design-by")
            yield Static("", id="design-error")
            with Horizontal(id="design-buttons"):
                yield Button("Cancel", id="design-cancel")
                yield Button("Confirm (new revision)", id="design-confirm", variant="primary")

    def answers(self) -> dict[str, str]:
        return {name: self.query_one(f"#field-{name}", TextArea).text for name in self.fields}

    @on(Button.Pressed, "#design-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#design-confirm")
    def action_confirm(self) -> None:
        from okstra_core.workflows.design_prep import answers_text, confirm

        root = self.bundle.project.root
        by = self.query_one("#design-by", Input).value.strip() or "user"
        try:
            path = confirm(root, self.bundle, self.item.prep_id, answers_text(self.answers()), confirmed_by=by)
        except OkstraError as exc:
            self.query_one("#design-error", Static).update(Text(one_line(root, exc)))
            return
        self.dismiss(path)
