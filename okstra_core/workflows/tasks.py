"""Task bundles and runs: create a task, prepare a run, close it.

These are the writes ``prepare`` makes: the task manifest, the discovery
files, the timeline, and a run's manifest, contexts and team-state, with
seqs allocated race-free per category.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import layout, names, reading, writes
from ..digests import sha256_bytes, sha256_json
from ..errors import WriteRefused
from ..models import run as rm
from ..models import task as tm
from ..times import iso
from .common import SYSTEM_CLOCK, Clock, fresh_unless, update_json, validated
from .discovery import catalog_entry_for, ensure_project_file, point_latest, upsert_catalog_entry

INSTRUCTION_FILES = (
    "analysis-profile.md",
    "analysis-packet.md",
    "analysis-material.md",
    "reference-expectations.md",
    layout.TASK_BRIEF_FILE,
    "final-report-template.md",
    "lead-execution-prompt.md",
    "claude-execution-prompt.md",
)


# --------------------------------------------------------------------- tasks


@dataclass(frozen=True)
class TaskSpec:
    project_id: str
    task_group: str
    task_id: str
    task_type: str
    work_category: str
    title: str
    brief: str
    report_language: str = "en"
    related: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return str(layout.TaskKey(self.project_id, self.task_group, self.task_id))


def create_task(
    project_root: Path, spec: TaskSpec, clock: Clock = SYSTEM_CLOCK, *, point: bool = True, catalog: bool = True
) -> Path:
    """Create a task bundle: instruction set, manifest, timeline, catalog entry, latest pointer.

    ``catalog=False`` leaves the catalog to one :func:`add_catalog_entries` call (bulk creation).
    """
    ensure_project_file(project_root, spec.project_id, clock)
    root = layout.task_root(project_root, spec.task_group, spec.task_id)
    root_rel = layout.rel(root, project_root)
    iset = layout.instruction_set_dir(root)
    texts = {
        layout.TASK_BRIEF_FILE: f"# {spec.title}\n\n{spec.brief}\n",
        "analysis-profile.md": f"# Analysis profile\n\nWork category: {spec.work_category}\n",
        "analysis-packet.md": f"# Analysis packet\n\nTask: {spec.key}\n",
        "analysis-material.md": "# Analysis material\n\nSee the task brief.\n",
        "reference-expectations.md": "# Reference expectations\n\n| file | key | expected |\n|---|---|---|\n",
        "final-report-template.md": "# Final report template\n\nSee templates/reports/final-report-v2.template.md.\n",
        "lead-execution-prompt.md": f"# Okstra lead\n\nYou lead task {spec.key}.\n",
    }
    texts["claude-execution-prompt.md"] = texts["lead-execution-prompt.md"]
    for name, text in texts.items():
        writes.create_only(project_root, iset / name, text.encode("utf-8"))
    now = iso(clock.now())
    manifest = tm.TaskManifest(
        schema_version="1.0",
        project_id=spec.project_id,
        task_group=spec.task_group,
        task_id=spec.task_id,
        task_key=spec.key,
        project_root=str(project_root),
        task_type=spec.task_type,
        work_category=spec.work_category,
        title=spec.title,
        report_language=spec.report_language,
        task_brief_path=layout.rel(iset / layout.TASK_BRIEF_FILE, project_root),
        related_tasks=[tm.RelatedTask(task_key=k) for k in spec.related],
        current_status="ready-for-lead",
        task_root_path=root_rel,
        instruction_set_path=layout.rel(iset, project_root),
        reference_expectations_path=layout.rel(iset / "reference-expectations.md", project_root),
        runs_path=layout.rel(layout.runs_dir(root), project_root),
        history_timeline_path=layout.rel(layout.timeline_path(root), project_root),
        workflow=tm.Workflow(
            current_phase=spec.task_type,
            current_phase_state="pending",
            phase_states={spec.task_type: "pending"},
            next_recommended_phase=tm.NextRecommendedPhase(
                phase=spec.task_type, status="ready", rationale="task created"
            ),
            awaiting_approval=False,
        ),
        fix_cycles=tm.FixCyclesSummary(count=0),
        created_at=now,
        updated_at=now,
    )
    writes.create_only_json(project_root, layout.task_manifest_path(root), manifest.dump())
    timeline = tm.Timeline(schema_version="1.0", task_key=spec.key, entries=[])
    writes.create_only_json(project_root, layout.timeline_path(root), timeline.dump())
    if catalog:
        upsert_catalog_entry(project_root, catalog_entry_for(manifest, now, created_at=now), spec.project_id, clock)
    if point:
        point_latest(project_root, spec.key, root, clock)
    return root


def update_task_manifest(
    project_root: Path, task_root: Path, mutate: Callable[[tm.TaskManifest], tm.TaskManifest]
) -> tm.TaskManifest:
    """Locked, validated change of ``task-manifest.json``: *mutate* returns the new manifest.

    It may assign fields of the manifest it is given and return it (see :func:`update_json`).
    """

    def apply(current: tm.TaskManifest | None) -> tm.TaskManifest:
        if current is None:
            raise WriteRefused(layout.task_manifest_path(task_root), "task manifest is missing")
        return mutate(current)

    result = update_json(project_root, layout.task_manifest_path(task_root), tm.TaskManifest, apply)
    assert result is not None
    return result


def current_fix_cycles(project_root: Path, task_root: Path) -> tm.FixCyclesSummary:
    """The ``fixCycles`` summary derived from ``fix-cycles.jsonl`` (missing file: no cycles)."""
    path = layout.fix_cycles_path(task_root)
    if not os.path.lexists(path):
        return tm.FixCyclesSummary(count=0)
    doc = reading.load_jsonl(path, tm.FixCycleEvent, root=project_root)
    if isinstance(doc, reading.LoadError):
        raise WriteRefused(path, doc.reason)
    if doc.errors:
        raise WriteRefused(path, f"line {doc.errors[0].line}: {doc.errors[0].reason}")
    return tm.derive_fix_cycles(doc.records)


def refresh_fix_cycles(
    project_root: Path, task_root: Path, clock: Clock = SYSTEM_CLOCK
) -> tuple[tm.FixCyclesSummary, bool]:
    """Recompute the manifest's ``fixCycles`` from ``fix-cycles.jsonl``.

    Returns the summary and whether the manifest changed; an unchanged summary
    writes nothing (not even ``updatedAt``). A bad JSONL line is refused.
    """
    fix = current_fix_cycles(project_root, task_root)
    changed: list[bool] = []

    def apply(current: tm.TaskManifest | None) -> tm.TaskManifest | None:
        if current is None:
            raise WriteRefused(layout.task_manifest_path(task_root), "task manifest is missing")
        if current.fix_cycles is not None and current.fix_cycles.dump() == fix.dump():
            return None
        current.fix_cycles = fix
        current.updated_at = iso(clock.now())
        changed.append(True)
        return current

    update_json(project_root, layout.task_manifest_path(task_root), tm.TaskManifest, apply)
    return fix, bool(changed)


def lower_ready_pointer(workflow: tm.Workflow) -> None:
    """Prepare's rule: a ``ready`` next-phase pointer becomes ``pending`` and keeps its phase."""
    pointer = workflow.next_recommended_phase
    if pointer is not None and pointer.status == "ready":
        pointer.status = "pending"


