"""The demo project, made by driving the core's own write API through whole task lifecycles.

``generate(DIR)`` writes a small, rich project (4 task groups, 13 tasks, every
task type, every artifact family the contract names) with canned agent
outputs; ``generate(DIR, tasks=N)`` adds bulk tasks of the same shapes for
benchmarks. Times come from a stepping clock, so two demos differ only in
their absolute paths.

Layout of the result:

* ``DIR/`` is the project root (``DIR/.okstra/``);
* ``DIR/.okstra-home/`` is the demo's manager home (use it as ``OKSTRA_HOME``);
* ``DIR/services/billing/`` is a second project registered with the manager.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from . import layout, names, writes
from .digests import pretty_json, sha256_bytes
from .errors import WriteRefused
from .models import manager as mm
from .models import task as tm
from .models.convergence import (
    AdapterOutcome,
    ConvergenceGroups,
    FindingGroup,
    GroupedFinding,
    ParsedVote,
    PlannedDispatch,
    RoundPlan,
    RoundResults,
)
from .models.report import StageEvidence
from .models.run import AgentDispatch, ErrorRecord, InvocationAssignment, WorkerDispatch
from .progress import Progress
from .render import derive_siblings
from .store import Project
from .workflows import (
    carry,
    convergence,
    design_prep,
    direction,
    invocations,
    manager,
    prompts,
    teamstate,
    user_response_export,
)
from .workflows.common import Clock, iso
from .workflows.tasks import (
    Run,
    TaskSpec,
    WorkerSpec,
    append_recap,
    close_run,
    create_task,
    prepare_run,
    record_fix_cycle,
)

PROJECT_ID = "demo-shop"
#: The largest demo asked for in one go (the benchmark trees use 10,000): a typo must not run until killed.
MAX_TASKS = 1_000_000
START = dt.datetime(2026, 11, 2, 9, 0, 0, tzinfo=dt.UTC)

ANALYSERS = [
    WorkerSpec("claude-analyser", "analyser", "claude", "claude-sonnet"),
    WorkerSpec("codex-analyser", "analyser", "codex", "gpt-codex"),
    WorkerSpec("gemini-analyser", "analyser", "antigravity", "gemini-pro"),
]
WRITER = WorkerSpec("report-writer", "report-writer", "claude", "claude-sonnet", runner="native-session")
EXECUTOR = WorkerSpec("codex-executor", "executor", "codex", "gpt-codex")
VERIFIER = WorkerSpec("claude-verifier", "verifier", "claude", "claude-sonnet")


# ------------------------------------------------------------------ reports


def _report(
    run: Run,
    title: str,
    summary: str,
    deliverable: dict[str, Any],
    *,
    version: str = "3.0",
    language: str = "en",
    clarification: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
    clock: Clock,
) -> Path:
    value: dict[str, Any] = {
        "schemaVersion": version,
        "taskKey": run.task_key,
        "taskType": run.task_type,
        "title": title,
        "summary": summary,
        **deliverable,
        "clarificationItems": clarification or [],
    }
    if version == "3.0":
        value.update({"reportLanguage": language, "runDateTimeSegment": run.segment, "generatedAt": iso(clock.now())})
    value.update(extra or {})
    path = run.path("final-report-data")
    writes.create_only_json(run.project_root, path, value)
    _derive_readable(run, path)
    return path


def _derive_readable(run: Run, data_path: Path) -> None:
    """Phase 7: derive the HTML sibling and the reading copy."""
    derive_siblings(run.project_root, data_path)


ANALYSIS_FINDINGS = {
    "analysisFindings": [
        {
            "findingId": "F-001",
            "title": "Retries are not idempotent",
            "severity": "high",
            "detail": "The payment retry path re-submits charges without an idempotency key.",
            "evidence": ["src/payments/retry.py:41", "logs/2026-10-29-double-charge.txt"],
        },
        {
            "findingId": "F-002",
            "title": "Backoff ignores Retry-After",
            "severity": "medium",
            "detail": "The gateway's Retry-After header is parsed but never used.",
            "evidence": ["src/payments/backoff.py:17"],
        },
        {
            "findingId": "F-003",
            "title": "Timeout budget exceeds the SLA",
            "severity": "low",
            "detail": "Five retries at 8s exceed the 30s checkout SLA.",
            "evidence": ["config/payments.yaml:12"],
        },
    ]
}


def _option_candidates(mode: str, preselected: str | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {
        "mode": mode,
        "candidates": [
            {
                "optionId": "IO-001",
                "title": "Idempotency keys at the gateway client",
                "summary": "Generate a key per logical charge and send it on every attempt.",
                "pros": ["Small change", "Gateway already supports keys"],
                "cons": ["Keys must be persisted"],
                "risk": "low",
            },
            {
                "optionId": "IO-002",
                "title": "Outbox with exactly-once dispatcher",
                "summary": "Write charges to an outbox table and dispatch them from one worker.",
                "pros": ["Survives crashes"],
                "cons": ["New table and worker", "Migration"],
                "risk": "medium",
            },
            {
                "optionId": "IO-003",
                "title": "Disable automatic retries",
                "summary": "Surface failures to the user and let them retry.",
                "pros": ["Trivial"],
                "cons": ["Worse conversion"],
                "risk": "high",
            },
        ],
        "recommendation": "IO-001",
    }
    if preselected:
        value["preselected"] = {
            "optionId": preselected,
            "confirmedBy": "product-owner",
            "confirmedAt": "2026-11-01T10:00:00Z",
        }
    return {"optionCandidates": value}


def _plan(assess: bool, variant: int = 1) -> dict[str, Any]:
    def assessment(item: str, risk: str) -> dict[str, Any] | None:
        if not assess:
            return None
        return (
            {"item": item, "risk": risk, "unknowns": ["storage engine" if variant == 1 else "storage engine and TTL"]}
            if item == "PREP-002"
            else {"item": item, "risk": risk}
        )

    items: list[dict[str, Any]] = [
        {
            "prepId": "PREP-001",
            "title": "Idempotency key format",
            "status": "provisional",
            "question": "Which key format do we send to the gateway?",
            "fields": ["format", "rationale"],
            "assessment": assessment("PREP-001", "low"),
        },
        {
            "prepId": "PREP-002",
            "title": "Key storage and expiry",
            "status": "blocked",
            "question": "Where are keys stored, and for how long?",
            "fields": ["store", "ttl"],
            "assessment": assessment("PREP-002", "medium"),
        },
        {
            "prepId": "PREP-003",
            "title": "Client library version",
            "status": "confirmed",
            "question": "",
            "fields": [],
            "assessment": assessment("PREP-003", "low"),
        },
    ]
    for item in items:
        if item["assessment"] is None:
            del item["assessment"]
    return {
        "implementationPlan": {
            "stages": [
                {
                    "stage": 1,
                    "title": "Key generation",
                    "goal": "Generate and persist idempotency keys",
                    "tasks": ["key module", "unit tests"],
                },
                {
                    "stage": 2,
                    "title": "Client wiring",
                    "goal": "Send keys on every attempt",
                    "tasks": ["client change", "contract test"],
                },
                {
                    "stage": 3,
                    "title": "Backoff",
                    "goal": "Honour Retry-After",
                    "tasks": ["backoff change", "load test"],
                },
            ],
            "designItems": items,
        }
    }


# ---------------------------------------------------------------- lifecycle


_PREAMBLES = {
    "lead": "",
    "analysis": "templates/worker-prompt-preamble.md",
    "implementation": "templates/implementation-worker-preamble.md",
    "report-writing": "templates/report-writer-prompt-preamble.md",
}

_IDENTITY_FIELDS = ("participant_ref", "role_execution_ref", "invocation_ref", "attempt", "execution_label")


def _publish_prompts(run: Run, workers: list[WorkerSpec], clock: Clock, instruction_rel: str) -> None:
    """Publish every participant's prompt, each followed by its transcript log."""
    for assignment in run.manifest.invocation_assignments:
        role = (
            "lead"
            if assignment.worker_id == "lead"
            else next(w.role for w in workers if w.worker_id == assignment.worker_id)
        )
        preamble = _PREAMBLES.get(assignment.audience or "", "")
        body = (
            f"# {assignment.worker_id} prompt for {run.task_key}\n\n"
            f"**Worker Preamble Path:** {preamble or 'n/a'}\n"
            f"**Worker Error Contract Path:** templates/worker-error-contract.md\n\n"
            f"Task type: {run.task_type}{f' (stage {run.stage})' if run.stage else ''}\n"
            f"Read {instruction_rel} first, then report findings with evidence.\n"
        )
        published = prompts.publish_prompt(
            run.project_root,
            run.manifest_path,
            assignment.assignment_ref,
            body,
            duty_id=role,
            instruction_rel=instruction_rel,
            clock=clock,
        )
        transcript = "".join(f"[{iso(clock.now())}] {assignment.worker_id}: step {i} done\n" for i in range(1, 4))
        log = published.prompt.with_name(names.log_name_for(published.prompt.name))
        writes.create_only(run.project_root, log, transcript.encode())


