"""Confirming a design-prep item: its request, one step per field, the revision to append, the verdict.

The request shown is the deterministic request document
(``design_prep.request_text``); when it is not on disk yet it is materialised
(``design_prep.materialize``, as ``okstra design-prep materialize``) together
with the confirmation, so a cancelled wizard writes nothing. The revision is
appended by ``design_prep.confirm``, the owner behind ``okstra design-prep
confirm``, from the answer document ``design_prep.answers_text`` makes.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Static, TextArea

from okstra_core import layout, names, reading
from okstra_core.commands.design_prep import confirm_verb, materialize_verb
from okstra_core.errors import OkstraError
from okstra_core.store import Task

from ..widgets.shown import shown_block
from .wizard import DoneStep, ReviewStep, StepSpec, WizardScreen, WizardStep, Written, spec, task_option
from .wizard_steps import fresh_task, rel, report_facts

#: Longest field answer the wizard takes (a design answer, not a document).
MAX_ANSWER = 20_000


def wizard_for_item(task: Task, prep_id: str) -> WizardScreen | str:
    """The wizard confirming *prep_id*, or a one-line reason there is none."""
    from okstra_core.workflows.design_prep import OPEN_STATUSES

    try:
        wizard = DesignPrepWizard(task, prep_id)
    except OkstraError as exc:
        return exc.line(task.project.root)
    item = wizard.item
    if item.status not in OPEN_STATUSES:
        return f"{wizard.report.rel()}: {prep_id} is {item.status}; only provisional or blocked items take input"
    if item.assessment is None:
        return f"{wizard.report.rel()}: {prep_id} has no assessment (legacy-unassessed); nothing to confirm against"
    return wizard


class RequestStep(WizardStep):
    """The item's request document, as the core makes it, and whether it is on disk."""

    DEFAULT_CSS = """
    RequestStep #request-body { height: 1fr; border: round $primary; padding: 0 1; }
    """

    def __init__(self, wizard: DesignPrepWizard) -> None:
        super().__init__(f"The request for {wizard.item.prep_id}")
        self.facts, self.body = wizard.request_view()

    def compose(self) -> ComposeResult:
        yield Static(self.facts, id="request-facts")
        body = VerticalScroll(Static(shown_block(self.body), id="request-text"), id="request-body", can_focus=True)
        body.border_title = "request document"
        yield body


class FieldStep(WizardStep):
    """One field the item asks for; it must not be left empty."""

    def __init__(self, item: Any, name: str, number: int, total: int, value: str) -> None:
        super().__init__(f"{name} · field {number} of {total}")
        self.item = item
        self.name_ = name
        self.value = value

    def compose(self) -> ComposeResult:
        question = Text("question: ", style="bold")
        question.append_text(shown_block(self.item.question or "(no question recorded)"))
        yield Static(question)
        label = Text("answer for ", style="bold")
        label.append_text(shown_block(self.name_, "bold"))
        yield Static(label, classes="wiz-label")
        yield TextArea(self.value, id="field-text")
        yield Static("", id="field-problem")

    def _text(self) -> str:
        return self.query_one("#field-text", TextArea).text

    def validate(self) -> str | None:
        text = self._text()
        if not text.strip():
            return f"{self.name_}: every field needs an answer before the item can be confirmed."
        if len(text) > MAX_ANSWER:
            return f"{self.name_}: at most {MAX_ANSWER:,} characters ({len(text):,} typed)."
        if any(line.startswith("## ") for line in text.splitlines()):
            return f"{self.name_}: a line may not start with “## ” (it would start another field)."
        return None

    def store(self, values: dict[str, Any]) -> None:
        values[f"field:{self.name_}"] = self._text()


class DesignReview(ReviewStep):
    """The revision to append, with who confirms it."""

    DEFAULT_CSS = """
    DesignReview #design-by-row { height: 1; margin: 1 0; }
    DesignReview #design-by-row Static { width: auto; }
    DesignReview #design-by { width: 40; }
    """

    def __init__(self, title: str, render: Any, by: str) -> None:
        super().__init__(title, render, box="exact bytes (the stamp and confirmed-at are taken when written)")
        self.by = by

    def compose(self) -> ComposeResult:
        with Horizontal(id="design-by-row"):
            yield Static(Text("confirmed by ", style="bold"))
            yield Input(self.by, id="design-by", compact=True)
        yield from super().compose()

    def validate(self) -> str | None:
        by = self.query_one("#design-by", Input).value
        if not by.strip():
            return "Say who confirms (a name, or “user”)."
        if any(ord(ch) < 32 for ch in by):
            return "The confirming name may not hold control characters."
        return None

    def store(self, values: dict[str, Any]) -> None:
        values["by"] = self.query_one("#design-by", Input).value.strip()

    def on_input_changed(self, event: Input.Changed) -> None:
        # The Input reports its first value when mounted: that one is already shown.
        if event.value.strip() != self.wizard.values.get("by") and event.value.strip() and not self.validate():
            self.store(self.wizard.values)
            self.shown()

    def focus_first(self) -> None:
        self.query_one("#design-by", Input).focus()


class VerdictDone(DoneStep):
    """After the confirmation: the resolver's verdict for the item."""