def append_recap(project_root: Path, task_root: Path, entry: tm.RecapEntry) -> None:
    """Append one entry to the task's append-only ``recap/recap-log.jsonl``."""
    writes.append_jsonl(project_root, layout.recap_log_path(task_root), entry.dump())


def record_fix_cycle(project_root: Path, task_root: Path, event: tm.FixCycleEvent) -> None:
    writes.append_jsonl(project_root, layout.fix_cycles_path(task_root), event.dump())


# ---------------------------------------------------------------------- runs


@dataclass(frozen=True)
class WorkerSpec:
    worker_id: str
    role: str  # analyser | executor | verifier | report-writer
    provider: str
    model: str
    runner: str = "cli-wrapper"

    @property
    def audience(self) -> str:
        return {
            "analyser": "analysis",
            "executor": "implementation",
            "verifier": "implementation",
            "report-writer": "report-writing",
        }[self.role]


@dataclass
class RunSeqs:
    """One execution's seq in each category folder of its run dir, taken on first use."""

    root: Path
    run_dir: Path
    taken: dict[str, int] = field(default_factory=dict)

    def __call__(self, category: str) -> int:
        if category not in self.taken:
            self.taken[category] = writes.allocate_seq(self.root, self.run_dir, category)
        return self.taken[category]