def _dispatch(
    run: Run, worker: WorkerSpec, index: int, inv: InvocationAssignment, clock: Clock, v2: bool, rich_team: bool
) -> str:
    """Record the worker's dispatch (re-sent once for the first worker of a rich team); return its id."""
    ident = {k: getattr(inv, k) for k in _IDENTITY_FIELDS} if v2 else {}
    dispatch_id = f"d-{run.task_type}-{worker.worker_id}"
    if worker.role == "report-writer":
        agent = AgentDispatch(
            dispatch_id=dispatch_id,
            worker_id=worker.worker_id,
            invocation_id=inv.invocation_id,
            prompt_path=inv.prompt_path,
            dispatched_at=iso(clock.now()),
            status="completed",
            **ident,
        )
        teamstate.upsert_agent_dispatch(run.project_root, run.team_state_path, agent)
        return dispatch_id
    row = WorkerDispatch(
        dispatch_id=dispatch_id,
        worker_id=worker.worker_id,
        invocation_id=inv.invocation_id,
        session_id=f"sess-{index:02d}a" if worker.provider != "antigravity" else "",
        pane_id=f"%{index}",
        prompt_path=inv.prompt_path,
        dispatched_at=iso(clock.now()),
        status="in-progress",
        **ident,
    )
    teamstate.upsert_worker_dispatch(run.project_root, run.team_state_path, row)
    if rich_team and index == 1:
        # The first worker's dispatch is re-sent: its row is replaced in place, pane and all.
        resent = {
            "session_id": f"sess-{index:02d}b",
            "pane_id": f"%{index + 10}",
            "dispatched_at": iso(clock.now()),
            "status": "completed",
        }
        teamstate.upsert_worker_dispatch(run.project_root, run.team_state_path, row.model_copy(update=resent))
    return dispatch_id


def _write_results(run: Run, worker: WorkerSpec, seq: int, instruction_rel: str) -> Path:
    """The worker's result and reading-confirmation audit; returns the result."""
    folder = run.run_dir / "worker-results"
    result = folder / names.build("worker-result", task_type=run.task_type, seq=seq, worker_id=worker.worker_id)
    audit = folder / names.build("worker-audit", task_type=run.task_type, seq=seq, worker_id=worker.worker_id)
    text = f"# {worker.worker_id} result\n\nStatus: completed\n\nSee the final report.\n"
    writes.create_only(run.project_root, result, text.encode())
    writes.create_only(run.project_root, audit, f"# Reading confirmation\n\n- {instruction_rel}: read\n".encode())
    return result


