"""Answering a report's clarification questions: the user-response sidecar, reviewed byte for byte, then written.

The write goes through ``user_response_export.export`` (``okstra
user-response export``); the sidecar shown for review is
``user_response.render_sidecar`` of the same answers, so the bytes reviewed
are the bytes written. :class:`ReportWizard` is the frame the direction wizard
(``wizard_direction``) builds on too.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text

from okstra_core import reading
from okstra_core.commands.user_response import export_verb
from okstra_core.errors import WriteRefused
from okstra_core.models.report import ClarificationItem
from okstra_core.models.sidecars import UserResponseHeader
from okstra_core.store import Task
from okstra_core.workflows.direction import sidecar_path_for
from okstra_core.workflows.reports import LoadedReport, report_by_path
from okstra_core.workflows.user_response import ExportInput, read_answers, render_sidecar, sidecar_mode
from okstra_core.workflows.user_response_export import export

from .wizard import ReviewStep, StepSpec, WizardScreen, Written, project_path, spec, task_option
from .wizard_attach import AttachDone
from .wizard_steps import QuestionStep, answers_of, fresh_task, rel, report_facts, state_for


def load_report(task: Task, report_path: Path) -> LoadedReport:
    """The report at *report_path*; raises ``OkstraError`` when it cannot be read."""
    return report_by_path(task, report_path)


def sidecar_state(path: Path, data: bytes, root: Path) -> str:
    """What writing *data* to *path* will do to what is there now."""
    existing = reading.read_bytes(path, root=root) if path.exists() else None
    if existing is None:
        return "new file"
    if existing == data:
        return "identical to the file on disk: writing changes nothing"
    return "replaces the earlier export, which is kept as a superseded copy"


class ReportWizard(WizardScreen):
    """A wizard over one report's user-response sidecar."""

    def __init__(self, task: Task, report_path: Path) -> None:
        super().__init__(task)
        self.report_path = report_path
        #: The report, read by :meth:`load` in the opening worker (None until then).
        self.loaded_report: LoadedReport | None = None
        #: The sidecar the answers start from (the newest for this report), if there is one.
        self.prefilled_from: Path | None = None
        #: The question states read from that sidecar, by item id.
        self.recorded: dict[str, Any] = {}

    @property
    def report(self) -> LoadedReport:
        """The report the wizard answers (read by the opening worker)."""
        if self.loaded_report is None:
            raise LookupError("the wizard has not read its report yet")
        return self.loaded_report

    def newest_sidecar(self) -> Path | None:
        """The report's sidecar, or, when it is gone, its newest superseded copy."""
        current = self.sidecar
        if reading.lexists(current) and not reading.is_dir(current):
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
        first = self.loaded_report is None
        try:
            size = f" ({self.report_path.stat().st_size / 1e6:.1f} MB)"
        except OSError:
            size = ""
        self.progress(f"reading and checking {rel(self.report_path, self.root)}{size}")
        self.bundle = fresh_task(self.bundle)
        report = load_report(self.bundle, self.report_path)
        if sidecar_mode(report.model) != "comparison" and not report.model.clarification_items:
            raise WriteRefused(report.path, "asks no clarification questions and offers no choice; nothing to answer")
        self.loaded_report = report
        newest = self.newest_sidecar()  # an answer written meanwhile makes the wizard stale
        if first and newest is not None:
            self.progress(f"reading the answers recorded for its {len(report.model.clarification_items)} questions")
            self.recorded = self._recorded_answers()
            self.values.update(self.recorded)

    @property
    def sidecar(self) -> Path:
        return Path(sidecar_path_for(self.report))

    def subject(self) -> str:
        return f"{self.report.stem} · {self.report.model.task_key}"

    def selected(self, values: dict[str, Any]) -> str | None:
        return None

    def question_steps(self) -> list[StepSpec]:
        items = list(self.report.model.clarification_items)
        return [spec(QuestionStep, partial(self._question, item, i + 1, len(items))) for i, item in enumerate(items)]

    def _question(self, item: ClarificationItem, number: int, total: int) -> QuestionStep:
        """The question step of *item*, built when it comes on screen, from the answer held now."""
        source = self.prefilled_from
        prefilled = rel(source, self.root) if source is not None and item.item_id in self.recorded else None
        return QuestionStep(item, number, total, self.values.get(item.item_id), prefilled)

    def sidecar_text(self, values: dict[str, Any]) -> str:
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
            ("on disk", sidecar_state(self.sidecar, text.encode("utf-8"), self.root)),
        ]
        option = self.selected(self.values)
        if option is not None:
            rows.insert(1, ("selected option", option))
        return report_facts(rows), text


class ClarificationWizard(ReportWizard):
    """One question per step, a review of the exact sidecar, the write, then the offer to attach."""

    KIND = "Answer the clarification questions"

    def build_steps(self) -> list[StepSpec]:
        return [
            *self.question_steps(),
            spec(ReviewStep, lambda: ReviewStep("Review the user response", self.review)),
            spec(AttachDone, lambda: AttachDone("Written: attach the answers for the next run")),
        ]

    def write(self, values: dict[str, Any]) -> Written:
        answers = answers_of(list(self.report.model.clarification_items), values)
        path, superseded = export(self.root, self.bundle, self.report.path, answers, clock=self.write_clock)
        lines = [Text(f"earlier export kept as {rel(superseded, self.root)}")] if superseded else []
        report = project_path(self.report.path, self.bundle)
        verb = export_verb(task_option(self.bundle)[1], report, answers)
        return Written(path, lines, (verb,), f"answers to {self.report.path.parent.name}")
