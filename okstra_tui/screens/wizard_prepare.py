"""Planning prepare: the digest chain as it stands, then ``instruction-set/selected-direction.json`` written.

The write goes through ``direction.planning_prepare``, the owner behind
``okstra planning prepare``; the direction wizard offers the same write as its
last step (:class:`PrepareOffer`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.widget import Widget
from textual.widgets import Button, Static

from okstra_core import layout, reading
from okstra_core.commands.planning import prepare_verb
from okstra_core.store import Task
from okstra_core.workflows.common import Clock
from okstra_core.workflows.direction import check_chain, planning_prepare, sidecar_path_for
from okstra_core.workflows.reports import LoadedReport, require_latest

from ..widgets.shown import shown_block
from .wizard import DoneStep, ReviewStep, StepSpec, WizardScreen, Written, spec, task_option
from .wizard_steps import fresh_task, rel, report_facts, show_follow_up

if TYPE_CHECKING:
    from okstra_core.check.findings import CheckReport


def chain_text(task: Task) -> Text:
    """The direction-selection chain's checks, passed or failed, as lines."""
    text = Text()
    for i, c in enumerate(check_chain(task)):
        if i:
            text.append("\n")
        text.append("✔ " if c.ok else "✘ ", style="bold green" if c.ok else "bold red")
        text.append(c.step, style="bold")
        text.append("  ")
        text.append_text(shown_block(c.detail, "" if c.ok else "red"))
    return text


def prepare_written(root: Path, task: Task, clock: Clock) -> Written:
    """Run planning prepare; the snapshot's bytes and the chain afterwards are the lines to show."""
    path = planning_prepare(root, fresh_task(task), clock)
    data = reading.read_text(path, root=root)
    body = data if isinstance(data, str) else f"(cannot read it back: {data.reason})"
    lines = [Text("digest check after prepare:", style="bold"), chain_text(fresh_task(task))]
    lines += [Text(f"\n{rel(path, root)}:", style="bold"), shown_block(body.rstrip())]
    return Written(path, lines, (prepare_verb(task_option(task)[1]),), "prepared planning")


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
        wizard.run_follow_up(lambda: prepare_written(root, task, wizard.write_clock), self._prepared)

    def _prepared(self, result: Written | str, check: CheckReport | str) -> None:
        show_follow_up(self, result, check, "prepare", "✔ wrote ", "\n")


class PrepareReview(ReviewStep):
    """What planning prepare checks and what it will write."""


class PrepareWizard(WizardScreen):
    """A choice made but not prepared: the digest check, then planning prepare."""

    KIND = "Prepare planning"

    def __init__(self, task: Task) -> None:
        super().__init__(task)
        #: The latest option-selection report, read by :meth:`load` in the opening worker (None until then).
        self.loaded_report: LoadedReport | None = None

    @property
    def report(self) -> LoadedReport:
        """The latest option-selection report (read by the opening worker)."""
        if self.loaded_report is None:
            raise LookupError("the wizard has not read its report yet")
        return self.loaded_report

    def opening_text(self) -> str:
        return f"reading the option-selection report of {self.bundle.rel}"

    def load(self) -> None:
        self.bundle = fresh_task(self.bundle)
        self.loaded_report = require_latest(self.bundle, "option-selection")
        #: The digest chain as it checks now, and the sidecar the choice is taken from (None: there is none).
        self.chain = chain_text(self.bundle)
        self.sidecar_text = reading.read_text(self.sidecar, root=self.root) if reading.lexists(self.sidecar) else None
        reading.lexists(layout.selected_direction_path(self.bundle.root))  # a direction written meanwhile: stale

    def subject(self) -> str:
        return f"{self.report.stem} · {self.report.model.task_key}"

    @property
    def sidecar(self) -> Path:
        return Path(sidecar_path_for(self.report))

    def review(self) -> tuple[Text, str]:
        rows = [
            ("writes", rel(layout.selected_direction_path(self.bundle.root), self.root)),
            ("from report", self.report.rel()),
            ("report sha256", self.report.sha256),
        ]
        facts = report_facts(rows)
        facts.append("\n\ndigest check now:\n", style="bold")
        facts.append_text(self.chain)
        facts.append(
            "\n\nThe snapshot records the option, its title and summary, the mode, the verified sourceDataSha256, "
            "the sidecar it came from and the time of writing. Below: the sidecar it is taken from.",
            style="dim",
        )
        data = self.sidecar_text
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
        return prepare_written(self.root, self.bundle, self.write_clock)