@dataclass
class Run:
    """A prepared run: where it lives, its seqs, and its published manifest."""

    project_root: Path
    task_root: Path
    task_key: str
    task_type: str
    stage: int | None
    run_dir: Path
    seqs: RunSeqs
    segment: str
    manifest_path: Path
    manifest: rm.RunManifest
    team_state_path: Path

    def path(self, kind: str, **parts: Any) -> Path:
        """Path of an artifact of this execution (seq of the kind's category)."""
        k = names.KINDS_BY_NAME[kind]
        seq = parts.pop("seq", None) or self.seqs(k.category)
        return self.run_dir / k.category / names.build(kind, task_type=self.task_type, seq=seq, **parts)

    def rel(self, path: Path) -> str:
        return layout.rel(path, self.project_root)


def _duty_text(worker: WorkerSpec) -> str:
    return f"# Duty: {worker.role}\n\nAudience: {worker.audience}\nPreamble: {rm.AUDIENCE_PREAMBLES[worker.audience]}\n"


LEAD_DUTY = "# Duty: lead\n\nThe Okstra lead coordinates the run.\n"


@dataclass
class _Preparation:
    """What the steps of :func:`prepare_run` share: the request, the run dir and its seqs."""

    project_root: Path
    task_root: Path
    task: tm.TaskManifest
    task_type: str
    stage: int | None
    workers: list[WorkerSpec]
    work_category: str
    v2: bool
    fix_cycle_id: str | None
    run_dir: Path
    seqs: RunSeqs
    moment: dt.datetime
    segment: str

    @property
    def task_key(self) -> str:
        return self.task.task_key

    @property
    def schema_version(self) -> str:
        return "2.0" if self.v2 else "1.0"

    def path(self, kind: str, seq: int, **parts: Any) -> Path:
        """Path of an artifact of this execution in its kind's category folder."""
        category = names.KINDS_BY_NAME[kind].category
        return self.run_dir / category / names.build(kind, task_type=self.task_type, seq=seq, **parts)

    def rel(self, path: Path) -> str:
        return layout.rel(path, self.project_root)


@dataclass(frozen=True)
class _DutySnapshot:
    folder: Path
    catalog_digest: str


def _write_duty_snapshot(prep: _Preparation, prompt_seq: int) -> _DutySnapshot:
    """``prompts/duty-contracts-<type>-<seq>/``: one duty file per role, then the catalog of their digests."""
    folder = prep.path("duty-contracts", prompt_seq)
    duties = []
    for role in sorted({w.role for w in prep.workers} | {"lead"}):
        text = LEAD_DUTY if role == "lead" else _duty_text(next(w for w in prep.workers if w.role == role))
        data = text.encode("utf-8")
        writes.create_only(prep.project_root, folder / f"{role}.md", data)
        duties.append(rm.DutyEntry(duty_id=role, path=f"{role}.md", sha256=sha256_bytes(data)))
    catalog = rm.DutyCatalog(schema_version="1.0", duties=duties)
    catalog_bytes = (catalog.model_dump_json(by_alias=True, indent=2) + "\n").encode()
    writes.create_only(prep.project_root, folder / layout.DUTY_CATALOG_FILE, catalog_bytes)
    return _DutySnapshot(folder, sha256_bytes(catalog_bytes))


def _v2_identity(prep: _Preparation, participant: str, audience: str, index: int, prompt_seq: int) -> dict[str, Any]:
    return {
        "participantRef": f"participant:{participant}",
        "roleExecutionRef": f"role:{audience}:{index}",
        "invocationRef": f"invocation:{prep.task_type}-{prompt_seq:03d}-{index}",
        "attempt": 1,
        "executionLabel": f"{participant} #{index}",
    }


