"""Every kind of decision the inbox lists, one row each: its label, its colour, what to do, and its wizard.

The kinds are the core's (:data:`okstra_core.workflows.inbox.KINDS`, each
found by one scan in ``okstra_core/workflows/inbox.py``); :data:`DECISIONS`
is all the workbench knows about them, one row per kind (a test holds it to
that). The inbox view (its decision column and its "What to do" panel) and the
command palette's "Decide:" commands read it; Enter on a decision, or its
palette command, opens the row's wizard.

The table imports the wizard screens and the inbox view imports the table, so
it lives in the screens layer, beside them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from okstra_core.errors import OkstraError
from okstra_core.store import Project, Task, TaskRef
from okstra_core.workflows.inbox import InboxKind, PendingDecision

from .wizard import WizardScreen
from .wizard_attach import AttachWizard
from .wizard_design import wizard_for_item
from .wizard_direction import wizard_for_report
from .wizard_prepare import PrepareWizard

#: The wizard that makes a decision of the task given, or a one-line reason there is none.
WizardFactory = Callable[[Task, PendingDecision], WizardScreen | str]


@dataclass(frozen=True, slots=True)
class DecisionKind:
    """How the workbench shows one kind of decision and how a person makes it."""

    #: What the decision asks, in a few words: the inbox's decision column, the palette's "Decide: <label>".
    label: str
    #: The Rich style of the label.
    style: str
    #: The last paragraph of the "What to do" panel (a function of the decision when it depends on it).
    how: str | Callable[[PendingDecision], str]
    #: The wizard that makes the decision (or why there is none: an approval, a file that is not a report).
    wizard: WizardFactory

    def what_to_do(self, decision: PendingDecision) -> str:
        """The "What to do" paragraph for *decision*."""
        return self.how(decision) if callable(self.how) else self.how


def no_wizard(decision: PendingDecision) -> str:
    return f"{decision.path}: no wizard for a {decision.kind} decision"


def report_wizard(task: Task, decision: PendingDecision) -> WizardScreen | str:
    """The wizard that answers the report the decision derives from."""
    if decision.report_path is None:
        return no_wizard(decision)
    return wizard_for_report(task, Path(decision.report_path))


def _clarification_wizard(task: Task, decision: PendingDecision) -> WizardScreen | str:
    if decision.detail == "attach-pending":
        return AttachWizard(task)
    return report_wizard(task, decision)


def _clarification_how(decision: PendingDecision) -> str:
    if decision.detail == "attach-pending":
        return (
            "Enter: attach the task's user responses to instruction-set/clarification-response.md (okstra "
            "clarification attach), so the next run reads them."
        )
    return (
        "Enter: answer one question per step, review the exact sidecar and write it (okstra user-response export); "
        "then attach the answers to clarification-response.md (okstra clarification attach)."
    )


def _design_prep_wizard(task: Task, decision: PendingDecision) -> WizardScreen | str:
    return wizard_for_item(task, decision.item) if decision.item else report_wizard(task, decision)


def _approval(task: Task, decision: PendingDecision) -> str:
    return f"{decision.task}: {decision.summary}. The workbench writes no approval: give it in the lead's session."


#: One row per kind of decision, in the core's order (:data:`okstra_core.workflows.inbox.KINDS`).
DECISIONS: dict[InboxKind, DecisionKind] = {
    "direction-choice": DecisionKind(
        label="choose a direction",
        style="bold magenta",
        how="Enter: compare the candidates side by side, choose, review the user-response sidecar and write it "
        "(okstra direction select); then prepare planning.",
        wizard=report_wizard,
    ),
    "planning-prepare": DecisionKind(
        label="prepare planning",
        style="bold cyan",
        how="Enter: check the digest chain and run planning prepare, which writes "
        "instruction-set/selected-direction.json (okstra planning prepare). The choice can change until then.",
        wizard=lambda task, decision: PrepareWizard(task),
    ),
    "clarification": DecisionKind(
        label="answer questions",
        style="bold yellow",
        how=_clarification_how,
        wizard=_clarification_wizard,
    ),
    "design-prep": DecisionKind(
        label="confirm design item",
        style="bold blue",
        how="Enter: read the item's request, answer each field, review the revision to append and confirm it "
        "(okstra design-prep confirm); then see the resolver's verdict.",
        wizard=_design_prep_wizard,
    ),
    "approval": DecisionKind(
        label="approve in lead's session",
        style="bold",
        how="The contract defines no approval file, so the workbench writes nothing here: approve (or not) in the "
        "lead's session for this task. The item leaves the inbox when the task manifest no longer awaits approval.",
        wizard=_approval,
    ),
}


def wizard_for_decision(project_root: Path, decision: PendingDecision) -> WizardScreen | str:
    """The wizard that makes *decision*, on its task read fresh, or a one-line reason there is none."""
    root = decision.task_root
    if root is None:
        return no_wizard(decision)
    task = TaskRef(Project(project_root), root.parent.name, root.name, root).open()
    try:
        return DECISIONS[decision.kind].wizard(task, decision)
    except OkstraError as exc:
        return exc.line(project_root)
