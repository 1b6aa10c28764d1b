"""Answering a report: the clarification wizard, the direction-selection wizard, and planning prepare.

Every write goes through the core owner the matching ``okstra`` verb uses:
``user_response.export`` (``okstra user-response export``),
``direction.select_direction`` (``okstra direction select``),
``user_response.attach_clarification`` (``okstra clarification attach``) and
``direction.planning_prepare`` (``okstra planning prepare``). The sidecar shown
for review is ``user_response.render_sidecar`` of the same answers, so the
bytes reviewed are the bytes written.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, RadioButton, RadioSet, Static

from okstra_core import layout, reading
from okstra_core.errors import WriteRefused
from okstra_core.store import Task

from .wizard import DoneStep, ReviewStep, StepSpec, WizardScreen, WizardStep, Written, check_lines, spec, store_text
from .wizard_steps import QuestionStep, answers_of, fresh_task, rel, report_facts, state_for

if TYPE_CHECKING:
    from okstra_core.workflows.common import Clock


def load_report(task: Task, report_path: Path) -> Any:
    """The report (``LoadedReport``) at *report_path*; raises ``OkstraError`` when it cannot be read."""
    from okstra_core.workflows.reports import report_by_path

    return report_by_path(task, report_path)


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


def _sidecar_state(path: Path, data: bytes, root: Path) -> str:
    """What writing *data* to *path* will do to what is there now."""
    existing = reading.read_bytes(path, root=root) if path.exists() else None
    if existing is None:
        return "new file"
    if existing == data:
        return "identical to the file on disk: writing changes nothing"
    return "replaces the earlier export, which is kept as a superseded copy"


def _show_follow_up(step: Any, result: Written | str, check: Any, action: str, head: str, separator: str) -> None:
    """Show a follow-up write's outcome under its button (``#<action>``, ``#<action>-result``) and move on."""
    out = step.query_one(f"#{action}-result", Static)
    if isinstance(result, str):
        out.update(store_text(result, "red"))
        return
    step.query_one(f"#{action}", Button).disabled = True
    text = Text(head, style="bold green")
    text.append(rel(result.path, step.wizard.root), style="bold")
    for line in result.lines:
        text.append(separator)
        text.append_text(line)
    text.append("\n\n")
    text.append_text(check_lines(check))
    out.update(text)
    step.wizard.query_one("#wiz-next", Button).focus()