def _assignments(prep: _Preparation, prompt_seq: int) -> list[rm.InvocationAssignment]:
    """One invocation assignment per participant, the lead first, each with its prompt path."""

    def prompt_rel(kind: str, worker_id: str | None = None) -> str:
        return prep.rel(prep.path(kind, prompt_seq, worker_id=worker_id))

    people = [("lead", "lead", "lead", prompt_rel("lead-prompt"))]
    for w in prep.workers:
        kind = "report-writer" if w.role == "report-writer" else "worker"
        people.append((w.worker_id, w.audience, kind, prompt_rel("worker-prompt", w.worker_id)))
    assignments = []
    for index, (worker_id, audience, kind, prompt_path) in enumerate(people, start=1):
        identity = _v2_identity(prep, worker_id, audience, index, prompt_seq) if prep.v2 else {}
        assignment = {
            "assignmentRef": f"assign-{index:02d}-{worker_id}",
            "invocationId": f"{prep.task_type}-{prompt_seq:03d}-{worker_id}",
            "workerId": worker_id,
            "audience": audience,
            "dispatchKind": kind,
            "promptPath": prompt_path,
            "metaPath": names.meta_name_for(prompt_path),
            **identity,
        }
        assignments.append(rm.InvocationAssignment.model_validate(assignment))
    return assignments


def _declared_results(prep: _Preparation, extra: list[str] | None) -> list[str]:
    """*extra*, then every worker's result and audit file in ``worker-results/``."""
    result_seq = prep.seqs(layout.WORKER_RESULTS_DIR)
    declared = list(extra or [])
    for w in prep.workers:
        for kind in ("worker-result", "worker-audit"):
            declared.append(prep.rel(prep.path(kind, result_seq, worker_id=w.worker_id)))
    return declared


def _run_manifest(
    prep: _Preparation,
    assignments: list[rm.InvocationAssignment],
    declared: list[str],
    duties: _DutySnapshot,
) -> rm.RunManifest:
    """The run manifest: who works, where every expected file goes, and which paths each may touch."""
    run_dir, prompts_dir = prep.run_dir, prep.run_dir / layout.PROMPTS_DIR
    workers = prep.workers
    report_seq, status_seq = prep.seqs(layout.REPORTS_DIR), prep.seqs(layout.STATUS_DIR)
    return rm.RunManifest(
        schema_version=prep.schema_version,
        task_key=prep.task_key,
        task_type=prep.task_type,
        work_category=prep.work_category,
        stage=prep.stage,
        run_date_time_segment=prep.segment,
        run_dir=prep.rel(run_dir),
        task_brief_path=prep.task.task_brief_path,
        analysis_target=prep.task.title,
        selected_workers=[w.worker_id for w in workers],
        worker_assignments=[
            rm.WorkerAssignment(
                worker_id=w.worker_id,
                role=w.role,
                provider=w.provider,
                model=w.model,
                runner=w.runner,
                audience=w.audience,
            )
            for w in workers
        ],
        lead_session=rm.LeadSession(session_id=f"lead-{sha256_json([prep.task_key, prep.segment])[:12]}"),
        resume_command_path=prep.rel(prep.path("claude-resume", prep.seqs(layout.SESSIONS_DIR))),
        expected_report_path=prep.rel(prep.path("final-report-data", report_seq)),
        expected_status_path=prep.rel(prep.path("final-status", status_seq)),
        prompt_snapshot_path=assignments[0].prompt_path,
        worker_prompt_dir=prep.rel(prompts_dir),
        worker_prompt_paths={a.worker_id: a.prompt_path for a in assignments if a.worker_id != "lead"},
        status="prepared",
        workflow_snapshot={"currentPhase": prep.task_type, "currentPhaseState": "in-progress"},
        team_contract={"lead": "host-native", "workers": len(workers)},
        fix_cycle_id=prep.fix_cycle_id,
        agent_contract=rm.AgentContract(
            duty_root=prep.rel(duties.folder),
            catalog_digest=duties.catalog_digest,
            reservation_root=prep.rel(prompts_dir / layout.RESERVATIONS_DIR),
        ),
        invocation_assignments=assignments,
        authorized_paths=rm.AuthorizedPaths(
            instruction_roots=[prep.rel(layout.instruction_set_dir(prep.task_root))],
            prompt_roots=[prep.rel(prompts_dir)],
            result_roots=[prep.rel(run_dir / layout.WORKER_RESULTS_DIR), prep.rel(run_dir / layout.REPORTS_DIR)],
            declared_results=declared,
        ),
    )


