"""Steps the decision wizards share: a clarification question, a follow-up write's outcome, fresh reads of the task."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Button, Checkbox, RadioButton, RadioSet, Static, TextArea

from okstra_core import layout
from okstra_core.store import Project, Task, TaskRef
from okstra_core.workflows.user_response import normalise_answer

from ..widgets.choice import Choice, Tick, index_chosen
from ..widgets.shown import shown_block
from .wizard import WizardStep, Written, check_lines

if TYPE_CHECKING:
    from okstra_core.check.findings import CheckReport


def fresh_task(task: Task) -> Task:
    """A new read-side handle on the same task (the old one caches what it listed)."""
    root = task.root
    return TaskRef(Project(task.project.root), root.parent.name, root.name, root).open()


def answer_of(item: Any, state: dict[str, Any] | None) -> str:
    """The answer text a question step's state stands for ("" = left unanswered on purpose)."""
    if not state:
        return ""
    if item.options:
        choice = state.get("choice")
        if choice is None or choice > len(item.options):
            return ""
        if choice < len(item.options):
            return str(item.options[choice])
        return str(state.get("text", ""))
    return "" if state.get("none") else str(state.get("text", ""))


def state_for(item: Any, answer: str) -> dict[str, Any]:
    """The question step's state that stands for *answer* (the inverse of :func:`answer_of`)."""
    if item.options:
        if not answer:
            return {"choice": len(item.options) + 1, "text": ""}
        for i, option in enumerate(item.options):
            if normalise_answer(str(option)) == answer:
                return {"choice": i, "text": ""}
        return {"choice": len(item.options), "text": answer}
    return {"text": answer, "none": not answer}


def answers_of(items: list[Any], values: dict[str, Any]) -> dict[str, str]:
    """Every clarification item's answer, in report order."""
    return {item.item_id: answer_of(item, values.get(item.item_id)) for item in items}


class QuestionStep(WizardStep):
    """One clarification question with its context: its options as a choice (plus other, plus unanswered)."""

    DEFAULT_CSS = """
    QuestionStep #q-question { margin-top: 1; text-style: bold; }
    QuestionStep #q-context-box { height: auto; max-height: 40%; margin-top: 1; }
    QuestionStep #q-context { color: $text-muted; }
    QuestionStep RadioSet { margin-top: 1; width: 1fr; }
    """

    def __init__(
        self, item: Any, number: int, total: int, state: dict[str, Any] | None, prefilled_from: str | None = None
    ) -> None:
        super().__init__(f"{item.item_id} · question {number} of {total}")
        self.item = item
        self.state = dict(state or {})
        #: The sidecar the answer was first filled in from (project-relative), if any.
        self.prefilled_from = prefilled_from

    @property
    def other_index(self) -> int:
        return len(self.item.options)

    def compose(self) -> ComposeResult:
        item = self.item
        yield Static(shown_block(item.question or "(the report records no question text)"), id="q-question")
        context = Text("from: ", style="bold")
        context.append_text(shown_block(item.context or "(the report records no context for this question)"))
        # A long context scrolls in its own box: the choice and the answer below it stay on screen.
        with VerticalScroll(id="q-context-box"):
            yield Static(context, id="q-context")
        if self.prefilled_from is not None:
            note = Text("answer filled in from ", style="dim")
            note.append_text(shown_block(self.prefilled_from))
            yield Static(note, id="q-prefilled", classes="wiz-dim")
        choice = self.state.get("choice")
        if item.options:
            with RadioSet(id="q-choice"):
                for i, option in enumerate(item.options):
                    yield Choice(shown_block(option), value=choice == i)
                yield Choice("Other (type it below)", value=choice == self.other_index)
                yield Choice("Leave unanswered", value=choice == self.other_index + 1)
            yield Static("other answer", classes="wiz-label")
            yield TextArea(self.state.get("text", ""), id="q-text")
        else:
            yield Static("answer", classes="wiz-label")
            yield TextArea(self.state.get("text", ""), id="q-text")
            yield Tick("Leave unanswered (written as “_(no answer)_”)", self.state.get("none", False), id="q-none")

    def focus_first(self) -> None:
        self.query_one("#q-choice" if self.item.options else "#q-text").focus()

    def _read(self) -> dict[str, Any]:
        text = self.query_one("#q-text", TextArea).text
        if self.item.options:
            return {"choice": index_chosen(self.query_one("#q-choice", RadioSet)), "text": text}
        return {"text": text, "none": self.query_one("#q-none", Checkbox).value}

    def validate(self) -> str | None:
        state = self._read()
        typed = state["text"].strip()
        if self.item.options:
            choice = state["choice"]
            if choice is None or choice < 0:
                return "Choose an option, “Other” with a text, or “Leave unanswered”."
            if choice == self.other_index and not typed:
                return "Type the other answer, or choose another option."
            return None
        if state["none"] and typed:
            return "Clear the answer or untick “Leave unanswered”: it cannot be both."
        if not state["none"] and not typed:
            return "Type an answer, or tick “Leave unanswered” to leave it empty on purpose."
        return None

    def store(self, values: dict[str, Any]) -> None:
        state = self._read()
        if state.get("choice") == -1:
            state["choice"] = None
        values[self.item.item_id] = state

    @on(TextArea.Changed, "#q-text")
    def _typed(self, event: TextArea.Changed) -> None:
        """Typing an other answer chooses "Other"; typing an answer unticks "Leave unanswered"."""
        if not event.text_area.text.strip():
            return
        if self.item.options:
            buttons = list(self.query_one("#q-choice", RadioSet).query(RadioButton))
            if not buttons[self.other_index].value:
                buttons[self.other_index].value = True
        else:
            box = self.query_one("#q-none", Checkbox)
            if box.value:
                box.value = False


def report_facts(rows: list[tuple[str, str]]) -> Text:
    """Label/value lines for a review (values from the store shown as text)."""
    text = Text()
    width = max((len(label) for label, _ in rows), default=0)
    for i, (label, value) in enumerate(rows):
        if i:
            text.append("\n")
        text.append(f"{label:<{width}}  ", style="bold")
        text.append_text(shown_block(value))
    return text


def rel(path: Path, root: Path) -> str:
    try:
        return layout.rel(path, root)
    except ValueError:
        return str(path)


def show_follow_up(
    step: WizardStep, result: Written | str, check: CheckReport | str, action: str, head: str, sep: str
) -> None:
    """Show a follow-up write's outcome under its button (``#<action>``, ``#<action>-result``) and move on."""
    out = step.query_one(f"#{action}-result", Static)
    if isinstance(result, str):
        out.update(shown_block(result, "red"))
        return
    step.query_one(f"#{action}", Button).disabled = True
    text = Text(head, style="bold green")
    text.append(rel(result.path, step.wizard.root), style="bold")
    for line in result.lines:
        text.append(sep)
        text.append_text(line)
    text.append("\n\n")
    text.append_text(check_lines(check))
    out.update(text)
    step.wizard.query_one("#wiz-next", Button).focus()