class _ReportWizard(WizardScreen):
    """A wizard over one report's user-response sidecar."""

    def __init__(self, task: Task, report_path: Path) -> None:
        super().__init__(task)
        self.report_path = report_path
        #: The report (``LoadedReport``), read by :meth:`load` in the opening worker.
        self.report: Any = None
        #: The sidecar the answers start from (the newest for this report), if there is one.
        self.prefilled_from: Path | None = None
        #: The question states read from that sidecar, by item id.
        self.recorded: dict[str, Any] = {}

    def newest_sidecar(self) -> Path | None:
        """The report's sidecar, or, when it is gone, its newest superseded copy."""
        current = self.sidecar
        if current.is_file():
            return current
        own = self.report.artifact.name
        copies = [
            (art.name.stamp or "", art.path)
            for art in self.report.artifact.run.of_kind("user-response-superseded")
            if (art.name.task_type, art.name.seq) == (own.task_type, own.seq)
        ]
        return max(copies)[1] if copies else None

    def _recorded_answers(self) -> dict[str, Any]:
        """Each question's state as the newest sidecar for this report answers it (nothing when there is none)."""
        from okstra_core.models.sidecars import UserResponseHeader
        from okstra_core.workflows.user_response import read_answers

        path = self.newest_sidecar()
        if path is None:
            return {}
        loaded = reading.load_sidecar(path, UserResponseHeader, root=self.root)
        if isinstance(loaded, reading.LoadError):
            return {}
        items = {item.item_id: item for item in self.report.model.clarification_items}
        answers = read_answers(loaded.body, items)
        if answers:
            self.prefilled_from = path
        return {item_id: state_for(items[item_id], answer) for item_id, answer in answers.items()}

    def opening_text(self) -> str:
        return f"reading {rel(self.report_path, self.root)}"

    def load(self) -> None:
        from okstra_core.workflows.user_response import sidecar_mode

        first = self.report is None
        try:
            size = f" ({self.report_path.stat().st_size / 1e6:.1f} MB)"
        except OSError:
            size = ""
        self.progress(f"reading and checking {rel(self.report_path, self.root)}{size}")
        self.bundle = fresh_task(self.bundle)
        report = load_report(self.bundle, self.report_path)
        if sidecar_mode(report.model) != "comparison" and not report.model.clarification_items:
            raise WriteRefused(report.path, "asks no clarification questions and offers no choice; nothing to answer")
        self.report = report
        if first:
            self.progress(f"reading the answers recorded for its {len(report.model.clarification_items)} questions")
            self.recorded = self._recorded_answers()
            self.values.update(self.recorded)

    @property
    def sidecar(self) -> Path:
        from okstra_core.workflows.direction import sidecar_path_for

        return Path(sidecar_path_for(self.report))

    def subject(self) -> str:
        return f"{self.report.stem} · {self.report.model.task_key}"

    def sources(self) -> list[Path]:
        return [self.report.path, self.sidecar]

    def selected(self, values: dict[str, Any]) -> str | None:
        return None

    def question_steps(self) -> list[StepSpec]:
        items = list(self.report.model.clarification_items)
        return [spec(QuestionStep, partial(self._question, item, i + 1, len(items))) for i, item in enumerate(items)]

    def _question(self, item: Any, number: int, total: int) -> QuestionStep:
        """The question step of *item*, built when it comes on screen, from the answer held now."""
        source = self.prefilled_from
        prefilled = rel(source, self.root) if source is not None and item.item_id in self.recorded else None
        return QuestionStep(item, number, total, self.values.get(item.item_id), prefilled)

    def sidecar_text(self, values: dict[str, Any]) -> str:
        from okstra_core.workflows.user_response import ExportInput, render_sidecar

        report = self.report
        inp = ExportInput(report.model, report.rel(), report.stem, report.sha256)
        answers = answers_of(list(report.model.clarification_items), values)
        return str(render_sidecar(inp, answers, self.selected(values)))

    def review(self) -> tuple[Text, str]:
        text = self.sidecar_text(self.values)
        rows = [
            ("file", rel(self.sidecar, self.root)),
            ("report", self.report.rel()),
            ("source-data-sha256", f"{self.report.sha256}  (of the report's exact bytes)"),
            ("on disk", _sidecar_state(self.sidecar, text.encode("utf-8"), self.root)),
        ]
        option = self.selected(self.values)
        if option is not None:
            rows.insert(1, ("selected option", option))
        return report_facts(rows), text


# ------------------------------------------------------------ clarification


class AttachDone(DoneStep):
    """After the sidecar: offer to attach the task's responses to ``clarification-response.md``."""

    def follow_ups(self) -> list[Widget]:
        return [
            Static(
                Text(
                    "The next run reads the answers from instruction-set/clarification-response.md. Attach every "
                    "user response of this task there now (okstra clarification attach), or close and attach later.",
                ),
                classes="wiz-dim",
            ),
            Button("Attach to clarification-response.md", id="attach"),
            Static("", id="attach-result"),
        ]

    @on(Button.Pressed, "#attach")
    def _run_attach(self) -> None:
        from okstra_core.workflows.user_response_export import attach_clarification

        wizard = self.wizard
        root = wizard.root
        task = wizard.bundle

        def attach() -> Written:
            target, attached = attach_clarification(root, fresh_task(task))
            lines = [Text(f"attached {name}") for name in attached] or [
                Text("up to date: every user response was already attached", style="dim")
            ]
            return Written(target, lines)

        wizard.run_follow_up(attach, self._attached)

    def _attached(self, result: Written | str, check: Any) -> None:
        _show_follow_up(self, result, check, "attach", "✔ ", "\n  ")