def _write_run_contexts(prep: _Preparation, manifest_seq: int, state_seq: int) -> None:
    """``run-context`` beside the manifest and ``active-run-context`` in ``state/``: identity and seq hints."""
    hints = rm.PathHints(
        run_dir=prep.rel(prep.run_dir), seqs={c: f"{n:03d}" for c, n in sorted(prep.seqs.taken.items())}
    )
    identity = rm.RunIdentity(
        task_key=prep.task_key, task_type=prep.task_type, stage=prep.stage, run_date_time_segment=prep.segment
    )
    context = rm.RunContext(schema_version="2.0", identity=identity, path_hints=hints)
    writes.create_only_json(prep.project_root, prep.path("run-context", manifest_seq), context.dump())
    active = rm.ActiveRunContext(
        schema_version="2.0",
        identity=identity,
        path_hints=hints,
        workers=[rm.ActiveWorker(worker_id=w.worker_id, role=w.role, audience=w.audience) for w in prep.workers],
    )
    writes.create_only_json(prep.project_root, prep.path("active-run-context", state_seq), active.dump())


def _write_team_state(prep: _Preparation, path: Path) -> None:
    team = rm.TeamState(
        schema_version=prep.schema_version,
        task_key=prep.task_key,
        task_type=prep.task_type,
        run_date_time_segment=prep.segment,
        spec_link_gate="host-native-spec-link-gate",
    )
    writes.create_only_json(prep.project_root, path, team.dump())


def _append_timeline(prep: _Preparation, manifest_path: Path, manifest: rm.RunManifest) -> None:
    entry = tm.TimelineEntry(
        run_timestamp=iso(prep.moment),
        run_dir=prep.rel(prep.run_dir),
        run_manifest_path=prep.rel(manifest_path),
        run_date_time_segment=prep.segment,
        task_type=prep.task_type,
        stage=prep.stage,
        work_category=prep.work_category,
        status="prepared",
        worker_prompt_dir=prep.rel(prep.run_dir / layout.PROMPTS_DIR),
        report_path=manifest.expected_report_path,
        resume_command_path=manifest.resume_command_path,
        workflow_snapshot=manifest.workflow_snapshot,
        fix_cycle_id=prep.fix_cycle_id,
    )

    def add_entry(current: tm.Timeline | None) -> tm.Timeline:
        doc = fresh_unless(current, lambda: tm.Timeline(schema_version="1.0", task_key=prep.task_key))
        doc.entries.append(entry)
        return doc

    update_json(prep.project_root, layout.timeline_path(prep.task_root), tm.Timeline, add_entry)


def _point_task_at_run(prep: _Preparation, manifest: rm.RunManifest, clock: Clock) -> None:
    """The task manifest names the new run as its latest and the task type's phase as in progress."""
    fix = current_fix_cycles(prep.project_root, prep.task_root)
    task_type = prep.task_type

    def on_prepare(m: tm.TaskManifest) -> tm.TaskManifest:
        wf = m.workflow = m.workflow or tm.Workflow()
        lower_ready_pointer(wf)
        m.task_type = task_type
        m.current_status = "ready-for-lead"
        m.latest_run_path = prep.rel(prep.run_dir)
        m.latest_run_status = "prepared"
        m.latest_run_prompts_path = prep.rel(prep.run_dir / layout.PROMPTS_DIR)
        m.latest_resume_command_path = manifest.resume_command_path
        m.fix_cycles = fix
        wf.current_phase = task_type
        wf.current_phase_state = "in-progress"
        wf.phase_states[task_type] = "in-progress"
        m.updated_at = iso(clock.now())
        return m

    update_task_manifest(prep.project_root, prep.task_root, on_prepare)


