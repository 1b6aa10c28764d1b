"""Discovery files, the task manifest, timeline, fix cycles and recap log."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from .base import Model, RelPath, Strict, TaskKeyStr, Timestamp

NextPhaseStatus = Literal["ready", "pending", "blocked", "terminal"]


class TaskCatalogEntry(Model):
    task_key: TaskKeyStr
    project_id: str
    task_group: str
    task_id: str
    task_type: str
    task_root_path: RelPath
    current_status: str
    title: str | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None


class TaskCatalog(Model):
    """``.okstra/discovery/task-catalog.json``: the canonical list of task bundles."""

    schema_version: str
    project_id: str
    updated_at: Timestamp | None = None
    tasks: list[TaskCatalogEntry]


class LatestTask(Model):
    """``.okstra/discovery/latest-task.json``: the current-task convenience pointer."""

    schema_version: str
    task_key: TaskKeyStr
    task_root_path: RelPath
    task_manifest_path: RelPath
    updated_at: Timestamp | None = None


class ProjectFile(Model):
    """``.okstra/project.json``."""

    schema_version: str
    project_id: str
    created_at: Timestamp | None = None


class NextRecommendedPhase(Strict):
    """``{phase, status, rationale}``; launchable only when ``status`` is ``ready``.

    ``phase`` may still be named under a non-``ready`` status: ``prepare`` lowers a
    ``ready`` pointer to ``pending`` and keeps its phase.
    """

    phase: str | None = None
    status: NextPhaseStatus
    rationale: str = ""

    @property
    def launchable(self) -> bool:
        return self.status == "ready" and bool(self.phase)


class NextPhaseCorrection(Strict):
    """Present only when Phase 7 validation replaced the authored pointer."""

    authored: NextRecommendedPhase
    applied: NextRecommendedPhase


class Workflow(Model):
    current_phase: str | None = None
    current_phase_state: str | None = None
    phase_states: dict[str, str] = Field(default_factory=dict)
    last_completed_phase: str | None = None
    next_recommended_phase: NextRecommendedPhase
    next_recommended_phase_correction: NextPhaseCorrection | None = None
    awaiting_approval: bool | None = None
    last_safe_checkpoint: str | None = None


class FixCycleLatest(Strict):
    cycle: int
    symptom: str
    target_report: str | None = None
    closed_at: str | None = None


class FixCyclesSummary(Strict):
    """Derived from ``history/fix-cycles.jsonl`` on every prepare."""

    count: Annotated[int, Field(ge=0)]
    open_cycle_id: str | None = None
    latest: FixCycleLatest | None = None


class RelatedTask(Model):
    task_key: TaskKeyStr
    relation: str = "related"


class TaskManifest(Model):
    """``task-manifest.json``: canonical task continuity metadata."""

    schema_version: str
    project_id: str
    task_group: str
    task_id: str
    task_key: TaskKeyStr
    project_root: str
    task_type: str
    work_category: str
    title: str | None = None
    report_language: str | None = None
    task_brief_path: RelPath | None = None
    related_tasks: list[RelatedTask] = Field(default_factory=list)
    current_status: str
    task_root_path: RelPath
    instruction_set_path: RelPath
    reference_expectations_path: RelPath | None = None
    runs_path: RelPath
    history_timeline_path: RelPath
    latest_run_path: RelPath | None = None
    latest_run_status: str | None = None
    latest_run_prompts_path: RelPath | None = None
    latest_report_record_path: RelPath | None = None
    latest_resume_command_path: RelPath | None = None
    workflow: Workflow
    phase_outcome: dict[str, str] | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    artifacts: dict[str, Any] = Field(default_factory=dict)
    result_contract: dict[str, Any] = Field(default_factory=dict)
    lead_session: dict[str, Any] | None = None
    claude_session: dict[str, Any] | None = None
    fix_cycles: FixCyclesSummary | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None

    #: Fields that hold project-relative paths (checked for form and existence).
    PATH_FIELDS: ClassVar[tuple[str, ...]] = (
        "task_brief_path",
        "task_root_path",
        "instruction_set_path",
        "reference_expectations_path",
        "runs_path",
        "history_timeline_path",
        "latest_run_path",
        "latest_run_prompts_path",
        "latest_report_record_path",
        "latest_resume_command_path",
    )


class TimelineEntry(Model):
    run_timestamp: Timestamp
    run_dir: RelPath
    run_manifest_path: RelPath
    run_date_time_segment: str
    task_type: str
    stage: int | None = None
    work_category: str
    status: str
    worker_prompt_dir: RelPath | None = None
    report_path: RelPath | None = None
    resume_command_path: RelPath | None = None
    related_tasks: list[RelatedTask] = Field(default_factory=list)
    workflow_snapshot: dict[str, Any] = Field(default_factory=dict)
    fix_cycle_id: str | None = None


class Timeline(Model):
    """``history/timeline.json``."""

    schema_version: str
    task_key: TaskKeyStr
    entries: list[TimelineEntry]


class FixCycleEvent(Model):
    """One line of append-only ``history/fix-cycles.jsonl``."""

    event: Literal["opened", "closed"]
    cycle_id: str
    cycle: Annotated[int, Field(ge=1)]
    symptom: str = ""
    target_report: str | None = None
    at: Timestamp


def derive_fix_cycles(events: list[FixCycleEvent]) -> FixCyclesSummary:
    """The ``fixCycles`` summary that ``fix-cycles.jsonl`` implies (the one owner of this rule)."""
    opened: dict[str, FixCycleEvent] = {}
    closed: dict[str, str] = {}
    order: list[str] = []
    for ev in events:
        if ev.event == "opened":
            if ev.cycle_id not in opened:
                order.append(ev.cycle_id)
            opened[ev.cycle_id] = ev
        else:
            closed[ev.cycle_id] = ev.at
    if not order:
        return FixCyclesSummary(count=0)
    open_ids = [cid for cid in order if cid not in closed]
    last = opened[max(order, key=lambda cid: (opened[cid].cycle, order.index(cid)))]
    latest = FixCycleLatest(
        cycle=last.cycle, symptom=last.symptom, target_report=last.target_report, closed_at=closed.get(last.cycle_id)
    )
    return FixCyclesSummary(count=len(order), open_cycle_id=open_ids[-1] if open_ids else None, latest=latest)


class RecapEntry(Model):
    """One line of append-only ``recap/recap-log.jsonl``."""

    at: Timestamp
    task_type: str
    run_date_time_segment: str | None = None
    author: str = "lead"
    summary: str