class ClarificationWizard(_ReportWizard):
    """One question per step, a review of the exact sidecar, the write, then the offer to attach."""

    KIND = "Answer the clarification questions"

    def build_steps(self) -> list[StepSpec]:
        return [
            *self.question_steps(),
            spec(ReviewStep, lambda: ReviewStep("Review the user response", self.review)),
            spec(AttachDone, lambda: AttachDone("Written: attach the answers for the next run")),
        ]

    def write(self, values: dict[str, Any]) -> Written:
        from okstra_core.workflows.user_response_export import export

        answers = answers_of(list(self.report.model.clarification_items), values)
        path, superseded = export(self.root, self.bundle, self.report.path, answers, clock=self.clock)
        lines = [Text(f"earlier export kept as {rel(superseded, self.root)}")] if superseded else []
        return Written(path, lines)


# --------------------------------------------------------------- direction


class CandidateCard(VerticalScroll):
    """One ``IO-nnn`` candidate as the report holds it; a click chooses it."""

    DEFAULT_CSS = """
    CandidateCard {
        width: 1fr; height: 1fr; border: round $primary-darken-2; padding: 0 1; scrollbar-size-vertical: 1;
    }
    CandidateCard.-recommended { border: round $success; }
    CandidateCard.-chosen { border: heavy $accent; }
    """

    def __init__(self, candidate: Any, recommended: bool) -> None:
        super().__init__(classes="-recommended" if recommended else "")
        self.candidate = candidate
        self.border_title = candidate.option_id + ("  ★ recommended" if recommended else "")

    def compose(self) -> ComposeResult:
        c = self.candidate
        text = store_text(c.title, "bold")
        text.append("\n\n")
        text.append_text(store_text(c.summary))
        text.append("\n\ntrade-offs", style="bold")
        for sign, values, style in (("+", c.pros, "green"), ("−", c.cons, "red")):
            for value in values:
                text.append(f"\n {sign} ", style=f"bold {style}")
                text.append_text(store_text(value))
        if not c.pros and not c.cons:
            text.append("\n (none recorded)", style="dim")
        text.append("\n\nrisk ", style="bold")
        text.append(c.risk, style={"low": "green", "medium": "yellow", "high": "red"}.get(c.risk, ""))
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

    def __init__(self, report: Any, chosen: str | None) -> None:
        super().__init__("Choose a direction")
        self.oc = report.model.option_candidates
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        oc = self.oc
        with Horizontal(id="cards"):
            for c in oc.candidates:
                yield CandidateCard(c, c.option_id == oc.recommendation)
        with RadioSet(id="direction"):
            for c in oc.candidates:
                label = store_text(f"{c.option_id}  {c.title}")
                if c.option_id == oc.recommendation:
                    label.append("  ★ recommended", style="green")
                yield RadioButton(label, value=c.option_id == self.chosen, name=c.option_id)

    def on_mount(self) -> None:
        self._mark()

    def choose(self, option_id: str) -> None:
        for button in self.query(RadioButton):
            if button.name == option_id:
                button.value = True
        self.query_one("#direction", RadioSet).focus()

    def current(self) -> str | None:
        pressed = self.query_one("#direction", RadioSet).pressed_button
        return pressed.name if pressed is not None else None

    @on(RadioSet.Changed, "#direction")
    def _mark(self) -> None:
        chosen = self.current()
        for card in self.query(CandidateCard):
            card.set_class(card.candidate.option_id == chosen, "-chosen")

    def validate(self) -> str | None:
        return None if self.current() else "Choose a direction (click a candidate, or ↑/↓ and space) first."

    def store(self, values: dict[str, Any]) -> None:
        values["option"] = self.current()

    def focus_first(self) -> None:
        self.query_one("#direction", RadioSet).focus()


def chain_text(task: Task) -> Text:
    """The direction-selection chain's checks, passed or failed, as lines."""
    from okstra_core.workflows.direction import check_chain

    text = Text()
    for i, c in enumerate(check_chain(task)):
        if i:
            text.append("\n")
        text.append("✔ " if c.ok else "✘ ", style="bold green" if c.ok else "bold red")
        text.append(c.step, style="bold")
        text.append("  ")
        text.append_text(store_text(c.detail, "" if c.ok else "red"))
    return text


