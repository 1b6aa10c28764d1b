"""Answer a report: choose a direction and answer its clarification questions, then write the user response.

The form is built from the report data (its option candidates and clarification
items); writing goes through ``okstra_core.workflows.user_response.export``, the
same owner as ``okstra user-response export`` and the HTML page's Export
button, so the sidecar's bytes are the same whichever way it was written. A
refusal (a choice planning already consumed, a report that no longer loads)
shows in the form as one line; nothing is written.
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
from textual.widgets import Button, Label, RadioButton, RadioSet, Static, TextArea

from okstra_core.errors import OkstraError
from okstra_core.store import Task

from .confirm_design import one_line


def load_form(task: Task, report_path: Path) -> Any:
    """The report the form is built from, or why there is none (a one-line reason)."""
    from okstra_core.workflows.reports import report_by_path

    try:
        return report_by_path(task, report_path)
    except OkstraError as exc:
        return str(exc)


class RespondScreen(ModalScreen[Path | None]):
    """A form for one report; dismissed with the written sidecar's path, or None when cancelled."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "write", "Write the response"),
    ]

    DEFAULT_CSS = """
    RespondScreen { align: center middle; }
    RespondScreen > Vertical {
        width: 90%; height: 90%; border: thick $accent; background: $surface; padding: 0 1;
    }
    RespondScreen #respond-body { height: 1fr; }
    RespondScreen .respond-question { margin-top: 1; text-style: bold; }
    RespondScreen TextArea { height: 5; }
    RespondScreen #respond-error { color: $error; height: auto; }
    RespondScreen #respond-buttons { height: 3; align-horizontal: right; }
    RespondScreen Button { margin-left: 2; }
    """

    def __init__(self, task: Task, report: Any) -> None:
        super().__init__()
        self.bundle = task
        self.report = report

    @property
    def comparison(self) -> bool:
        from okstra_core.workflows.user_response import sidecar_mode

        return bool(sidecar_mode(self.report.model) == "comparison")

    def compose(self) -> ComposeResult:
        model = self.report.model
        with Vertical():
            mode = "choose a direction and answer" if self.comparison else "answer the clarification questions"
            yield Static(Text.assemble(("Respond to ", "bold"), (self.report.stem, "bold"), f" — {mode}"),
                         id="respond-title")
            with VerticalScroll(id="respond-body"):
                if self.comparison:
                    oc = model.option_candidates
                    yield Label("Direction", classes="respond-question")
                    with RadioSet(id="respond-options"):
                        for cand in oc.candidates:
                            marker = "  (recommended)" if cand.option_id == oc.recommendation else ""
                            yield RadioButton(f"{cand.option_id}  {cand.title}{marker}", name=cand.option_id,
                                              value=cand.option_id == oc.recommendation)
                if not model.clarification_items:
                    yield Static(Text("This report asks no clarification questions.", style="dim"))
                for item in model.clarification_items:
                    yield Label(f"{item.item_id}  {item.question}", classes="respond-question")
                    if item.options:
                        yield Static(Text("options: " + " · ".join(item.options), style="dim"))
                    yield TextArea(id=f"answer-{item.item_id}")
            yield Static("", id="respond-error")
            with Horizontal(id="respond-buttons"):
                yield Button("Cancel", id="respond-cancel")
                nothing = not self.comparison and not model.clarification_items
                yield Button("Write user response", id="respond-write", variant="primary", disabled=nothing)

    def answers(self) -> dict[str, str]:
        return {item.item_id: self.query_one(f"#answer-{item.item_id}", TextArea).text
                for item in self.report.model.clarification_items}

    def selected_option(self) -> str | None:
        if not self.comparison:
            return None
        pressed = self.query_one("#respond-options", RadioSet).pressed_button
        return pressed.name if pressed is not None else None

    @on(Button.Pressed, "#respond-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#respond-write")
    def action_write(self) -> None:
        from okstra_core.workflows.user_response import export

        error = self.query_one("#respond-error", Static)
        if self.comparison and self.selected_option() is None:
            error.update("Choose a direction first.")
            return
        try:
            path, _superseded = export(self.bundle.project.root, self.bundle, self.report.path, self.answers(),
                                       self.selected_option())
        except OkstraError as exc:
            error.update(Text(one_line(self.bundle.project.root, exc)))
            return
        self.dismiss(path)