class DesignPrepWizard(WizardScreen):
    """The request, one step per field, the revision to append, then the resolver's verdict."""

    KIND = "Confirm a design item"

    def __init__(self, task: Task, prep_id: str) -> None:
        super().__init__(task)
        self.prep_id = prep_id
        self.values["by"] = "user"
        # Read here: whether the item takes input decides whether the wizard opens at all (opening reads again).
        self.load()

    def load(self) -> None:
        from okstra_core.workflows.design_prep import design_item, next_revision

        self.bundle = fresh_task(self.bundle)
        self.report, self.item = design_item(self.bundle, self.prep_id)
        #: The request on disk (None: not written yet) and the revision the confirmation will append.
        self.request_on_disk = (
            reading.read_bytes(self.request, root=self.root) if reading.lexists(self.request) else None
        )
        self.revision = next_revision(self.bundle, self.prep_id)

    @property
    def fields(self) -> list[str]:
        return list(self.item.fields) or ["answer"]

    @property
    def request(self) -> Path:
        from okstra_core.workflows.design_prep import request_path

        return Path(request_path(self.report, self.prep_id))

    @property
    def inputs_dir(self) -> Path:
        return Path(self.report.artifact.run.path) / layout.DESIGN_PREP_INPUTS

    def subject(self) -> str:
        return f"{self.item.prep_id} {self.item.title} ({self.item.status}) · {self.report.model.task_key}"

    def request_view(self) -> tuple[Text, str]:
        from okstra_core.workflows.design_prep import fingerprint, request_text

        want = request_text(self.report, self.item)
        on_disk = self.request_on_disk
        if on_disk is None:
            state = "not materialised yet: it is written together with the confirmation"
        elif on_disk == want.encode("utf-8"):
            state = "on disk, matches the approved snapshot"
        else:
            state = "on disk but differs from what the snapshot gives; it is left as it is"
        rows = [
            ("item", f"{self.item.prep_id} {self.item.title}"),
            ("status", self.item.status),
            ("snapshot", self.report.rel()),
            ("request", rel(self.request, self.root)),
            ("state", state),
            ("fingerprint", fingerprint(self.item) or "-"),
        ]
        return report_facts(rows), want

    def answers(self, values: dict[str, Any]) -> dict[str, str]:
        return {name: str(values.get(f"field:{name}", "")) for name in self.fields}

    def review(self) -> tuple[Text, str]:
        from okstra_core.times import compact_stamp, iso
        from okstra_core.workflows.design_prep import fingerprint, input_text

        revision = self.revision
        moment = self.clock.now()
        name = names.build(
            "design-prep-input",
            seq=self.report.artifact.name.seq,
            prep_id=self.prep_id,
            revision=revision,
            stamp=compact_stamp(moment),
        )
        by = str(self.values.get("by") or "user")
        body = input_text(self.report, self.item, revision, self.answers(self.values), iso(moment), by)
        rows = [
            ("file", f"{rel(self.inputs_dir, self.root)}/{name}"),
            ("revision", f"r{revision} (the next after those on disk)"),
            ("fingerprint", fingerprint(self.item) or "-"),
        ]
        return report_facts(rows), body

    def build_steps(self) -> list[StepSpec]:
        fields = self.fields
        steps = [spec(RequestStep, lambda: RequestStep(self))]
        for i, name in enumerate(fields):
            steps.append(spec(FieldStep, partial(self._field, name, i + 1, len(fields))))
        steps.append(spec(DesignReview, self._design_review))
        steps.append(spec(VerdictDone, lambda: VerdictDone("Written: the resolver's verdict")))
        return steps

    def _design_review(self) -> DesignReview:
        return DesignReview("Review the revision to append", self.review, str(self.values.get("by") or "user"))

    def _field(self, name: str, number: int, total: int) -> FieldStep:
        """The step of field *name*, built when it comes on screen, from the answer held now."""
        return FieldStep(self.item, name, number, total, str(self.values.get(f"field:{name}", "")))

    def write(self, values: dict[str, Any]) -> Written:
        from okstra_core.workflows import design_prep

        lines: list[Text] = []
        task = self.bundle
        folder = task_option(task)[1]
        verbs = []
        if not os.path.lexists(self.request):
            for m in design_prep.materialize(self.root, task):
                lines.append(Text(f"materialised {rel(m.path, self.root)} ({m.outcome.value})"))
            verbs.append(materialize_verb(folder))
        text = design_prep.answers_text(self.answers(values))
        by = str(values.get("by") or "user")
        path = design_prep.confirm(
            self.root, fresh_task(task), self.prep_id, text, confirmed_by=by, clock=self.write_clock
        )
        verbs.append(confirm_verb(folder, self.prep_id, text, by))
        lines.append(Text("\nthe resolver's verdict for this item:", style="bold"))
        lines.append(verdict_text(fresh_task(task), self.prep_id, self.root))
        return Written(path, lines, tuple(verbs), f"confirmed {self.prep_id}")


def verdict_text(task: Task, prep_id: str, root: Path) -> Text:
    """Every input revision of the item with the resolver's verdict."""
    from okstra_core.workflows.design_prep import resolve

    res = resolve(task)
    item = next((i for i in res.items if i.prep_id == prep_id), None)
    text = Text()
    if item is None:
        text.append(res.error or f"{prep_id} is not in the approved plan", style="red")
        return text
    auth = item.authoritative
    if auth is not None:
        text.append(f"r{auth.revision} is authoritative: ", style="bold green")
        text.append(rel(auth.path, root))
    else:
        text.append("no authoritative input", style="bold yellow")
    styles = {"authoritative": "green", "superseded": "dim", "invalid": "red"}
    for v in item.inputs:
        text.append("\n  ")
        text.append(f"{v.verdict:<19}", style=styles.get(v.verdict, "yellow"))
        text.append_text(shown_block(f"{v.path.name}  ({v.reason})"))
    return text