def prepare_written(root: Path, task: Task, clock: Clock) -> Written:
    """Run planning prepare; the snapshot's bytes and the chain afterwards are the lines to show."""
    from okstra_core.workflows.direction import planning_prepare

    path = planning_prepare(root, fresh_task(task), clock)
    data = reading.read_text(path, root=root)
    body = data if isinstance(data, str) else f"(cannot read it back: {data.reason})"
    lines = [Text("digest check after prepare:", style="bold"), chain_text(fresh_task(task))]
    lines += [Text(f"\n{rel(path, root)}:", style="bold"), store_text(body.rstrip())]
    return Written(path, lines)


class PrepareOffer(DoneStep):
    """After the choice: the digest chain as it stands, and planning prepare."""

    def follow_ups(self) -> list[Widget]:
        return [
            Static(
                Text(
                    "Planning prepare verifies the sidecar's source-data-sha256 against the report's bytes and writes "
                    "instruction-set/selected-direction.json (okstra planning prepare). Until then the choice can "
                    "still change."
                ),
                classes="wiz-dim",
            ),
            Static("", id="chain"),
            Button("Run planning prepare", id="prepare"),
            Static("", id="prepare-result"),
        ]

    def shown(self) -> None:
        super().shown()
        if self.wizard.written is not None:
            chain = Text("digest check now:", style="bold")
            chain.append("\n")
            chain.append_text(chain_text(fresh_task(self.wizard.bundle)))
            self.query_one("#chain", Static).update(chain)

    @on(Button.Pressed, "#prepare")
    def _run_prepare(self) -> None:
        wizard = self.wizard
        root, task = wizard.root, wizard.bundle
        wizard.run_follow_up(lambda: prepare_written(root, task, wizard.clock), self._prepared)

    def _prepared(self, result: Written | str, check: Any) -> None:
        _show_follow_up(self, result, check, "prepare", "✔ wrote ", "\n")


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
        from okstra_core.workflows.user_response import sidecar_mode

        first = self.report is None
        super().load()
        self.comparison = sidecar_mode(self.report.model) == "comparison"
        if first and self.comparison:
            self.values["option"] = self._recorded_choice()

    def _recorded_choice(self) -> str | None:
        """The option the sidecar on disk records, if any (the wizard starts from it)."""
        from okstra_core.models.sidecars import UserResponseHeader

        if not self.sidecar.exists():
            return None
        loaded = reading.load_sidecar(self.sidecar, UserResponseHeader, root=self.root)
        if isinstance(loaded, reading.LoadError):
            return None
        return getattr(loaded.header, "selected_option", None)

    def sources(self) -> list[Path]:
        return [*super().sources(), layout.selected_direction_path(self.bundle.root)]

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
        from okstra_core.workflows.direction import select_direction

        if not self.comparison:
            return super().write(values)
        option = self.selected(values)
        if option is None:
            raise WriteRefused(self.report.path, "choose a direction first")
        answers = answers_of(list(self.report.model.clarification_items), values)
        path = select_direction(
            self.root, self.bundle, option, report_path=self.report.path, answers=answers or None, clock=self.clock
        )
        return Written(path, [Text(f"selected {option}")])


# ---------------------------------------------------------- planning prepare


class PrepareReview(ReviewStep):
    """What planning prepare checks and what it will write."""


