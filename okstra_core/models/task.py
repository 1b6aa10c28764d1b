"""Discovery files, the task manifest, timeline, fix cycles and recap log."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field, model_validator

from .base import ADDED, Model, RelPath, Strict, TaskKeyStr, Timestamp, accept_bare_list

NextPhaseStatus = Literal["ready", "pending", "blocked", "terminal"]


class TaskCatalogEntry(Model):
    """One catalogued task bundle: the contract lists bundles "by taskKey, taskGroup, and taskId"."""

    task_key: TaskKeyStr
    task_group: str
    task_id: str
    project_id: Annotated[str | None, ADDED] = None
    task_type: Annotated[str | None, ADDED] = None
    task_root_path: Annotated[RelPath | None, ADDED] = None
    current_status: Annotated[str | None, ADDED] = None
    title: Annotated[str | None, ADDED] = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None


class TaskCatalog(Model):
    """``.okstra/discovery/task-catalog.json``: the canonical list of task bundles (a bare list is read too)."""

    #: The item definition of the bare-list form (see :func:`~.base.bare_list_schema`).
    BARE_LIST_ITEM: ClassVar[str] = "TaskCatalogEntry"
    _bare = model_validator(mode="before")(accept_bare_list("tasks"))

    schema_version: Annotated[str | None, ADDED] = None
    project_id: Annotated[str | None, ADDED] = None
    updated_at: Annotated[Timestamp | None, ADDED] = None
    tasks: list[TaskCatalogEntry] = Field(default_factory=list)


class LatestTask(Model):
    """``.okstra/discovery/latest-task.json``: the current-task convenience pointer.

    The contract names no field of it; any of the three below identifies the task.
    """

    schema_version: Annotated[str | None, ADDED] = None
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    task_root_path: Annotated[RelPath | None, ADDED] = None
    task_manifest_path: Annotated[RelPath | None, ADDED] = None
    updated_at: Annotated[Timestamp | None, ADDED] = None


class ProjectFile(Model):
    """``.okstra/project.json`` (the contract names the file, none of its fields)."""

    schema_version: Annotated[str | None, ADDED] = None
    project_id: Annotated[str | None, ADDED] = None
    created_at: Annotated[Timestamp | None, ADDED] = None


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
    phase_states: dict[str, Any] = Field(default_factory=dict)
    last_completed_phase: str | None = None
    next_recommended_phase: NextRecommendedPhase | None = None
    next_recommended_phase_correction: NextPhaseCorrection | None = None
    awaiting_approval: bool | None = None
    last_safe_checkpoint: Any = None


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

    def named(self) -> dict[str, Any]:
        """The fields the contract names (extra keys left out), for comparing with a derivation."""
        value: dict[str, Any] = {"count": self.count, "openCycleId": self.open_cycle_id, "latest": None}
        if self.latest is not None:
            latest = self.latest
            value["latest"] = {
                "cycle": latest.cycle,
                "symptom": latest.symptom,
                "targetReport": latest.target_report,
                "closedAt": latest.closed_at,
            }
        return value


class RelatedTask(Model):
    task_key: TaskKeyStr | None = None
    relation: str = "related"


def _related(value: Any) -> Any:
    """``relatedTasks`` entries may be bare task keys."""
    if isinstance(value, list):
        return [{"taskKey": v} if isinstance(v, str) else v for v in value]
    return value


class TaskManifest(Model):
    """``task-manifest.json``: canonical task continuity metadata.

    The contract lists "examples of key fields"; only the task key is required
    ("the task key under which results accumulate"). The rest is checked when present.
    """

    schema_version: Annotated[str | None, ADDED] = None
    project_id: str | None = None
    task_group: str | None = None
    task_id: str | None = None
    task_key: TaskKeyStr
    project_root: str | None = None
    task_type: str | None = None
    work_category: str | None = None
    title: Annotated[str | None, ADDED] = None
    report_language: Annotated[str | None, ADDED] = None
    task_brief_path: RelPath | None = None
    related_tasks: Annotated[list[RelatedTask], BeforeValidator(_related)] = Field(default_factory=list)
    current_status: str | None = None
    task_root_path: RelPath | None = None
    instruction_set_path: RelPath | None = None
    reference_expectations_path: RelPath | None = None
    runs_path: RelPath | None = None
    history_timeline_path: RelPath | None = None
    latest_run_path: RelPath | None = None
    latest_run_status: str | None = None
    latest_run_prompts_path: RelPath | None = None
    latest_report_record_path: RelPath | None = None
    latest_resume_command_path: RelPath | None = None
    workflow: Workflow | None = None
    phase_outcome: Any = None
    inputs: Any = None
    artifacts: Any = None
    result_contract: Any = None
    lead_session: Any = None
    claude_session: Any = None
    fix_cycles: FixCyclesSummary | None = None
    created_at: Annotated[Timestamp | None, ADDED] = None
    updated_at: Annotated[Timestamp | None, ADDED] = None

    def identity(self) -> tuple[str, str, str]:
        """``(projectId, taskGroup, taskId)``: as stated, else the parts of the task key (which keeps the originals)."""
        project, group, task = self.task_key.split(":", 2)
        return (self.project_id or project, self.task_group or group, self.task_id or task)

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
    """One run of the task; the contract describes the entry in prose only, so every field is optional."""

    run_timestamp: Annotated[Timestamp | None, ADDED] = None
    run_dir: Annotated[RelPath | None, ADDED] = None
    run_manifest_path: Annotated[RelPath | None, ADDED] = None
    run_date_time_segment: Annotated[Timestamp | None, ADDED] = None
    task_type: Annotated[str | None, ADDED] = None
    stage: int | None = None
    work_category: Annotated[str | None, ADDED] = None
    status: Annotated[str | None, ADDED] = None
    worker_prompt_dir: Annotated[RelPath | None, ADDED] = None
    report_path: Annotated[RelPath | None, ADDED] = None
    resume_command_path: Annotated[RelPath | None, ADDED] = None
    related_tasks: Annotated[list[RelatedTask], BeforeValidator(_related), ADDED] = Field(default_factory=list)
    workflow_snapshot: Annotated[Any, ADDED] = None
    fix_cycle_id: str | None = None


class Timeline(Model):
    """``history/timeline.json`` (a bare list of entries is read too)."""

    #: The item definition of the bare-list form (see :func:`~.base.bare_list_schema`).
    BARE_LIST_ITEM: ClassVar[str] = "TimelineEntry"
    _bare = model_validator(mode="before")(accept_bare_list("entries"))

    schema_version: Annotated[str | None, ADDED] = None
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    entries: list[TimelineEntry] = Field(default_factory=list)


class FixCycleEvent(Model):
    """One line of append-only ``history/fix-cycles.jsonl`` (its shape is this project's)."""

    event: Annotated[Literal["opened", "closed"] | None, ADDED] = None
    cycle_id: Annotated[str | None, ADDED] = None
    cycle: Annotated[Annotated[int, Field(ge=1)] | None, ADDED] = None
    symptom: Annotated[str, ADDED] = ""
    target_report: str | None = None
    at: Annotated[Timestamp | None, ADDED] = None


def derive_fix_cycles(events: list[FixCycleEvent]) -> FixCyclesSummary:
    """The ``fixCycles`` summary that ``fix-cycles.jsonl`` implies (the one owner of this rule)."""
    opened: dict[str, FixCycleEvent] = {}
    closed: dict[str, str] = {}
    order: list[str] = []
    for ev in events:
        if ev.event is None or ev.cycle_id is None or ev.cycle is None:
            continue  # not a cycle event this derivation can use
        if ev.event == "opened":
            if ev.cycle_id not in opened:
                order.append(ev.cycle_id)
            opened[ev.cycle_id] = ev
        else:
            closed[ev.cycle_id] = ev.at or ""
    if not order:
        return FixCyclesSummary(count=0)
    open_ids = [cid for cid in order if cid not in closed]
    last = opened[max(order, key=lambda cid: (opened[cid].cycle or 0, order.index(cid)))]
    latest = FixCycleLatest(
        cycle=last.cycle or 0,
        symptom=last.symptom,
        target_report=last.target_report,
        closed_at=closed.get(last.cycle_id or ""),
    )
    return FixCyclesSummary(count=len(order), open_cycle_id=open_ids[-1] if open_ids else None, latest=latest)


class RecapEntry(Model):
    """One line of append-only ``recap/recap-log.jsonl`` (the contract names the file only)."""

    at: Annotated[Timestamp | None, ADDED] = None
    task_type: Annotated[str | None, ADDED] = None
    run_date_time_segment: Annotated[Timestamp | None, ADDED] = None
    author: str | None = None
    summary: Annotated[str | None, ADDED] = None
