"""Choosing a direction: the candidates side by side, the report's questions, the sidecar, then planning prepare.

The write goes through ``direction.select_direction``, the owner behind
``okstra direction select``; the sidecar shown for review is
``user_response.render_sidecar`` of the same choice and answers, so the bytes
reviewed are the bytes written. :func:`wizard_for_report` picks the wizard
that answers a report: this one for an option-selection report, the
clarification wizard (``wizard_report``) for any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import RadioButton, RadioSet, Static

from okstra_core import layout, reading
from okstra_core.commands.direction import select_verb
from okstra_core.errors import WriteRefused
from okstra_core.models.report import OptionCandidate
from okstra_core.models.sidecars import UserResponseHeader
from okstra_core.store import Task
from okstra_core.workflows.direction import select_direction
from okstra_core.workflows.reports import LoadedReport
from okstra_core.workflows.user_response import sidecar_mode

from ..widgets.choice import CHOSEN, Choice, option_chosen
from ..widgets.shown import shown_block
from .wizard import ReviewStep, StepSpec, WizardScreen, WizardStep, Written, project_path, spec, task_option
from .wizard_prepare import PrepareOffer
from .wizard_report import ClarificationWizard
from .wizard_steps import answers_of, rel

#: How an option the report gives no title is named (report data may leave it out).
NO_TITLE = "(no title)"


def wizard_for_report(task: Task, report_path: Path) -> WizardScreen | str:
    """The wizard that answers this report, or a one-line reason there is none.

    Nothing is read here but the task's listing: the wizard reads the report
    itself, in a worker, once it is on screen (a report may be large). An
    option-selection report opens the direction wizard, which asks the
    report's questions only when the report offers no comparison.
    """
    real = report_path.resolve()
    for rd in task.run_dirs:
        for art in rd.of_kind("final-report-data"):
            if art.path.resolve() == real:
                if art.name.task_type == "option-selection":
                    return DirectionWizard(task, report_path)
                return ClarificationWizard(task, report_path)
    return f"{rel(report_path, task.project.root)}: is not a final-report data file of this task"


class CandidateCard(VerticalScroll):
    """One ``IO-nnn`` candidate as the report holds it; a click chooses it."""

    DEFAULT_CSS = """
    CandidateCard {
        width: 1fr; height: 1fr; border: round $primary-darken-2; padding: 0 1; scrollbar-size-vertical: 1;
    }
    CandidateCard.-recommended { border: round $success; }
    CandidateCard.-chosen { border: heavy $accent; }
    """

    def __init__(self, candidate: OptionCandidate, recommended: bool) -> None:
        super().__init__(classes="-recommended" if recommended else "")
        self.candidate = candidate
        self.title_text = candidate.option_id + ("  ★ recommended" if recommended else "")
        self.border_title = self.title_text

    def mark(self, chosen: bool) -> None:
        """Show whether this candidate is the one chosen: a heavier border, and "(•) chosen" in its title."""
        self.set_class(chosen, "-chosen")
        self.border_title = f"{CHOSEN} {self.title_text}  chosen" if chosen else self.title_text

    def compose(self) -> ComposeResult:
        c = self.candidate
        text = shown_block(c.title or NO_TITLE, "bold")
        text.append("\n\n")
        text.append_text(shown_block(c.summary or "(no summary recorded)"))
        text.append("\n\ntrade-offs", style="bold")
        for sign, values, style in (("+", c.pros, "green"), ("−", c.cons, "red")):
            for value in values:
                text.append(f"\n {sign} ", style=f"bold {style}")
                text.append_text(shown_block(value))
        if not c.pros and not c.cons:
            text.append("\n (none recorded)", style="dim")
        text.append("\n\nrisk ", style="bold")
        risk_style = {"low": "green", "medium": "yellow", "high": "red"}.get(c.risk or "", "dim")
        text.append(c.risk or "not recorded", style=risk_style)
        text.append(" · effort ", style="bold")
        text.append("not recorded", style="dim")
        yield Static(text)

    def on_click(self, event: events.Click) -> None:
        step = self.parent.parent if self.parent is not None else None
        if isinstance(step, ChooseStep):
            step.choose(self.candidate.option_id)


class ChooseStep(WizardStep):
    """The candidates side by side, the recommendation marked; choose one."""

    DEFAULT_CSS = """
    ChooseStep #cards { height: 1fr; }
    ChooseStep RadioSet { width: 1fr; }
    """

    def __init__(self, report: LoadedReport, chosen: str | None) -> None:
        super().__init__("Choose a direction")
        oc = report.model.option_candidates
        assert oc is not None  # the step is built for a comparison, which has candidates
        self.oc = oc
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        oc = self.oc
        with Horizontal(id="cards"):
            for c in oc.candidates:
                yield CandidateCard(c, c.option_id == oc.recommendation)
        with RadioSet(id="direction"):
            for c in oc.candidates:
                label = shown_block(f"{c.option_id}  {c.title or NO_TITLE}")
                if c.option_id == oc.recommendation:
                    label.append("  ★ recommended", style="green")
                yield Choice(label, value=c.option_id == self.chosen, name=c.option_id)

    def on_mount(self) -> None:
        self._mark()

    def choose(self, option_id: str) -> None:
        for button in self.query(RadioButton):
            if button.name == option_id:
                button.value = True
        self.query_one("#direction", RadioSet).focus()

    def current(self) -> str | None:
        pressed = option_chosen(self.query_one("#direction", RadioSet))
        return pressed.name if pressed is not None else None

    @on(RadioSet.Changed, "#direction")
    def _mark(self) -> None:
        chosen = self.current()
        for card in self.query(CandidateCard):
            card.mark(card.candidate.option_id == chosen)

    def validate(self) -> str | None:
        return None if self.current() else "Choose a direction (click a candidate, or ↑/↓ and space) first."

    def store(self, values: dict[str, Any]) -> None:
        values["option"] = self.current()

    def focus_first(self) -> None:
        self.query_one("#direction", RadioSet).focus()


class DirectionWizard(ClarificationWizard):
    """Candidates side by side, choose, the report's questions, review the sidecar, write, then prepare.

    An option-selection report that offers no comparison (preselected
    validation) is answered as a clarification: its questions, the review, the write.
    """

    KIND = "Choose a direction"

    def __init__(self, task: Task, report_path: Path) -> None:
        super().__init__(task, report_path)
        #: The report offers candidates to choose from (known once it is read).
        self.comparison = True

    def heading(self) -> str:
        return self.KIND if self.comparison else ClarificationWizard.KIND

    def load(self) -> None:
        first = self.loaded_report is None
        super().load()
        self.comparison = sidecar_mode(self.report.model) == "comparison"
        if first and self.comparison:
            self.values["option"] = self._recorded_choice()
        reading.lexists(layout.selected_direction_path(self.bundle.root))  # a direction written meanwhile: stale

    def _recorded_choice(self) -> str | None:
        """The option the sidecar on disk records, if any (the wizard starts from it)."""
        if not reading.lexists(self.sidecar):
            return None
        loaded = reading.load_sidecar(self.sidecar, UserResponseHeader, root=self.root)
        if isinstance(loaded, reading.LoadError):
            return None
        return getattr(loaded.header, "selected_option", None)

    def selected(self, values: dict[str, Any]) -> str | None:
        option = values.get("option") if self.comparison else None
        return str(option) if option else None

    def build_steps(self) -> list[StepSpec]:
        if not self.comparison:
            return super().build_steps()
        return [
            spec(ChooseStep, lambda: ChooseStep(self.report, self.values.get("option"))),
            *self.question_steps(),
            spec(ReviewStep, lambda: ReviewStep("Review the choice", self.review)),
            spec(PrepareOffer, lambda: PrepareOffer("Written: prepare planning")),
        ]

    def write(self, values: dict[str, Any]) -> Written:
        if not self.comparison:
            return super().write(values)
        option = self.selected(values)
        if option is None:
            raise WriteRefused(self.report.path, "choose a direction first")
        answers = answers_of(list(self.report.model.clarification_items), values)
        path = select_direction(
            self.root,
            self.bundle,
            option,
            report_path=self.report.path,
            answers=answers or None,
            clock=self.write_clock,
        )
        report = project_path(self.report.path, self.bundle)
        verb = select_verb(task_option(self.bundle)[1], option, report, answers or None)
        return Written(path, [Text(f"selected {option}")], (verb,), f"selected {option}")