class PrepareWizard(WizardScreen):
    """A choice made but not prepared: the digest check, then planning prepare."""

    KIND = "Prepare planning"

    def __init__(self, task: Task) -> None:
        super().__init__(task)
        #: The latest option-selection report, read by :meth:`load` in the opening worker.
        self.report: Any = None

    def opening_text(self) -> str:
        return f"reading the option-selection report of {self.bundle.rel}"

    def load(self) -> None:
        from okstra_core.workflows.reports import require_latest

        self.bundle = fresh_task(self.bundle)
        self.report = require_latest(self.bundle, "option-selection")

    def subject(self) -> str:
        return f"{self.report.stem} · {self.report.model.task_key}"

    @property
    def sidecar(self) -> Path:
        from okstra_core.workflows.direction import sidecar_path_for

        return Path(sidecar_path_for(self.report))

    def sources(self) -> list[Path]:
        return [self.report.path, self.sidecar, layout.selected_direction_path(self.bundle.root)]

    def review(self) -> tuple[Text, str]:
        rows = [
            ("writes", rel(layout.selected_direction_path(self.bundle.root), self.root)),
            ("from report", self.report.rel()),
            ("report sha256", self.report.sha256),
        ]
        facts = report_facts(rows)
        facts.append("\n\ndigest check now:\n", style="bold")
        facts.append_text(chain_text(self.bundle))
        facts.append(
            "\n\nThe snapshot records the option, its title and summary, the mode, the verified sourceDataSha256, "
            "the sidecar it came from and the time of writing. Below: the sidecar it is taken from.",
            style="dim",
        )
        data = reading.read_text(self.sidecar, root=self.root) if self.sidecar.exists() else None
        if data is None:
            body = "(no user-response sidecar: preselected-validation mode needs none)"
        else:
            body = data if isinstance(data, str) else f"(cannot read it: {data.reason})"
        return facts, body

    def build_steps(self) -> list[StepSpec]:
        return [
            spec(
                PrepareReview,
                lambda: PrepareReview(
                    "Check the digest chain", self.review, box="the sidecar the choice is taken from"
                ),
            ),
            spec(DoneStep, lambda: DoneStep("Written: the selected direction")),
        ]

    def write(self, values: dict[str, Any]) -> Written:
        return prepare_written(self.root, self.bundle, self.clock)


# ------------------------------------------------------------------ attach


class AttachWizard(WizardScreen):
    """Answers written but not attached: attach the task's user responses to ``clarification-response.md``."""

    KIND = "Attach the answers"

    def __init__(self, task: Task) -> None:
        super().__init__(task)

    def load(self) -> None:
        self.bundle = fresh_task(self.bundle)

    def subject(self) -> str:
        return f"{self.bundle.rel} · clarification-response.md"

    @property
    def target(self) -> Path:
        return Path(layout.clarification_response_path(self.bundle.root))

    def sidecars(self) -> list[Path]:
        return sorted(Path(a.path) for rd in self.bundle.run_dirs for a in rd.of_kind("user-response"))

    def sources(self) -> list[Path]:
        return [self.target, *self.sidecars()]

    def review(self) -> tuple[Text, str]:
        from okstra_core.digests import sha256_bytes
        from okstra_core.workflows.user_response_export import ATTACH_MARK

        current = reading.read_text(self.target, root=self.root) if self.target.exists() else ""
        current = current if isinstance(current, str) else ""
        pending: list[tuple[str, str]] = []
        for path in self.sidecars():
            data = reading.read_bytes(path, root=self.root)
            if not isinstance(data, bytes):
                continue
            mark = ATTACH_MARK.format(path=rel(path, self.root), digest=sha256_bytes(data))
            if mark not in current:
                pending.append((rel(path, self.root), data.decode("utf-8", "replace")))
        rows = [("file", rel(self.target, self.root)), ("on disk", "exists" if self.target.exists() else "new file")]
        rows += [("attaches", name) for name, _ in pending] or [("attaches", "nothing: every answer is attached")]
        body = "\n".join(f"{text.rstrip()}\n" for _, text in pending) or "(nothing to append)"
        return report_facts(rows), body

    def build_steps(self) -> list[StepSpec]:
        return [
            spec(
                ReviewStep,
                lambda: ReviewStep("Review what is attached", self.review, box="appended after the file's text"),
            ),
            spec(DoneStep, lambda: DoneStep("Written: attached for the next run")),
        ]

    def write(self, values: dict[str, Any]) -> Written:
        from okstra_core.workflows.user_response_export import attach_clarification

        target, attached = attach_clarification(self.root, fresh_task(self.bundle))
        lines = [Text(f"attached {name}") for name in attached] or [Text("up to date: nothing new to attach")]
        return Written(target, lines)