def _probe_rows(run: Run, clock: Clock, v2: bool) -> None:
    """A probe launch without a dispatch id has no key to collapse on: such rows stack."""
    ident = (
        {
            "participant_ref": "participant:probe",
            "role_execution_ref": "role:probe:0",
            "invocation_ref": "invocation:probe",
            "attempt": 1,
            "execution_label": "probe",
        }
        if v2
        else {}
    )
    for _ in range(2):
        row = WorkerDispatch(
            worker_id="probe", session_id="", dispatched_at=iso(clock.now()), status="not-run", **ident
        )
        teamstate.upsert_worker_dispatch(run.project_root, run.team_state_path, row)


def _run(
    project_root: Path,
    task_root: Path,
    task_type: str,
    workers: list[WorkerSpec],
    clock: Clock,
    *,
    stage: int | None = None,
    v2: bool = True,
    fix_cycle_id: str | None = None,
    rich_team: bool = True,
) -> Run:
    """Prepare a run, publish its prompts with transcripts, and record the team's dispatches and results."""
    run = prepare_run(
        project_root, task_root, task_type, stage=stage, workers=workers, clock=clock, v2=v2, fix_cycle_id=fix_cycle_id
    )
    instruction_rel = layout.rel(layout.instruction_set_dir(task_root) / "analysis-packet.md", project_root)
    _publish_prompts(run, workers, clock, instruction_rel)
    result_seq = run.seqs("worker-results")
    for index, worker in enumerate(workers, start=1):
        inv = next(a for a in run.manifest.invocation_assignments if a.worker_id == worker.worker_id)
        dispatch_id = _dispatch(run, worker, index, inv, clock, v2, rich_team)
        result = _write_results(run, worker, result_seq, instruction_rel)
        teamstate.link_result(
            project_root, run.team_state_path, run.manifest, dispatch_id, run.rel(result), iso(clock.now())
        )
    if rich_team:
        _probe_rows(run, clock, v2)
    return run


def _close(
    run: Run,
    report: Path | None,
    clock: Clock,
    *,
    status: str = "completed",
    next_phase: str | None = None,
    next_status: str = "ready",
    rationale: str = "",
    correction: tm.NextPhaseCorrection | None = None,
    awaiting: bool = False,
    phase_outcome: dict[str, str] | None = None,
    catalog: bool = True,
) -> None:
    pointer = tm.NextRecommendedPhase(phase=next_phase, status=next_status, rationale=rationale)
    close_run(
        run,
        status,
        report_path=report,
        next_phase=pointer,
        correction=correction,
        awaiting_approval=awaiting,
        phase_outcome=phase_outcome,
        clock=clock,
        catalog=catalog,
    )


def _demo_groups(run: Run, roster: list[str]) -> ConvergenceGroups:
    """Round 0: three finding groups over the analysers' findings."""
    return ConvergenceGroups(
        schema_version="1.2",
        task_key=run.task_key,
        run_date_time_segment=run.segment,
        roster=roster,
        groups=[
            FindingGroup(
                group_id="G-001",
                title="Non-idempotent retries",
                tickets=["PAY-812"],
                findings=[
                    GroupedFinding(
                        finding_id="F-001", analyser_id="claude-analyser", summary="retry re-submits charges"
                    ),
                    GroupedFinding(finding_id="F-001b", analyser_id="codex-analyser", summary="no idempotency key"),
                ],
            ),
            FindingGroup(
                group_id="G-002",
                title="Retry-After ignored",
                tickets=["PAY-815"],
                findings=[
                    GroupedFinding(finding_id="F-002", analyser_id="gemini-analyser", summary="header parsed, unused")
                ],
            ),
            FindingGroup(
                group_id="G-003",
                title="SLA budget",
                tickets=[],
                findings=[
                    GroupedFinding(finding_id="F-003", analyser_id="codex-analyser", summary="retry budget > SLA")
                ],
            ),
        ],
    )


_VOTES_BY_ROUND: dict[int, dict[str, dict[str, str]]] = {
    1: {
        "claude-analyser": {"G-001": "agree", "G-002": "agree", "G-003": "disagree"},
        "codex-analyser": {"G-001": "agree", "G-002": "abstain", "G-003": "agree"},
        "gemini-analyser": {"G-001": "agree", "G-002": "agree", "G-003": "abstain"},
    },
    2: {
        "claude-analyser": {"G-003": "disagree"},
        "codex-analyser": {"G-003": "disagree"},
        "gemini-analyser": {"G-003": "abstain"},
    },
}


def _convergence_round(
    run: Run, seq: int, prompt_seq: int, roster: list[str], rnd: int, votes: dict[str, dict[str, str]], clock: Clock
) -> None:
    """One reverify round: a prompt and transcript per analyser, the round plan, then the parsed votes."""
    root = run.project_root
    dispatches = []
    for analyser, ballot in votes.items():
        prompt = (
            run.run_dir
            / "prompts"
            / names.build("reverify-prompt", task_type=run.task_type, seq=prompt_seq, worker_id=analyser, round=rnd)
        )
        writes.create_only(root, prompt, f"# Reverify round {rnd}\n\nVote on: {', '.join(ballot)}\n".encode())
        writes.create_only(
            root, prompt.with_name(names.log_name_for(prompt.name)), f"[{iso(clock.now())}] votes cast\n".encode()
        )
        dispatches.append(PlannedDispatch(analyser_id=analyser, group_ids=list(ballot), prompt_path=run.rel(prompt)))
    convergence.write_round_plan(
        root,
        run.run_dir,
        run.task_type,
        seq,
        RoundPlan(
            schema_version="1.2", run_date_time_segment=run.segment, round=rnd, roster=roster, dispatches=dispatches
        ),
    )
    results = RoundResults(
        schema_version="1.2",
        run_date_time_segment=run.segment,
        round=rnd,
        outcomes=[
            AdapterOutcome(
                analyser_id=a,
                status="completed",
                votes=[ParsedVote(group_id=g, vote=v, rationale=f"round {rnd} review") for g, v in b.items()],
            )
            for a, b in votes.items()
        ],
    )
    convergence.write_round_results(root, run.run_dir, run.task_type, seq, results, roster)


