"""The scripted lifecycles of the demo's rich tasks, its invocations and its manager."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .. import layout, names, writes
from ..models import manager as mm
from ..models import task as tm
from ..models.report import StageEvidence
from ..models.run import ErrorRecord
from ..store import Project
from ..times import iso
from ..workflows import carry, design_prep, direction, invocations, manager, user_response_export
from ..workflows.tasks import TaskSpec, append_recap, create_task, record_fix_cycle
from .content import ANALYSERS, ANALYSIS_FINDINGS, EXECUTOR, PROJECT_ID, VERIFIER, WRITER, option_candidates, retry_plan
from .runs import close, converge, convergence_summary, date_by_clock, team_run, write_report
from .schedule import DemoClock, on, slot


def _task_retry_policy(root: Path, clock: DemoClock) -> None:
    """payments/retry-policy: every phase, reruns, convergence, direction chain, design-prep, stages 1-3."""
    spec = TaskSpec(
        PROJECT_ID,
        "payments",
        "retry-policy",
        "analysis",
        "bugfix",
        "Make payment retries safe",
        "Customers were charged twice when the gateway timed out. Find why and fix it.",
    )
    clock.wait_until(on(5, "15:00"))
    troot = create_task(root, spec, clock)
    _retry_analyses(root, troot, clock)
    selected_direction = _retry_direction(root, troot, spec, clock)
    plan = _retry_planning(root, troot, spec, selected_direction, clock)
    _retry_stages(root, troot, plan, clock)
    _retry_final_verification(root, troot, clock)


def _retry_analyses(root: Path, troot: Path, clock: DemoClock) -> None:
    """An analysis with convergence and an error log, then its rerun in the same run dir."""
    first = team_run(root, troot, "analysis", [*ANALYSERS, WRITER], clock, slot=slot(5, "15:20", 38))
    final = converge(first, clock)
    r1 = write_report(
        first,
        "Payment retry analysis",
        "Retries re-submit charges without idempotency keys.",
        ANALYSIS_FINDINGS,
        extra=convergence_summary(first, final),
        clock=clock,
    )
    writes.append_jsonl(
        root,
        first.path("errors-log"),
        ErrorRecord(
            at=iso(clock.now()),
            worker_id="gemini-analyser",
            severity="warning",
            code="rate-limit",
            message="provider throttled; retried after 20s",
        ).dump(),
    )
    close(first, r1, clock, next_phase="analysis", rationale="rerun with the gateway logs attached")
    append_recap(
        root,
        troot,
        tm.RecapEntry(
            at=iso(clock.now()),
            task_type="analysis",
            run_date_time_segment=first.segment,
            summary="Three findings; convergence confirmed two after two rounds.",
        ),
    )
    # The rerun reuses runs/analysis/ and takes seq 002 in every category.
    second = team_run(root, troot, "analysis", [*ANALYSERS[:2], WRITER], clock, slot=slot(5, "17:05", 27))
    r2 = write_report(
        second,
        "Payment retry analysis (with gateway logs)",
        "Confirmed: retries lack idempotency keys.",
        ANALYSIS_FINDINGS,
        clock=clock,
    )
    close(second, r2, clock, next_phase="option-selection", rationale="findings confirmed")


def _retry_direction(root: Path, troot: Path, spec: TaskSpec, clock: DemoClock) -> str:
    """The option comparison, the recorded choice and the selected-direction snapshot (returned, project-relative)."""
    opt = team_run(root, troot, "option-selection", [*ANALYSERS[:2], WRITER], clock, slot=slot(6, "13:40", 21))
    r3 = write_report(
        opt, "How to make retries safe", "Three options compared.", option_candidates("comparison"), clock=clock
    )
    close(
        opt,
        r3,
        clock,
        next_phase=layout.IMPLEMENTATION_PLANNING,
        next_status="blocked",
        rationale="waiting for the choice",
        awaiting=True,
    )
    task = Project(root).find_task(spec.key)
    assert task is not None
    date_by_clock(direction.select_direction(root, task, "IO-001", clock=clock), clock)
    task = Project(root).find_task(spec.key)
    assert task is not None
    sd = direction.planning_prepare(root, task, clock)
    date_by_clock(sd, clock)
    sd_rel = layout.rel(sd, root)
    return sd_rel


def _retry_planning(root: Path, troot: Path, spec: TaskSpec, sd_rel: str, clock: DemoClock) -> Path:
    """Two planning runs with design-prep answers, a stale one and a duplicate revision; returns the approved plan."""
    plan1 = team_run(
        root, troot, layout.IMPLEMENTATION_PLANNING, [ANALYSERS[0], WRITER], clock, slot=slot(9, "09:30", 44)
    )
    p1 = write_report(
        plan1,
        "Retry safety plan",
        "Three stages; two design items need input.",
        retry_plan(True, 1),
        extra={"selectedDirectionRef": sd_rel},
        clock=clock,
    )
    close(
        plan1,
        p1,
        clock,
        next_phase="implementation",
        next_status="pending",
        rationale="design items open",
        awaiting=True,
    )
    task = Project(root).find_task(spec.key)
    assert task is not None
    design_prep.materialize(root, task)
    design_prep.confirm(
        root,
        task,
        "PREP-001",
        "## format\n\nUUIDv7 per logical charge\n\n## rationale\n\nSortable, no coordination.\n",
        clock=clock,
    )
    design_prep.confirm(root, task, "PREP-002", "## store\n\nRedis\n\n## ttl\n\n24h\n", clock=clock)
    # Re-plan: PREP-002's assessment changes, so its r1 answer goes stale; PREP-001 is unchanged and carries over.
    plan2 = team_run(
        root, troot, layout.IMPLEMENTATION_PLANNING, [ANALYSERS[0], WRITER], clock, slot=slot(9, "15:05", 31)
    )
    p2 = write_report(
        plan2,
        "Retry safety plan (revised)",
        "Storage question widened to include TTL.",
        retry_plan(True, 2),
        extra={"selectedDirectionRef": sd_rel},
        clock=clock,
    )
    close(plan2, p2, clock, next_phase="implementation", next_status="ready", rationale="plan approved")
    task = Project(root).find_task(spec.key)
    assert task is not None
    design_prep.materialize(root, task)
    design_prep.confirm(
        root, task, "PREP-001", "## format\n\nUUIDv7\n\n## rationale\n\nSame as before, shorter.\n", clock=clock
    )
    report = design_prep.approved_snapshot(task)
    item = next(i for i in report.model.implementation_plan.design_items if i.prep_id == "PREP-002")  # type: ignore[union-attr]
    # Two wizards confirmed at the same moment: both took r2, which the resolver skips as a duplicate.
    rev = design_prep.next_revision(task, "PREP-002")
    design_prep.write_input(
        root, report, item, rev, {"store": "Postgres table", "ttl": "7 days"}, confirmed_by="alice", clock=clock
    )
    design_prep.write_input(root, report, item, rev, {"store": "Redis", "ttl": "48h"}, confirmed_by="bob", clock=clock)
    design_prep.confirm(
        root,
        task,
        "PREP-002",
        "## store\n\nPostgres table with a TTL index\n\n## ttl\n\n7 days\n",
        confirmed_by="alice",
        clock=clock,
    )
    return p2


#: The retry policy's implementation stages: the second is the long one.
_STAGE_SLOTS = {1: slot(10, "09:00", 95), 2: slot(10, "13:30", 130), 3: slot(12, "09:10", 70)}


def _retry_stages(root: Path, troot: Path, plan: Path, clock: DemoClock) -> None:
    """Implementation stages 1-3, each carrying its evidence and consuming the approved plan."""
    plan_rel = layout.rel(plan, root)
    for stage in (1, 2, 3):
        cycle = None
        if stage == 3:
            # Stage 2's verifier sent the refund path back: stage 3 is made in a fix cycle.
            cycle = "fc-1"
            symptom = "partial refunds skip the idempotency key"
            event = tm.FixCycleEvent(
                event="opened",
                cycle_id=cycle,
                cycle=1,
                symptom=symptom,
                target_report="final-report-implementation-002",
                at=iso(clock.now()),
            )
            record_fix_cycle(root, troot, event)
        stage_slot = _STAGE_SLOTS[stage]
        impl = team_run(
            root, troot, "implementation", [EXECUTOR, VERIFIER], clock, stage=stage, fix_cycle_id=cycle, slot=stage_slot
        )
        rep = write_report(
            impl,
            f"Stage {stage} results",
            f"Stage {stage} implemented and verified.",
            {
                "implementationResults": {
                    "stage": stage,
                    "outcome": "passed",
                    "changes": [{"path": f"src/payments/stage{stage}.py", "summary": "implemented"}],
                    "checks": [{"name": "unit", "result": "passed"}, {"name": "contract", "result": "passed"}],
                }
            },
            clock=clock,
        )
        carry.record_carry(impl, "passed", [StageEvidence(kind="report", path=impl.rel(rep))], clock)
        carry.record_consumer(impl, plan_rel, clock)
        if cycle is not None:  # the stage's checks pass: the cycle closes with the run
            record_fix_cycle(
                root, troot, tm.FixCycleEvent(event="closed", cycle_id=cycle, cycle=1, at=iso(clock.now()))
            )
        close(
            impl,
            rep,
            clock,
            next_phase="implementation" if stage < 3 else "final-verification",
            rationale=f"stage {stage} passed",
            phase_outcome={"implementation": "completed"} if stage == 3 else None,
        )


def _retry_final_verification(root: Path, troot: Path, clock: DemoClock) -> None:
    fv = team_run(root, troot, "final-verification", [VERIFIER, WRITER], clock, slot=slot(12, "14:10", 26))
    rep = write_report(
        fv,
        "Final verification",
        "All criteria met.",
        {
            "verificationVerdict": {
                "verdict": "pass",
                "criteria": [
                    {"criterion": "No double charge under retry", "result": "met", "evidence": "load test run 14"},
                    {"criterion": "Checkout SLA kept", "result": "met", "evidence": "p99 21s"},
                ],
            }
        },
        clock=clock,
    )
    close(fv, rep, clock, next_phase=None, next_status="terminal", rationale="task complete")


def _task_refund_ledger(root: Path, clock: DemoClock) -> None:
    """payments/refund-ledger: an analysis with clarification items and an exported answer, attached."""
    spec = TaskSpec(
        PROJECT_ID,
        "payments",
        "refund-ledger",
        "analysis",
        "investigation",
        "Reconcile the refund ledger",
        "Refund totals drift from the gateway's settlement files.",
        related=("demo-shop:payments:retry-policy",),
    )
    clock.wait_until(on(5, "09:55"))
    troot = create_task(root, spec, clock)
    run = team_run(root, troot, "analysis", [*ANALYSERS, WRITER], clock, slot=slot(5, "10:10", 41))
    # Three rounds and still one finding disputed: the convergence stops at its round limit.
    final = converge(run, clock, rounds=3, settled=False, prompts_kept=False)
    rep = write_report(
        run,
        "Refund ledger drift",
        "Drift comes from partial refunds; two questions for the owner.",
        {
            "analysisFindings": [
                {
                    "findingId": "F-001",
                    "title": "Partial refunds booked twice",
                    "severity": "high",
                    "detail": "The ledger books both the partial refund and its reversal.",
                    "evidence": ["src/ledger/refunds.py:88"],
                }
            ]
        },
        clarification=[
            {
                "itemId": "CQ-001",
                "question": "Should partial refunds older than 90 days be re-booked?",
                "context": "Affects 412 rows.",
            },
            {
                "itemId": "CQ-002",
                "question": "Which settlement file is authoritative when two disagree?",
                "options": ["gateway", "bank"],
            },
        ],
        extra=convergence_summary(run, final),
        clock=clock,
    )
    close(
        run,
        rep,
        clock,
        next_phase="analysis",
        next_status="blocked",
        rationale="waiting for clarification answers",
        awaiting=True,
    )
    task = Project(root).find_task(spec.key)
    assert task is not None
    sidecar, _kept = user_response_export.export(
        root, task, rep, {"CQ-001": "No, only the last 90 days.", "CQ-002": "bank"}, clock=clock
    )
    date_by_clock(sidecar, clock)
    task = Project(root).find_task(spec.key)
    assert task is not None
    date_by_clock(user_response_export.attach_clarification(root, task)[0], clock)


def _task_currency_rounding(root: Path, clock: DemoClock) -> None:
    """payments/currency-rounding: preselected-validation mode (no sidecar) and planning prepare."""
    spec = TaskSpec(
        PROJECT_ID,
        "payments",
        "currency-rounding",
        "option-selection",
        "feature",
        "Round currencies per ISO 4217",
        "JPY amounts show two decimals.",
    )
    clock.wait_until(on(4, "14:05"))
    troot = create_task(root, spec, clock)
    run = team_run(root, troot, "option-selection", [ANALYSERS[1], WRITER], clock, slot=slot(4, "14:20", 18))
    rep = write_report(
        run,
        "Rounding approach",
        "The owner preselected IO-002; validated.",
        option_candidates("preselected-validation", "IO-002"),
        clock=clock,
    )
    close(run, rep, clock, next_phase=layout.IMPLEMENTATION_PLANNING, rationale="direction preselected and validated")
    task = Project(root).find_task(spec.key)
    assert task is not None
    date_by_clock(direction.planning_prepare(root, task, clock), clock)


def _task_index_rebuild(root: Path, clock: DemoClock) -> None:
    """search/index-rebuild: a historical 2.0 markerless legacy plan (resolves legacy-unassessed)."""
    spec = TaskSpec(
        PROJECT_ID,
        "search",
        "index-rebuild",
        layout.IMPLEMENTATION_PLANNING,
        "refactor",
        "Rebuild the search index online",
        "Reindexing takes the search service down for 40 minutes.",
    )
    clock.wait_until(on(3, "15:30"))
    troot = create_task(root, spec, clock)
    run = team_run(
        root,
        troot,
        layout.IMPLEMENTATION_PLANNING,
        [ANALYSERS[0], WRITER],
        clock,
        v2=False,
        rich_team=False,
        slot=slot(3, "15:45", 55),
    )
    rep = write_report(
        run, "Online reindex plan", "Dual-write then swap aliases.", retry_plan(False), version="2.0", clock=clock
    )
    date_by_clock(rep, clock)  # a historical report records no generatedAt: it is dated by its mtime
    close(
        run, rep, clock, next_phase="implementation", next_status="pending", rationale="legacy plan proceeds unassessed"
    )


def _task_query_latency(root: Path, clock: DemoClock) -> None:
    """search/query-latency: a v1 run whose older artifacts still lie flat in runs/analysis/."""
    spec = TaskSpec(
        PROJECT_ID,
        "search",
        "query-latency",
        "analysis",
        "performance",
        "Find the p99 query latency regression",
        "p99 went from 80ms to 240ms after the 3.2 release.",
    )
    clock.wait_until(on(3, "13:00"))
    troot = create_task(root, spec, clock)
    run = team_run(
        root, troot, "analysis", [ANALYSERS[0], WRITER], clock, v2=False, rich_team=False, slot=slot(3, "13:15", 36)
    )
    rep = write_report(
        run,
        "Query latency",
        "A missing index on tenant_id.",
        {
            "analysisFindings": [
                {
                    "findingId": "F-001",
                    "title": "Missing tenant_id index",
                    "severity": "high",
                    "detail": "Sequential scans on hits.",
                    "evidence": ["EXPLAIN output in run 001"],
                }
            ]
        },
        clock=clock,
    )
    close(run, rep, clock, next_phase="option-selection", rationale="cause found")
    # An earlier okstra wrote run artifacts flat at the top of the run dir; they wait for migration.
    flat = layout.run_dir(troot, "analysis")
    segment = "2026-10-01T08:00:00Z"
    writes.create_only_json(
        root,
        flat / names.build("run-manifest", task_type="analysis", seq=7),
        {
            "schemaVersion": "1.0",
            "taskKey": spec.key,
            "taskType": "analysis",
            "workCategory": "performance",
            "runDateTimeSegment": segment,
            "runDir": layout.rel(flat, root),
            "status": "completed",
        },
    )
    writes.create_only(root, flat / names.build("final-status", task_type="analysis", seq=7), b"completed\n")
    writes.create_only(
        root, flat / names.build("lead-prompt", task_type="analysis", seq=7), b"# Lead prompt (legacy layout)\n"
    )


def _task_stale_cache(root: Path, clock: DemoClock) -> None:
    """search/stale-cache: single-stage final verification with a fix cycle and a corrected next-phase pointer."""
    spec = TaskSpec(
        PROJECT_ID,
        "search",
        "stale-cache",
        "final-verification",
        "bugfix",
        "Verify the stale cache fix",
        "Results stayed stale for 10 minutes after an edit.",
    )
    clock.wait_until(on(3, "10:20"))
    troot = create_task(root, spec, clock)
    record_fix_cycle(
        root,
        troot,
        tm.FixCycleEvent(
            event="opened",
            cycle_id="fc-1",
            cycle=1,
            symptom="cache not invalidated on edit",
            target_report="final-report-final-verification-001",
            at=iso(clock.now()),
        ),
    )
    record_fix_cycle(root, troot, tm.FixCycleEvent(event="closed", cycle_id="fc-1", cycle=1, at=iso(clock.now())))
    record_fix_cycle(
        root,
        troot,
        tm.FixCycleEvent(
            event="opened",
            cycle_id="fc-2",
            cycle=2,
            symptom="TTL still 10 minutes in one region",
            target_report="final-report-final-verification-002",
            at=iso(clock.now()),
        ),
    )
    run = team_run(
        root,
        troot,
        "final-verification",
        [VERIFIER, WRITER],
        clock,
        stage=1,
        fix_cycle_id="fc-2",
        slot=slot(3, "10:40", 22),
    )
    rep = write_report(
        run,
        "Stale cache verification",
        "One region still serves stale results.",
        {
            "verificationVerdict": {
                "verdict": "conditional",
                "criteria": [
                    {"criterion": "Edit invalidates cache", "result": "met", "evidence": "trace 88"},
                    {"criterion": "All regions within 5s", "result": "unmet", "evidence": "eu-west p99 9m"},
                ],
            }
        },
        clock=clock,
    )
    authored = tm.NextRecommendedPhase(phase="final-verification", status="ready", rationale="lead: looks done")
    applied = tm.NextRecommendedPhase(
        phase="implementation", status="ready", rationale="verdict is conditional: fix eu-west first"
    )
    close(
        run,
        rep,
        clock,
        next_phase="implementation",
        rationale=applied.rationale,
        correction=tm.NextPhaseCorrection(authored=authored, applied=applied),
    )


def _task_ci_speedup(root: Path, clock: DemoClock) -> None:
    """platform/ci-speedup: an implementation stage still in progress (no report yet)."""
    spec = TaskSpec(
        PROJECT_ID,
        "platform",
        "ci-speedup",
        "implementation",
        "infrastructure",
        "Halve CI time",
        "CI takes 38 minutes; target 19.",
    )
    clock.wait_until(on(2, "15:30"))
    troot = create_task(root, spec, clock)
    team_run(root, troot, "implementation", [EXECUTOR, VERIFIER], clock, stage=1, slot=slot(2, "15:50", 80))
    # Its files are dated by the demo's clock: the workers went quiet then (the now-running view shows it stalled).
    for folder, _dirs, files in os.walk(layout.run_dir(troot, "implementation", 1)):
        for name in files:
            date_by_clock(Path(folder) / name, clock)


def _task_observability(root: Path, clock: DemoClock) -> None:
    """platform/observability: an analysis that ended in error twice and is blocked."""
    spec = TaskSpec(
        PROJECT_ID,
        "platform",
        "observability",
        "analysis",
        "investigation",
        "Trace gaps in checkout",
        "Spans are missing between the API and the payment worker.",
    )
    troot = create_task(root, spec, clock)
    failures = (
        (slot(2, "09:20", 48), "timeout", "worker timed out after 900s"),
        (slot(2, "13:30", 12), "collector-unreachable", "the tracing collector refused the connection"),
    )
    for when, code, message in failures:
        # The rerun fails too, sooner: the collector is still down.
        run = team_run(root, troot, "analysis", [ANALYSERS[2], WRITER], clock, rich_team=False, slot=when)
        writes.append_jsonl(
            root,
            run.path("errors-log"),
            ErrorRecord(at=iso(clock.now()), worker_id="gemini-analyser", code=code, message=message).dump(),
        )
        close(
            run,
            None,
            clock,
            status="error",
            next_phase="analysis",
            next_status="blocked",
            rationale="rerun after the tracing collector is reachable",
        )


RICH_TASKS: list[Callable[[Path, DemoClock], None]] = [
    _task_observability,
    _task_ci_speedup,
    _task_stale_cache,
    _task_query_latency,
    _task_index_rebuild,
    _task_currency_rounding,
    _task_refund_ledger,
    _task_retry_policy,
]


def write_invocations(root: Path, clock: DemoClock) -> None:
    invocations.start(
        root,
        "code-review",
        "review-retry-policy-branch",
        "Review the diff of branch fix/retry-policy for correctness.\n",
        "# Code review\n\nReview the attached diff.\n",
        clock,
    )
    invocations.complete(
        root,
        "code-review",
        "review-retry-policy-branch",
        "LGTM with one nit: name the key column `idempotency_key`.",
        clock,
    )
    invocations.start(
        root,
        "schedule-verification",
        "schedule-2026-w48",
        "Verify the narrative of the week 48 schedule.\n",
        "# Schedule verification\n\nCheck dates and owners.\n",
        clock,
    )
    invocations.complete(
        root, "schedule-verification", "schedule-2026-w48", "Schedule narrative verified: 0 issues.", clock
    )
    invocations.start(
        root, "code-review", "review-ci-speedup", "Review branch ci/speedup.\n", "# Code review\n\nPending.\n", clock
    )


def write_manager(root: Path, clock: DemoClock) -> None:
    home = layout.demo_home(root)
    billing = root / "services" / "billing"
    writes.ensure_dir(root, billing)
    manager.create_manager(home, "release-train", "Q4 release train", clock)
    manager.register_project(home, "release-train", PROJECT_ID, root, role="lead", tags=["checkout"], clock=clock)
    manager.register_project(home, "release-train", "billing", billing, role="member", tags=["invoicing"], clock=clock)
    folder = manager.create_manager_task(
        home,
        "release-train",
        "release-train:q4-release:payments-hardening",
        "Payments hardening",
        ["fix retries", "reconcile refunds", "bill correctly"],
        [
            mm.ChildAssignment(
                project_id=PROJECT_ID,
                child_task_id="retry-policy",
                child_task_key="demo-shop:payments:retry-policy",
                status="completed",
            ),
            mm.ChildAssignment(
                project_id="billing",
                child_task_id="invoice-rounding",
                child_task_key="billing:invoices:invoice-rounding",
                status="assigned",
            ),
        ],
        clock,
    )
    manager.add_directive(home, folder, "shared", "Every change ships behind a flag.", clock=clock)
    manager.add_directive(
        home, folder, "project", "Coordinate rounding with demo-shop.", project_id="billing", clock=clock
    )
    manager.write_snapshots(
        home,
        folder,
        {
            PROJECT_ID: mm.ProjectSnapshot(
                task_key="demo-shop:payments:retry-policy",
                current_status="completed",
                latest_run_status="completed",
                synced_at=iso(clock.now()),
            )
        },
    )
    manager.add_event(
        home, folder, "child-launch-prepared", {"projectId": "billing", "childTaskId": "invoice-rounding"}, clock
    )
    manager.write_child_context(
        home,
        folder,
        "billing",
        "invoice-rounding",
        "# Child context\n\nSibling report (read-only source material): demo-shop retry-policy final "
        "verification passed.\n",
    )