def prepare_run(
    project_root: Path,
    task_root: Path,
    task_type: str,
    *,
    stage: int | None = None,
    workers: list[WorkerSpec],
    work_category: str = "feature",
    clock: Clock = SYSTEM_CLOCK,
    v2: bool = True,
    fix_cycle_id: str | None = None,
    declared_results: list[str] | None = None,
) -> Run:
    """Prepare a run: duty snapshot, run manifest (published before any prompt), contexts, team-state, timeline."""
    task = reading.load_model(layout.task_manifest_path(task_root), tm.TaskManifest, root=project_root)
    if isinstance(task, reading.LoadError):
        raise WriteRefused(task.path, task.reason)
    run_dir = layout.run_dir(task_root, task_type, stage)
    writes.ensure_dir(project_root, run_dir)
    moment = clock.now()
    prep = _Preparation(
        project_root=project_root,
        task_root=task_root,
        task=task,
        task_type=task_type,
        stage=stage,
        workers=workers,
        work_category=work_category,
        v2=v2,
        fix_cycle_id=fix_cycle_id,
        run_dir=run_dir,
        seqs=RunSeqs(project_root, run_dir),
        moment=moment,
        segment=iso(moment),
    )
    prompt_seq = prep.seqs(layout.PROMPTS_DIR)
    duties = _write_duty_snapshot(prep, prompt_seq)
    assignments = _assignments(prep, prompt_seq)
    declared = _declared_results(prep, declared_results)
    manifest_seq, state_seq = prep.seqs(layout.MANIFESTS_DIR), prep.seqs(layout.STATE_DIR)
    manifest_path = prep.path("run-manifest", manifest_seq)
    team_state_path = prep.path("team-state", state_seq)
    manifest = _run_manifest(prep, assignments, declared, duties)
    writes.create_only_json(project_root, manifest_path, manifest.dump())
    _write_run_contexts(prep, manifest_seq, state_seq)
    _write_team_state(prep, team_state_path)
    _append_timeline(prep, manifest_path, manifest)
    _point_task_at_run(prep, manifest, clock)
    return Run(
        project_root=project_root,
        task_root=task_root,
        task_key=task.task_key,
        task_type=task_type,
        stage=stage,
        run_dir=run_dir,
        seqs=prep.seqs,
        segment=prep.segment,
        manifest_path=manifest_path,
        manifest=manifest,
        team_state_path=team_state_path,
    )


def write_status(run: Run, status: str) -> Path:
    """``status/final-<task-type>-<seq>.status``: one known status and a newline."""
    if status not in rm.RUN_STATUSES:
        raise WriteRefused(None, f"unknown status {status!r}")
    path = run.path("final-status")
    writes.create_only(run.project_root, path, (status + "\n").encode())
    return path


def close_run(
    run: Run,
    status: str,
    *,
    report_path: Path | None,
    next_phase: tm.NextRecommendedPhase,
    correction: tm.NextPhaseCorrection | None = None,
    phase_outcome: dict[str, str] | None = None,
    awaiting_approval: bool = False,
    clock: Clock = SYSTEM_CLOCK,
    catalog: bool = True,
) -> None:
    """Phase 7 bookkeeping: status file, task manifest, timeline and catalog status."""
    write_status(run, status)
    project_root = run.project_root

    def on_close(m: tm.TaskManifest) -> tm.TaskManifest:
        wf = m.workflow = m.workflow or tm.Workflow()
        wf.phase_states[run.task_type] = status
        if phase_outcome:
            m.phase_outcome = {**(m.phase_outcome or {}), **phase_outcome}
        m.updated_at = iso(clock.now())
        if m.latest_run_path not in (None, run.rel(run.run_dir)):
            # A run closing after a newer one was prepared: the task's latest-run fields are the newer run's.
            return m
        m.current_status = status
        m.latest_run_status = status
        if report_path is not None:
            m.latest_report_record_path = layout.rel(report_path, project_root)
        wf.current_phase_state = status
        if status == rm.COMPLETED_STATUS:
            wf.last_completed_phase = run.task_type
            wf.last_safe_checkpoint = layout.rel(run.manifest_path, project_root)
        wf.next_recommended_phase = next_phase
        wf.next_recommended_phase_correction = correction  # None: no correction, the key is left out
        wf.awaiting_approval = awaiting_approval
        return m

    manifest = update_task_manifest(project_root, run.task_root, on_close)

    def on_timeline(doc: tm.Timeline | None) -> tm.Timeline | None:
        if doc is None:
            return None
        manifest_rel = layout.rel(run.manifest_path, project_root)
        for entry in doc.entries:
            if entry.run_manifest_path == manifest_rel:
                entry.status = status
        return doc

    update_json(project_root, layout.timeline_path(run.task_root), tm.Timeline, on_timeline)
    if not catalog:
        return
    upsert_catalog_entry(project_root, catalog_entry_for(manifest, iso(clock.now())), manifest.identity()[0], clock)


__all__ = ["Run", "RunSeqs", "TaskSpec", "WorkerSpec", "close_run", "create_task", "prepare_run", "validated"]