def _convergence(run: Run, clock: Clock) -> None:
    """Round 0 groups, two reverify rounds with plans, prompts and votes, then the terminal final."""
    root = run.project_root
    seq = run.seqs("state")
    roster = [w.worker_id for w in ANALYSERS]
    convergence.write_groups(root, run.run_dir, run.task_type, seq, _demo_groups(run, roster))
    convergence.seed_work(root, run.run_dir, run.task_type, seq, clock=clock)
    prompt_seq = run.seqs("prompts")
    for rnd, votes in _VOTES_BY_ROUND.items():
        _convergence_round(run, seq, prompt_seq, roster, rnd, votes, clock)
    convergence.finalize(root, run.run_dir, run.task_type, seq, "converged", clock)


# ------------------------------------------------------------------- tasks


def _task_retry_policy(root: Path, clock: Clock) -> None:
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
    troot = create_task(root, spec, clock)
    _retry_analyses(root, troot, clock)
    selected_direction = _retry_direction(root, troot, spec, clock)
    plan = _retry_planning(root, troot, spec, selected_direction, clock)
    _retry_stages(root, troot, plan, clock)
    _retry_final_verification(root, troot, clock)


def _retry_analyses(root: Path, troot: Path, clock: Clock) -> None:
    """An analysis with convergence and an error log, then its rerun in the same run dir."""
    first = _run(root, troot, "analysis", [*ANALYSERS, WRITER], clock)
    _convergence(first, clock)
    r1 = _report(
        first,
        "Payment retry analysis",
        "Retries re-submit charges without idempotency keys.",
        ANALYSIS_FINDINGS,
        extra={
            "convergence": {
                "terminalState": "converged",
                "rounds": 2,
                "confirmed": 2,
                "rejected": 1,
                "disputed": 0,
                "statePath": first.rel(first.path("convergence-final")),
            }
        },
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
    _close(first, r1, clock, next_phase="analysis", rationale="rerun with the gateway logs attached")
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
    second = _run(root, troot, "analysis", [*ANALYSERS[:2], WRITER], clock)
    r2 = _report(
        second,
        "Payment retry analysis (with gateway logs)",
        "Confirmed: retries lack idempotency keys.",
        ANALYSIS_FINDINGS,
        clock=clock,
    )
    _close(second, r2, clock, next_phase="option-selection", rationale="findings confirmed")


def _retry_direction(root: Path, troot: Path, spec: TaskSpec, clock: Clock) -> str:
    """The option comparison, the recorded choice and the selected-direction snapshot (returned, project-relative)."""
    opt = _run(root, troot, "option-selection", [*ANALYSERS[:2], WRITER], clock)
    r3 = _report(
        opt, "How to make retries safe", "Three options compared.", _option_candidates("comparison"), clock=clock
    )
    _close(
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
    _date_by_clock(direction.select_direction(root, task, "IO-001", clock=clock), clock)
    task = Project(root).find_task(spec.key)
    assert task is not None
    sd = direction.planning_prepare(root, task, clock)
    _date_by_clock(sd, clock)
    sd_rel = layout.rel(sd, root)
    return sd_rel


def _retry_planning(root: Path, troot: Path, spec: TaskSpec, sd_rel: str, clock: Clock) -> Path:
    """Two planning runs with design-prep answers, a stale one and a duplicate revision; returns the approved plan."""
    plan1 = _run(root, troot, layout.IMPLEMENTATION_PLANNING, [ANALYSERS[0], WRITER], clock)
    p1 = _report(
        plan1,
        "Retry safety plan",
        "Three stages; two design items need input.",
        _plan(True, 1),
        extra={"selectedDirectionRef": sd_rel},
        clock=clock,
    )
    _close(
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
    plan2 = _run(root, troot, layout.IMPLEMENTATION_PLANNING, [ANALYSERS[0], WRITER], clock)
    p2 = _report(
        plan2,
        "Retry safety plan (revised)",
        "Storage question widened to include TTL.",
        _plan(True, 2),
        extra={"selectedDirectionRef": sd_rel},
        clock=clock,
    )
    _close(plan2, p2, clock, next_phase="implementation", next_status="ready", rationale="plan approved")
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


def _retry_stages(root: Path, troot: Path, plan: Path, clock: Clock) -> None:
    """Implementation stages 1-3, each carrying its evidence and consuming the approved plan."""
    plan_rel = layout.rel(plan, root)
    for stage in (1, 2, 3):
        impl = _run(root, troot, "implementation", [EXECUTOR, VERIFIER], clock, stage=stage)
        rep = _report(
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
        _close(
            impl,
            rep,
            clock,
            next_phase="implementation" if stage < 3 else "final-verification",
            rationale=f"stage {stage} passed",
            phase_outcome={"implementation": "completed"} if stage == 3 else None,
        )


def _retry_final_verification(root: Path, troot: Path, clock: Clock) -> None:
    fv = _run(root, troot, "final-verification", [VERIFIER, WRITER], clock)
    rep = _report(
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
    _close(fv, rep, clock, next_phase=None, next_status="terminal", rationale="task complete")


def _task_refund_ledger(root: Path, clock: Clock) -> None:
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
    troot = create_task(root, spec, clock)
    run = _run(root, troot, "analysis", [*ANALYSERS[:2], WRITER], clock)
    rep = _report(
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
        clock=clock,
    )
    _close(
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
    _date_by_clock(sidecar, clock)
    task = Project(root).find_task(spec.key)
    assert task is not None
    _date_by_clock(user_response_export.attach_clarification(root, task)[0], clock)


def _task_currency_rounding(root: Path, clock: Clock) -> None:
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
    troot = create_task(root, spec, clock)
    run = _run(root, troot, "option-selection", [ANALYSERS[1], WRITER], clock)
    rep = _report(
        run,
        "Rounding approach",
        "The owner preselected IO-002; validated.",
        _option_candidates("preselected-validation", "IO-002"),
        clock=clock,
    )
    _close(run, rep, clock, next_phase=layout.IMPLEMENTATION_PLANNING, rationale="direction preselected and validated")
    task = Project(root).find_task(spec.key)
    assert task is not None
    _date_by_clock(direction.planning_prepare(root, task, clock), clock)


def _task_index_rebuild(root: Path, clock: Clock) -> None:
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
    troot = create_task(root, spec, clock)
    run = _run(root, troot, layout.IMPLEMENTATION_PLANNING, [ANALYSERS[0], WRITER], clock, v2=False, rich_team=False)
    rep = _report(run, "Online reindex plan", "Dual-write then swap aliases.", _plan(False), version="2.0", clock=clock)
    _date_by_clock(rep, clock)  # a historical report records no generatedAt: it is dated by its mtime
    _close(
        run, rep, clock, next_phase="implementation", next_status="pending", rationale="legacy plan proceeds unassessed"
    )


def _task_query_latency(root: Path, clock: Clock) -> None:
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
    troot = create_task(root, spec, clock)
    run = _run(root, troot, "analysis", [ANALYSERS[0], WRITER], clock, v2=False, rich_team=False)
    rep = _report(
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
    _close(run, rep, clock, next_phase="option-selection", rationale="cause found")
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


def _task_stale_cache(root: Path, clock: Clock) -> None:
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
    run = _run(root, troot, "final-verification", [VERIFIER, WRITER], clock, stage=1, fix_cycle_id="fc-2")
    rep = _report(
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
    _close(
        run,
        rep,
        clock,
        next_phase="implementation",
        rationale=applied.rationale,
        correction=tm.NextPhaseCorrection(authored=authored, applied=applied),
    )


def _task_ci_speedup(root: Path, clock: Clock) -> None:
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
    troot = create_task(root, spec, clock)
    _run(root, troot, "implementation", [EXECUTOR, VERIFIER], clock, stage=1)
    # Its files are dated by the demo's clock: the workers went quiet then (the now-running view shows it stalled).
    for folder, _dirs, files in os.walk(layout.run_dir(troot, "implementation", 1)):
        for name in files:
            _date_by_clock(Path(folder) / name, clock)


def _task_observability(root: Path, clock: Clock) -> None:
    """platform/observability: an analysis that ended in error and is blocked."""
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
    run = _run(root, troot, "analysis", [ANALYSERS[2], WRITER], clock, rich_team=False)
    writes.append_jsonl(
        root,
        run.path("errors-log"),
        ErrorRecord(
            at=iso(clock.now()), worker_id="gemini-analyser", code="timeout", message="worker timed out after 900s"
        ).dump(),
    )
    _close(
        run,
        None,
        clock,
        status="error",
        next_phase="analysis",
        next_status="blocked",
        rationale="rerun after the tracing collector is reachable",
    )


RICH_TASKS: list[Callable[[Path, Clock], None]] = [
    _task_observability,
    _task_ci_speedup,
    _task_stale_cache,
    _task_query_latency,
    _task_index_rebuild,
    _task_currency_rounding,
    _task_refund_ledger,
    _task_retry_policy,
]


def _invocations(root: Path, clock: Clock) -> None:
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


def _manager(root: Path, clock: Clock) -> None:
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


# ---------------------------------------------------------- open decisions
#
# Tasks that wait for a person, one per kind the decisions inbox lists. They are
# made after everything above (on the same clock), so the earlier tasks keep
# their bytes, and they leave the latest-task pointer where it was.

OPEN_GROUP = "checkout"


def _pin_mtime(path: Path, clock: Clock) -> None:
    """Give a file the demo clock's next time: a sidecar records no time, and the inbox dates it by its mtime."""
    stamp = clock.now().timestamp()
    os.utime(path, (stamp, stamp))


def _date_by_clock(path: Path, clock: Clock) -> None:
    """Give a file that records no time (a sidecar, the selected direction, the attached answers, a historical
    report) the time of the write that made it, without stepping the clock: the activity view dates it so."""
    stamp = clock.last().timestamp()
    os.utime(path, (stamp, stamp))


def _open_spec(task_id: str, task_type: str, category: str, title: str, brief: str) -> TaskSpec:
    return TaskSpec(PROJECT_ID, OPEN_GROUP, task_id, task_type, category, title, brief)


FRAUD_OPTIONS: dict[str, Any] = {
    "optionCandidates": {
        "mode": "comparison",
        "candidates": [
            {
                "optionId": "IO-001",
                "title": "Rules in the checkout service",
                "summary": "Keep the fraud rules in code next to checkout and ship them with each release.",
                "pros": ["No new service", "Rules are reviewed like code"],
                "cons": ["A rule change needs a release"],
                "risk": "low",
            },
            {
                "optionId": "IO-002",
                "title": "Hosted rules engine",
                "summary": "Move the rules to the payment provider's hosted engine and call it before capture.",
                "pros": ["Analysts change rules without a release", "Shared signals across merchants"],
                "cons": ["Vendor lock-in", "One more network hop on checkout"],
                "risk": "medium",
            },
            {
                "optionId": "IO-003",
                "title": "Score with a model, review by hand",
                "summary": "Score every order with a model and queue the risky ones for manual review.",
                "pros": ["Catches new patterns"],
                "cons": ["Needs labelled data", "Review queue staffing"],
                "risk": "high",
            },
        ],
        "recommendation": "IO-002",
    }
}

ADDRESS_OPTIONS: dict[str, Any] = {
    "optionCandidates": {
        "mode": "comparison",
        "candidates": [
            {
                "optionId": "IO-001",
                "title": "Validate on submit only",
                "summary": "Check the address once when the order is placed.",
                "pros": ["One call per order"],
                "cons": ["Errors surface late"],
                "risk": "low",
            },
            {
                "optionId": "IO-002",
                "title": "Autocomplete while typing",
                "summary": "Suggest verified addresses as the customer types.",
                "pros": ["Fewer typos", "Faster checkout"],
                "cons": ["Per-keystroke API cost"],
                "risk": "medium",
            },
        ],
        "recommendation": "IO-002",
    }
}


def _task_fraud_rules(root: Path, clock: Clock) -> None:
    """checkout/fraud-rules: a comparison-mode option report nobody has chosen from yet (direction-choice)."""
    spec = _open_spec(
        "fraud-rules",
        "option-selection",
        "feature",
        "Choose where fraud rules run",
        "Chargebacks doubled since the spring sale; the rules live in three places.",
    )
    troot = create_task(root, spec, clock, point=False)
    run = _run(root, troot, "option-selection", [*ANALYSERS[:2], WRITER], clock, rich_team=False)
    rep = _report(
        run, "Where fraud rules run", "Three options compared; IO-002 recommended.", FRAUD_OPTIONS, clock=clock
    )
    _close(
        run,
        rep,
        clock,
        next_phase=layout.IMPLEMENTATION_PLANNING,
        next_status="blocked",
        rationale="waiting for the choice",
    )


def _task_address_validation(root: Path, clock: Clock) -> None:
    """checkout/address-validation: the choice is recorded but planning prepare has not run (planning-prepare)."""
    spec = _open_spec(
        "address-validation",
        "option-selection",
        "feature",
        "Validate shipping addresses",
        "One parcel in forty comes back undeliverable.",
    )
    troot = create_task(root, spec, clock, point=False)
    run = _run(root, troot, "option-selection", [ANALYSERS[1], WRITER], clock, rich_team=False)
    rep = _report(run, "Address validation approach", "Two options compared.", ADDRESS_OPTIONS, clock=clock)
    _close(
        run,
        rep,
        clock,
        next_phase=layout.IMPLEMENTATION_PLANNING,
        next_status="pending",
        rationale="choice made; prepare next",
    )
    task = Project(root).find_task(spec.key)
    assert task is not None
    _pin_mtime(direction.select_direction(root, task, "IO-002", clock=clock), clock)


def _task_tax_export(root: Path, clock: Clock) -> None:
    """checkout/tax-export: an analysis whose clarification questions are unanswered (clarification)."""
    spec = _open_spec(
        "tax-export",
        "analysis",
        "investigation",
        "Fix the quarterly tax export",
        "The VAT export disagrees with the ledger by 0.4%.",
    )
    troot = create_task(root, spec, clock, point=False)
    run = _run(root, troot, "analysis", [ANALYSERS[0], WRITER], clock, rich_team=False)
    rep = _report(
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
        clock=clock,
    )
    _close(run, rep, clock, next_phase="analysis", next_status="blocked", rationale="waiting for clarification answers")


def _cards_plan(variant: int) -> dict[str, Any]:
    """The saved-cards plan; the re-plan (variant 2) widens PREP-002's assessment, so its earlier answer goes stale."""
    unknowns = ["retention law per country"] if variant == 1 else ["retention law per country", "card expiry"]
    return {
        "implementationPlan": {
            "stages": [
                {
                    "stage": 1,
                    "title": "Token vault",
                    "goal": "Store card tokens, never card numbers",
                    "tasks": ["vault"],
                },
                {"stage": 2, "title": "Checkout", "goal": "Offer saved cards at checkout", "tasks": ["ui", "api"]},
            ],
            "designItems": [
                {
                    "prepId": "PREP-001",
                    "title": "Where card tokens live",
                    "status": "provisional",
                    "question": "Which vault holds the card tokens?",
                    "fields": ["vault", "rationale"],
                    "assessment": {"item": "PREP-001", "risk": "medium"},
                },
                {
                    "prepId": "PREP-002",
                    "title": "How long tokens are kept",
                    "status": "blocked",
                    "question": "How long is a token kept after the last order, and how is it deleted?",
                    "fields": ["retention", "deletion"],
                    "assessment": {"item": "PREP-002", "risk": "high", "unknowns": unknowns},
                },
                {
                    "prepId": "PREP-003",
                    "title": "Card form library",
                    "status": "confirmed",
                    "assessment": {"item": "PREP-003", "risk": "low"},
                },
            ],
        }
    }


def _task_saved_cards(root: Path, clock: Clock) -> None:
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
    troot = create_task(root, spec, clock, point=False)
    plan1 = _run(root, troot, layout.IMPLEMENTATION_PLANNING, [ANALYSERS[0], WRITER], clock, rich_team=False)
    p1 = _report(plan1, "Saved cards plan", "Two stages; two design items need input.", _cards_plan(1), clock=clock)
    _close(plan1, p1, clock, next_phase="implementation", next_status="pending", rationale="design items open")
    task = Project(root).find_task(spec.key)
    assert task is not None
    design_prep.materialize(root, task)
    answer = "## retention\n\n2 years\n\n## deletion\n\nNightly job\n"
    design_prep.confirm(root, task, "PREP-002", answer, confirmed_by="carol", clock=clock)
    plan2 = _run(root, troot, layout.IMPLEMENTATION_PLANNING, [ANALYSERS[0], WRITER], clock, rich_team=False)
    p2 = _report(
        plan2,
        "Saved cards plan (revised)",
        "Retention question widened to include card expiry; design items open.",
        _cards_plan(2),
        clock=clock,
    )
    _close(plan2, p2, clock, next_phase="implementation", next_status="pending", rationale="design items open")
    task = Project(root).find_task(spec.key)
    assert task is not None
    design_prep.materialize(root, task)
    report, item = design_prep.design_item(task, "PREP-001")
    rev = design_prep.next_revision(task, "PREP-001")
    answers = {"vault": "The payment provider's vault", "rationale": "Keeps card data out of our systems."}
    design_prep.write_input(root, report, item, rev, answers, confirmed_by="alice", clock=clock)
    answers = {"vault": "Our own HSM-backed vault", "rationale": "No provider lock-in."}
    design_prep.write_input(root, report, item, rev, answers, confirmed_by="bob", clock=clock)


def _task_receipt_emails(root: Path, clock: Clock) -> None:
    """checkout/receipt-emails: analysis done, the workflow awaits a person's approval (approval)."""
    spec = _open_spec(
        "receipt-emails",
        "analysis",
        "bugfix",
        "Stop duplicate receipt emails",
        "Some customers get two receipts for one order.",
    )
    troot = create_task(root, spec, clock, point=False)
    run = _run(root, troot, "analysis", [ANALYSERS[2], WRITER], clock, rich_team=False)
    rep = _report(
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
    _close(
        run,
        rep,
        clock,
        next_phase="option-selection",
        next_status="pending",
        rationale="findings ready: approve before options are drafted",
        awaiting=True,
    )


OPEN_TASKS: list[Callable[[Path, Clock], None]] = [
    _task_receipt_emails,
    _task_saved_cards,
    _task_tax_export,
    _task_address_validation,
    _task_fraud_rules,
]


# ---------------------------------------------------------------- bulk tasks
#
# Bulk tasks are made in two steps: one template task per task type is written
# through the API above (into a scratch project), then each bulk task is that
# template with its group and task id substituted, published with
# writes.populate_fresh_tree. The identity-bound digests of prompt metadata are
# recomputed by their owners, so a bulk task holds the same contract as the
# template.

BULK_TYPES = ("analysis", "option-selection", layout.IMPLEMENTATION_PLANNING, "implementation", "final-verification")
TPL_GROUP = "zzbulkgroup"


def _tpl_id(task_type: str) -> str:
    return f"zzbulktask-{task_type}"


#: Templates that leave a decision open, by the task type they stand in for: every
#: OPEN_BULK_EVERY-th bulk task of that type is one of them (design-prep items of the
#: implementation-planning template are open in every planning task already).
OPEN_BULK_TEMPLATES = {
    "analysis": "analysis-open",  # clarification questions nobody answered
    "option-selection": "option-selection-open",  # a comparison nobody chose from
    "final-verification": "final-verification-open",  # a verdict awaiting approval
}
OPEN_BULK_EVERY = 5


def _bulk_template_name(index: int) -> tuple[str, str]:
    """The task type of bulk task *index* and the template it is cloned from."""
    task_type = BULK_TYPES[index % len(BULK_TYPES)]
    if (index // len(BULK_TYPES)) % OPEN_BULK_EVERY == OPEN_BULK_EVERY - 1 and task_type in OPEN_BULK_TEMPLATES:
        return task_type, OPEN_BULK_TEMPLATES[task_type]
    return task_type, task_type


def _bulk_template(root: Path, task_type: str, clock: Clock, name: str | None = None) -> None:
    name = name or task_type
    spec = TaskSpec(
        PROJECT_ID,
        TPL_GROUP,
        _tpl_id(name),
        task_type,
        "feature",
        f"Bulk {_tpl_id(name)}",
        "Generated for scale.",
    )
    troot = create_task(root, spec, clock, point=False, catalog=False)
    stage = 1 if task_type == "implementation" else None
    workers = [ANALYSERS[0], WRITER] if task_type != "implementation" else [EXECUTOR, VERIFIER]
    run = _run(root, troot, task_type, workers, clock, stage=stage, rich_team=False)
    deliverables: dict[str, dict[str, Any]] = {
        "analysis": ANALYSIS_FINDINGS,
        "option-selection": _option_candidates("preselected-validation", "IO-001"),
        layout.IMPLEMENTATION_PLANNING: _plan(True),
        "implementation": {"implementationResults": {"stage": 1, "outcome": "passed"}},
        "final-verification": {"verificationVerdict": {"verdict": "pass"}},
    }
    deliverable = _option_candidates("comparison") if name == "option-selection-open" else deliverables[task_type]
    questions: list[dict[str, Any]] | None = None
    if name == "analysis-open":
        questions = [
            {
                "itemId": "CQ-001",
                "question": "Is the retry budget per charge or per order?",
                "options": ["charge", "order"],
            },
            {"itemId": "CQ-002", "question": "Which gateway logs may we keep, and for how long?"},
        ]
    rep = _report(run, spec.title, "Generated.", deliverable, clarification=questions, clock=clock)
    if name == task_type:
        _close(run, rep, clock, next_phase=None, next_status="terminal", rationale="done", catalog=False)
    elif name == "final-verification-open":
        _close(
            run,
            rep,
            clock,
            next_phase=None,
            next_status="terminal",
            rationale="verdict pass; closing the task needs sign-off",
            awaiting=True,
            catalog=False,
        )
    else:
        _close(
            run,
            rep,
            clock,
            next_phase=task_type,
            next_status="blocked",
            rationale="waiting for a person",
            catalog=False,
        )
    _write_task_index(root, troot)


def _write_task_index(project_root: Path, task_root: Path) -> None:
    """``task-index.md`` of a finished demo task, rendered by the owner behind ``okstra render-task-index``."""
    from . import reading
    from .render import render_task_index

    manifest = reading.load_model(layout.task_manifest_path(task_root), tm.TaskManifest, root=project_root)
    if isinstance(manifest, reading.LoadError):
        raise WriteRefused(manifest.path, manifest.reason)
    writes.create_only(project_root, layout.task_index_path(task_root), render_task_index(manifest).encode("utf-8"))


def _read_tree(folder: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, dirs, files in os.walk(folder):
        # Seq claims matter only while an execution is allocating; a finished
        # task's artifacts carry their seqs, so clones leave the claims out.
        dirs[:] = [d for d in dirs if d not in (layout.SEQ_CLAIMS_DIR, layout.LOCKS_DIR)]
        for name in files:
            if name.endswith(layout.LOCK_SUFFIX):
                continue
            full = os.path.join(dirpath, name)
            with open(full, "rb") as fh:
                out[os.path.relpath(full, folder)] = fh.read()
    return out


def _clone(root: Path, template: dict[str, bytes], name: str, group: str, task_id: str) -> int:
    old_id, new_id = _tpl_id(name).encode(), task_id.encode()
    old_group, new_group = TPL_GROUP.encode(), group.encode()
    troot = layout.task_root(root, group, task_id)
    files: dict[Path, bytes] = {}
    for relpath, data in template.items():
        files[troot / relpath] = data.replace(old_id, new_id).replace(old_group, new_group)
    manifests = {p: d for p, d in files.items() if p.name.startswith("run-manifest-")}
    for path, data in list(files.items()):
        if not path.name.endswith(".meta.json"):
            continue
        meta = json.loads(data)
        run_manifest = json.loads(manifests[root / meta["runManifestPath"]])
        assignment = next(
            a for a in run_manifest["invocationAssignments"] if a["assignmentRef"] == meta["assignmentRef"]
        )
        meta["digests"]["assignment"] = prompts.assignment_digest(InvocationAssignment.model_validate(assignment))
        meta["digests"]["prompt"] = sha256_bytes(files[root / meta["promptPath"]])
        meta["digests"]["instruction"] = sha256_bytes(files[root / meta["instructionPath"]])
        files[path] = pretty_json(meta)
    return writes.populate_fresh_tree(root, files)


#: Bulk templates read by this process, by scratch root: each worker reads them once, not once per range.
_TEMPLATES: dict[str, dict[str, dict[str, bytes]]] = {}

#: Bulk tasks per range handed to a worker: small enough for a progress display that moves steadily.
BULK_RANGE_TASKS = 100


def _bulk_range(args: tuple[str, str, int, int]) -> list[dict[str, Any]]:
    root_text, scratch_text, start, stop = args
    root, scratch = Path(root_text), Path(scratch_text)
    templates = _TEMPLATES.get(scratch_text)
    if templates is None:
        names = [*BULK_TYPES, *OPEN_BULK_TEMPLATES.values()]
        templates = {t: _read_tree(layout.task_root(scratch, TPL_GROUP, _tpl_id(t))) for t in names}
        _TEMPLATES.clear()
        _TEMPLATES[scratch_text] = templates
    entries = []
    for index in range(start, stop):
        task_type, name = _bulk_template_name(index)
        group, task_id = f"bulk-{index % 50:02d}", f"task-{index:05d}"
        _clone(root, templates[name], name, group, task_id)
        entries.append(
            tm.TaskCatalogEntry(
                task_key=str(layout.TaskKey(PROJECT_ID, group, task_id)),
                project_id=PROJECT_ID,
                task_group=group,
                task_id=task_id,
                task_type=task_type,
                task_root_path=layout.task_root_rel(group, task_id),
                current_status="completed",
                title=f"Bulk {task_id}",
            ).dump()
        )
    return entries


def _bulk(root: Path, count: int, jobs: int, progress: Progress | None = None, before: int = 0) -> None:
    from .workflows.tasks import add_catalog_entries

    with tempfile.TemporaryDirectory(prefix="okstra-bulk-") as tmp:
        scratch = Path(tmp).resolve()
        writes.ensure_dir(scratch, layout.okstra_dir(scratch))
        clock = Clock(START + dt.timedelta(days=1))
        with writes.relaxed_durability():
            for task_type in BULK_TYPES:
                _bulk_template(scratch, task_type, clock)
            for task_type, name in OPEN_BULK_TEMPLATES.items():
                _bulk_template(scratch, task_type, clock, name)
        # Templates are written under the scratch root; their project-relative paths are the same in root.
        chunks = max(1, jobs * 4, count // BULK_RANGE_TASKS)
        size = max(1, (count + chunks - 1) // chunks)
        ranges = [(str(root), str(scratch), i, min(count, i + size)) for i in range(0, count, size)]
        entries: list[dict[str, Any]] = []
        total = before + count
        try:
            if jobs > 1 and len(ranges) > 1:
                with ProcessPoolExecutor(max_workers=jobs) as pool:
                    for part in pool.map(_bulk_range, ranges):
                        entries.extend(part)
                        if progress is not None:
                            progress(before + len(entries), total)
            else:
                for r in ranges:
                    entries.extend(_bulk_range(r))
                    if progress is not None:
                        progress(before + len(entries), total)
        finally:
            _TEMPLATES.clear()
    add_catalog_entries(root, [tm.TaskCatalogEntry.model_validate(e) for e in entries], PROJECT_ID)


# -------------------------------------------------------------------- entry


def generate(
    target: Path | str, *, tasks: int | None = None, jobs: int | None = None, progress: Progress | None = None
) -> Path:
    """Write the demo project into *target* (which must be missing or empty) and return its root.

    *tasks*: total number of tasks; beyond the 13 rich tasks (the 5 of the ``checkout`` group, and
    ``payments/refund-ledger``, wait for a decision), bulk tasks of the same shapes are added.
    *progress*, when given, is called with ``(tasks written, tasks)`` as the work goes on.
    """
    root = Path(target)
    if root.exists() and any(root.iterdir()):
        raise WriteRefused(root, "demo target exists and is not empty")
    writes.ensure_root(root)
    root = root.resolve()
    clock = Clock(START)
    writes.ensure_dir(root, layout.okstra_dir(root))
    rich = len(RICH_TASKS) + len(OPEN_TASKS)
    extra = max(0, (tasks or 0) - rich)
    total = rich + extra
    for done, build in enumerate(RICH_TASKS, 1):
        build(root, clock)
        if progress is not None:
            progress(done, total)
    _invocations(root, clock)
    _manager(root, clock)
    for done, build in enumerate(OPEN_TASKS, len(RICH_TASKS) + 1):
        build(root, clock)
        if progress is not None:
            progress(done, total)
    for ref in Project(root).task_refs:
        _write_task_index(root, ref.root)
    if extra:
        _bulk(root, extra, jobs or os.cpu_count() or 1, progress, rich)
    return root
