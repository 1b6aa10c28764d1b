"""Attaching the answers: the task's user responses appended to ``instruction-set/clarification-response.md``.

The write goes through ``user_response_export.attach_clarification``, the
owner behind ``okstra clarification attach``; the clarification wizard offers
the same write as its last step (:class:`AttachDone`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.widget import Widget
from textual.widgets import Button, Static

from okstra_core import layout, reading
from okstra_core.commands.clarification import attach_verb
from okstra_core.digests import sha256_bytes
from okstra_core.store import Task
from okstra_core.workflows.user_response_export import ATTACH_MARK, attach_clarification

from .wizard import DoneStep, ReviewStep, StepSpec, WizardScreen, Written, spec, task_option
from .wizard_steps import fresh_task, rel, report_facts, show_follow_up

if TYPE_CHECKING:
    from okstra_core.check.findings import CheckReport


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
        wizard = self.wizard
        root = wizard.root
        task = wizard.bundle

        def attach() -> Written:
            target, attached = attach_clarification(root, fresh_task(task))
            lines = [Text(f"attached {name}") for name in attached] or [
                Text("up to date: every user response was already attached", style="dim")
            ]
            return Written(target, lines, (attach_verb(task_option(task)[1]),), "attached the answers")

        wizard.run_follow_up(attach, self._attached)

    def _attached(self, result: Written | str, check: CheckReport | str) -> None:
        show_follow_up(self, result, check, "attach", "✔ ", "\n  ")


class AttachWizard(WizardScreen):
    """Answers written but not attached: attach the task's user responses to ``clarification-response.md``."""

    KIND = "Attach the answers"

    def __init__(self, task: Task) -> None:
        super().__init__(task)

    def load(self) -> None:
        self.bundle = fresh_task(self.bundle)
        self.reviewed = self._review()

    def subject(self) -> str:
        return f"{self.bundle.rel} · clarification-response.md"

    @property
    def target(self) -> Path:
        return Path(layout.clarification_response_path(self.bundle.root))

    def sidecars(self) -> list[Path]:
        return sorted(Path(a.path) for rd in self.bundle.run_dirs for a in rd.of_kind("user-response"))

    def review(self) -> tuple[Text, str]:
        return self.reviewed

    def _review(self) -> tuple[Text, str]:
        """What attaching appends: the answers not in the file yet (read when the wizard opens)."""
        exists = reading.lexists(self.target)
        current = reading.read_text(self.target, root=self.root) if exists else ""
        current = current if isinstance(current, str) else ""
        pending: list[tuple[str, str]] = []
        for path in self.sidecars():
            data = reading.read_bytes(path, root=self.root)
            if not isinstance(data, bytes):
                continue
            mark = ATTACH_MARK.format(path=rel(path, self.root), digest=sha256_bytes(data))
            if mark not in current:
                pending.append((rel(path, self.root), data.decode("utf-8", "replace")))
        rows = [("file", rel(self.target, self.root)), ("on disk", "exists" if exists else "new file")]
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
        target, attached = attach_clarification(self.root, fresh_task(self.bundle))
        lines = [Text(f"attached {name}") for name in attached] or [Text("up to date: nothing new to attach")]
        return Written(target, lines, (attach_verb(task_option(self.bundle)[1]),), "attached the answers")
