"""One scripted run of a demo task: its prompts, team, results, report, convergence and close."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import layout, names, writes
from ..errors import WriteRefused
from ..models import task as tm
from ..models.convergence import AdapterOutcome, ConvergenceFinal, ParsedVote, PlannedDispatch, RoundPlan, RoundResults
from ..models.run import AgentDispatch, InvocationAssignment, WorkerDispatch
from ..render import derive_siblings
from ..times import iso
from ..workflows import convergence, prompts, teamstate
from ..workflows.common import Clock
from ..workflows.tasks import Run, WorkerSpec, close_run, prepare_run
from .content import ANALYSERS, convergence_votes, finding_groups
from .schedule import ROUND_TIME, DemoClock, Slot


def write_report(
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
    folder = run.run_dir / layout.WORKER_RESULTS_DIR
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


def team_run(
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
    slot: Slot | None = None,
) -> Run:
    """Prepare a run, publish its prompts with transcripts, and record the team's dispatches and results.

    With a *slot*, the run starts at its time and each worker's result comes after its share of the work.
    """
    if slot is not None and isinstance(clock, DemoClock):
        clock.wait_until(slot.start)
    run = prepare_run(
        project_root, task_root, task_type, stage=stage, workers=workers, clock=clock, v2=v2, fix_cycle_id=fix_cycle_id
    )
    instruction_rel = layout.rel(layout.instruction_set_dir(task_root) / "analysis-packet.md", project_root)
    _publish_prompts(run, workers, clock, instruction_rel)
    result_seq = run.seqs(layout.WORKER_RESULTS_DIR)
    for index, worker in enumerate(workers, start=1):
        inv = next(a for a in run.manifest.invocation_assignments if a.worker_id == worker.worker_id)
        dispatch_id = _dispatch(run, worker, index, inv, clock, v2, rich_team)
        if slot is not None and isinstance(clock, DemoClock):
            clock.wait(slot.work / len(workers))
        result = _write_results(run, worker, result_seq, instruction_rel)
        teamstate.link_result(
            project_root, run.team_state_path, run.manifest, dispatch_id, run.rel(result), iso(clock.now())
        )
    if rich_team:
        _probe_rows(run, clock, v2)
    return run


def close(
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


def _convergence_round(
    run: Run,
    seq: int,
    prompt_seq: int | None,
    roster: list[str],
    rnd: int,
    votes: dict[str, dict[str, str]],
    clock: Clock,
) -> None:
    """One reverify round: a prompt and transcript per analyser (unless *prompt_seq* is None), the round plan,
    then the parsed votes."""
    root = run.project_root
    dispatches = []
    for analyser, ballot in votes.items():
        if prompt_seq is None:
            dispatches.append(PlannedDispatch(analyser_id=analyser, group_ids=list(ballot)))
            continue
        prompt = (
            run.run_dir
            / layout.PROMPTS_DIR
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


def converge(
    run: Run, clock: Clock, rounds: int = 2, *, settled: bool = True, prompts_kept: bool = True
) -> ConvergenceFinal:
    """Round 0 groups, *rounds* reverify rounds with plans, prompts and votes, then the terminal final.

    The findings settle in the last round; unless *settled* is false, when one stays disputed and the
    convergence ends at its round limit (``max-rounds``). Without *prompts_kept*, the round plans name
    no prompt and none is written (the reverify prompts of the first demo run are kept, unpublished,
    on purpose; the checker warns about them once).
    """
    root = run.project_root
    seq = run.seqs(layout.STATE_DIR)
    roster = [w.worker_id for w in ANALYSERS]
    convergence.write_groups(root, run.run_dir, run.task_type, seq, finding_groups(run, roster))
    convergence.seed_work(root, run.run_dir, run.task_type, seq, clock=clock)
    prompt_seq = run.seqs(layout.PROMPTS_DIR) if prompts_kept else None
    for rnd, votes in convergence_votes(rounds, settled).items():
        if isinstance(clock, DemoClock):
            clock.wait(ROUND_TIME)
        _convergence_round(run, seq, prompt_seq, roster, rnd, votes, clock)
    return convergence.finalize(root, run.run_dir, run.task_type, seq, "converged" if settled else "max-rounds", clock)


def convergence_summary(run: Run, final: ConvergenceFinal) -> dict[str, Any]:
    """The report's ``convergence`` block for a run's terminal convergence state."""
    verdicts = [group.verdict for group in final.groups]
    return {
        "convergence": {
            "terminalState": final.terminal_state,
            "rounds": final.rounds,
            "confirmed": verdicts.count("confirmed"),
            "rejected": verdicts.count("rejected"),
            "disputed": verdicts.count("disputed"),
            "statePath": run.rel(run.path("convergence-final")),
        }
    }


# ------------------------------------------------------------------ dates


def pin_mtime(path: Path, clock: Clock) -> None:
    """Give a file the demo clock's next time: a sidecar records no time, and the inbox dates it by its mtime."""
    stamp = clock.now().timestamp()
    os.utime(path, (stamp, stamp))


def date_by_clock(path: Path, clock: Clock) -> None:
    """Give a file that records no time (a sidecar, the selected direction, the attached answers, a historical
    report) the time of the write that made it, without stepping the clock: the activity view dates it so."""
    stamp = clock.last().timestamp()
    os.utime(path, (stamp, stamp))


def write_task_index(project_root: Path, task_root: Path) -> None:
    """``task-index.md`` of a finished demo task, rendered by the owner behind ``okstra render-task-index``."""
    from .. import reading
    from ..render import render_task_index

    manifest = reading.load_model(layout.task_manifest_path(task_root), tm.TaskManifest, root=project_root)
    if isinstance(manifest, reading.LoadError):
        raise WriteRefused(manifest.path, manifest.reason)
    writes.create_only(project_root, layout.task_index_path(task_root), render_task_index(manifest).encode("utf-8"))


def close_awaiting_approval(run: Run, rep: Path | None, clock: Clock) -> None:
    """Close an analysis run whose findings wait for the lead's approval before options are drafted."""
    close(
        run,
        rep,
        clock,
        next_phase="option-selection",
        next_status="pending",
        rationale="findings ready: approve before options are drafted",
        awaiting=True,
    )
