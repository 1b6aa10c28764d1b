"""Demo tasks that wait for a person, one per kind the decisions inbox lists.

They are made after everything else (on the same clock), so the earlier tasks keep
their bytes, and they leave the latest-task pointer where it was.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .. import layout
from ..store import Project
from ..workflows import design_prep, direction
from ..workflows.tasks import TaskSpec, create_task
from .content import ADDRESS_OPTIONS, ANALYSERS, FRAUD_OPTIONS, PROJECT_ID, WRITER, cards_plan
from .runs import close, close_awaiting_approval, converge, convergence_summary, pin_mtime, team_run, write_report
from .schedule import DemoClock, on, slot

OPEN_GROUP = "checkout"


def _open_spec(task_id: str, task_type: str, category: str, title: str, brief: str) -> TaskSpec:
    return TaskSpec(PROJECT_ID, OPEN_GROUP, task_id, task_type, category, title, brief)


def _task_fraud_rules(root: Path, clock: DemoClock) -> None:
    """checkout/fraud-rules: a comparison-mode option report nobody has chosen from yet (direction-choice)."""
    spec = _open_spec(
        "fraud-rules",
        "option-selection",
        "feature",
        "Choose where fraud rules run",
        "Chargebacks doubled since the spring sale; the rules live in three places.",
    )
    clock.wait_until(on(17, "10:45"))
    troot = create_task(root, spec, clock, point=False)
    run = team_run(
        root, troot, "option-selection", [*ANALYSERS[:2], WRITER], clock, rich_team=False, slot=slot(17, "11:00", 24)
    )
    rep = write_report(
        run, "Where fraud rules run", "Three options compared; IO-002 recommended.", FRAUD_OPTIONS, clock=clock
    )
    close(
        run,
        rep,
        clock,
        next_phase=layout.IMPLEMENTATION_PLANNING,
        next_status="blocked",
        rationale="waiting for the choice",
    )


def _task_address_validation(root: Path, clock: DemoClock) -> None:
    """checkout/address-validation: the choice is recorded but planning prepare has not run (planning-prepare)."""
    spec = _open_spec(
        "address-validation",
        "option-selection",
        "feature",
        "Validate shipping addresses",
        "One parcel in forty comes back undeliverable.",
    )
    clock.wait_until(on(16, "16:05"))
    troot = create_task(root, spec, clock, point=False)
    run = team_run(
        root, troot, "option-selection", [ANALYSERS[1], WRITER], clock, rich_team=False, slot=slot(16, "16:20", 16)
    )
    rep = write_report(run, "Address validation approach", "Two options compared.", ADDRESS_OPTIONS, clock=clock)
    close(
        run,
        rep,
        clock,
        next_phase=layout.IMPLEMENTATION_PLANNING,
        next_status="pending",
        rationale="choice made; prepare next",
    )
    task = Project(root).find_task(spec.key)
    assert task is not None
    pin_mtime(direction.select_direction(root, task, "IO-002", clock=clock), clock)


def _task_tax_export(root: Path, clock: DemoClock) -> None:
    """checkout/tax-export: an analysis whose clarification questions are unanswered (clarification)."""
    spec = _open_spec(
        "tax-export",
        "analysis",
        "investigation",
        "Fix the quarterly tax export",
        "The VAT export disagrees with the ledger by 0.4%.",
    )
    clock.wait_until(on(16, "13:15"))
    troot = create_task(root, spec, clock, point=False)
    run = team_run(root, troot, "analysis", [*ANALYSERS, WRITER], clock, rich_team=False, slot=slot(16, "13:30", 47))
    final = converge(run, clock, rounds=1, prompts_kept=False)  # the analysers agree in one round
    rep = write_report(
        run,
        "Tax export drift",
        "Rounding per line versus per invoice explains most of the drift; two questions for finance.",
        {
            "analysisFindings": [
                {
                    "findingId": "F-001",
                    "title": "VAT rounded per line",
                    "severity": "medium",
                    "detail": "The export rounds VAT on each line; the ledger rounds once per invoice.",
                    "evidence": ["src/tax/export.py:57"],
                }
            ]
        },
        clarification=[
            {
                "itemId": "CQ-001",
                "question": "Which amounts should the export report?",
                "context": "F-001: the ledger books net amounts, the tax office asks for gross.",
                "options": ["net", "gross", "both, in two columns"],
            },
            {
                "itemId": "CQ-002",
                "question": "Do refunds issued after quarter close belong to the old quarter?",
                "context": "Affects 38 refunds in Q3.",
            },
        ],
        extra=convergence_summary(run, final),
        clock=clock,
    )
    close(run, rep, clock, next_phase="analysis", next_status="blocked", rationale="waiting for clarification answers")


def _task_saved_cards(root: Path, clock: DemoClock) -> None:
    """checkout/saved-cards: a re-planned snapshot with a provisional and a blocked item still open (design-prep).

    PREP-002's only answer went stale with the re-plan; PREP-001 was confirmed by two people at
    once, so its one revision number is recorded twice and neither counts.
    """
    spec = _open_spec(
        "saved-cards",
        layout.IMPLEMENTATION_PLANNING,
        "feature",
        "Let customers save cards",
        "Returning customers re-enter card details on every order.",
    )
    clock.wait_until(on(13, "09:05"))
    troot = create_task(root, spec, clock, point=False)
    plan1 = team_run(
        root,
        troot,
        layout.IMPLEMENTATION_PLANNING,
        [ANALYSERS[0], WRITER],
        clock,
        rich_team=False,
        slot=slot(13, "09:20", 58),
    )
    p1 = write_report(plan1, "Saved cards plan", "Two stages; two design items need input.", cards_plan(1), clock=clock)
    close(plan1, p1, clock, next_phase="implementation", next_status="pending", rationale="design items open")
    task = Project(root).find_task(spec.key)
    assert task is not None
    design_prep.materialize(root, task)
    answer = "## retention\n\n2 years\n\n## deletion\n\nNightly job\n"
    design_prep.confirm(root, task, "PREP-002", answer, confirmed_by="carol", clock=clock)
    plan2 = team_run(
        root,
        troot,
        layout.IMPLEMENTATION_PLANNING,
        [ANALYSERS[0], WRITER],
        clock,
        rich_team=False,
        slot=slot(16, "10:00", 40),
    )
    p2 = write_report(
        plan2,
        "Saved cards plan (revised)",
        "Retention question widened to include card expiry; design items open.",
        cards_plan(2),
        clock=clock,
    )
    close(plan2, p2, clock, next_phase="implementation", next_status="pending", rationale="design items open")
    task = Project(root).find_task(spec.key)
    assert task is not None
    design_prep.materialize(root, task)
    report, item = design_prep.design_item(task, "PREP-001")
    rev = design_prep.next_revision(task, "PREP-001")
    answers = {"vault": "The payment provider's vault", "rationale": "Keeps card data out of our systems."}
    design_prep.write_input(root, report, item, rev, answers, confirmed_by="alice", clock=clock)
    answers = {"vault": "Our own HSM-backed vault", "rationale": "No provider lock-in."}
    design_prep.write_input(root, report, item, rev, answers, confirmed_by="bob", clock=clock)


def _task_receipt_emails(root: Path, clock: DemoClock) -> None:
    """checkout/receipt-emails: analysis done, the workflow awaits a person's approval (approval)."""
    spec = _open_spec(
        "receipt-emails",
        "analysis",
        "bugfix",
        "Stop duplicate receipt emails",
        "Some customers get two receipts for one order.",
    )
    clock.wait_until(on(12, "16:00"))
    troot = create_task(root, spec, clock, point=False)
    run = team_run(root, troot, "analysis", [ANALYSERS[2], WRITER], clock, rich_team=False, slot=slot(12, "16:10", 33))
    rep = write_report(
        run,
        "Duplicate receipts",
        "The order-paid event is delivered twice and the mailer does not deduplicate.",
        {
            "analysisFindings": [
                {
                    "findingId": "F-001",
                    "title": "Mailer is not idempotent",
                    "severity": "medium",
                    "detail": "order-paid is at-least-once; the mailer sends on every delivery.",
                    "evidence": ["src/mail/receipts.py:23"],
                }
            ]
        },
        clock=clock,
    )
    close_awaiting_approval(run, rep, clock)


OPEN_TASKS: list[Callable[[Path, DemoClock], None]] = [
    _task_receipt_emails,
    _task_saved_cards,
    _task_tax_export,
    _task_address_validation,
    _task_fraud_rules,
]
