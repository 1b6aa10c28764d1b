"""What the decision forms share: a framed modal, a one-line refusal, Cancel and a primary button.

A form writes through one core workflow; it is dismissed with the path that
workflow wrote, or None when cancelled. A refusal from the core stays in the
form as one line naming the file, and nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from okstra_core.errors import OkstraError
from okstra_core.store import Task


class FormScreen(ModalScreen[Path | None]):
    """Subclasses give ``heading()``, ``body()`` and ``submit()``; ``SUBMIT_LABEL`` names the primary button."""

    SUBMIT_LABEL: ClassVar[str] = "Write"

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "submit", "Write")]

    DEFAULT_CSS = """
    FormScreen { align: center middle; }
    FormScreen > Vertical { width: 90%; height: 90%; border: thick $accent; background: $surface; padding: 0 1; }
    FormScreen #form-body { height: 1fr; }
    FormScreen .form-question { margin-top: 1; text-style: bold; }
    FormScreen TextArea { height: 5; }
    FormScreen #form-error { color: $error; height: auto; }
    FormScreen #form-buttons { height: 3; align-horizontal: right; }
    FormScreen Button { margin-left: 2; }
    """

    def __init__(self, task: Task) -> None:
        super().__init__()
        self.bundle = task

    def heading(self) -> Text:
        raise NotImplementedError

    def body(self) -> ComposeResult:
        raise NotImplementedError

    def can_submit(self) -> bool:
        """False when there is nothing to write (the primary button is then disabled)."""
        return True

    def submit(self) -> Path:
        """Write through the core; an ``OkstraError`` is shown as the refusal."""
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.heading(), id="form-title")
            with VerticalScroll(id="form-body"):
                yield from self.body()
            yield Static("", id="form-error")
            with Horizontal(id="form-buttons"):
                yield Button("Cancel", id="form-cancel")
                yield Button(self.SUBMIT_LABEL, id="form-submit", variant="primary", disabled=not self.can_submit())

    def refuse(self, reason: str) -> None:
        self.query_one("#form-error", Static).update(Text(reason))

    @on(Button.Pressed, "#form-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#form-submit")
    def action_submit(self) -> None:
        if not self.can_submit():
            return
        try:
            path = self.submit()
        except OkstraError as exc:
            self.refuse(exc.line(self.bundle.project.root))
            return
        self.dismiss(path)
