"""Answer a report: choose a direction and answer its clarification questions, then write the user response.

The form is built from the report data (its option candidates and clarification
items); writing goes through ``okstra_core.workflows.user_response_export.export``, the
same owner as ``okstra user-response export`` and the HTML page's Export
button, so the sidecar's bytes are the same whichever way it was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Label, RadioButton, RadioSet, Static, TextArea

from okstra_core.errors import OkstraError
from okstra_core.store import Task
from okstra_core.text import visible

from ..widgets.shown import shown
from .form import FormScreen

if TYPE_CHECKING:
    from okstra_core.workflows.reports import LoadedReport


def load_form(task: Task, report_path: Path) -> LoadedReport | str:
    """The report the form is built from, or why there is none (a one-line reason)."""
    from okstra_core.workflows.reports import report_by_path

    try:
        return report_by_path(task, report_path)
    except OkstraError as exc:
        return exc.line(task.project.root)


class RespondScreen(FormScreen):
    """A form for one report; dismissed with the written sidecar's path, or None when cancelled."""

    SUBMIT_LABEL = "Write user response"

    def __init__(self, task: Task, report: LoadedReport) -> None:
        super().__init__(task)
        self.report = report

    @property
    def comparison(self) -> bool:
        from okstra_core.workflows.user_response import sidecar_mode

        return bool(sidecar_mode(self.report.model) == "comparison")

    def heading(self) -> Text:
        mode = "choose a direction and answer" if self.comparison else "answer the clarification questions"
        return Text.assemble(("Respond to ", "bold"), (visible(self.report.stem), "bold"), f" — {mode}")

    def body(self) -> ComposeResult:
        model = self.report.model
        oc = model.option_candidates
        if self.comparison and oc is not None:  # comparison mode implies candidates
            yield Label("Direction", classes="form-question")
            with RadioSet(id="respond-options"):
                for cand in oc.candidates:
                    marker = "  (recommended)" if cand.option_id == oc.recommendation else ""
                    yield RadioButton(
                        shown(f"{cand.option_id}  {cand.title}{marker}"),
                        name=cand.option_id,
                        value=cand.option_id == oc.recommendation,
                    )
        if not model.clarification_items:
            yield Static(Text("This report asks no clarification questions.", style="dim"))
        for item in model.clarification_items:
            yield Label(shown(f"{item.item_id}  {item.question}"), classes="form-question")
            if item.options:
                yield Static(shown("options: " + " · ".join(item.options), style="dim"))
            yield TextArea(id=f"answer-{item.item_id}")

    def can_submit(self) -> bool:
        return self.comparison or bool(self.report.model.clarification_items)

    def answers(self) -> dict[str, str]:
        return {
            item.item_id: self.query_one(f"#answer-{item.item_id}", TextArea).text
            for item in self.report.model.clarification_items
        }

    def selected_option(self) -> str | None:
        if not self.comparison:
            return None
        pressed = self.query_one("#respond-options", RadioSet).pressed_button
        return pressed.name if pressed is not None else None

    def submit(self) -> Path:
        from okstra_core.workflows.user_response_export import export

        option = self.selected_option()
        if self.comparison and option is None:
            raise OkstraError(None, "Choose a direction first.")
        path, _superseded = export(self.bundle.project.root, self.bundle, self.report.path, self.answers(), option)
        return path
