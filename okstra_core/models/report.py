"""Final report data (schema 3.0, and historical 2.0) and the selected-direction snapshot."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import ConfigDict, Field, model_validator

from .base import Model, OptionId, PrepId, RelPath, Sha256, Strict, TaskKeyStr, Timestamp


class Finding(Model):
    finding_id: str
    title: str
    severity: Literal["critical", "high", "medium", "low", "info"]
    detail: str
    evidence: list[str] = Field(default_factory=list)


class OptionCandidate(Model):
    option_id: OptionId
    title: str
    summary: str
    pros: list[str] = Field(default_factory=list)
    cons: list[str] = Field(default_factory=list)
    risk: Literal["low", "medium", "high"] = "medium"


class Preselection(Model):
    option_id: OptionId
    confirmed_by: str
    confirmed_at: Timestamp


class OptionCandidates(Model):
    mode: Literal["comparison", "preselected-validation"]
    candidates: Annotated[list[OptionCandidate], Field(min_length=1)]
    recommendation: OptionId | None = None
    preselected: Preselection | None = None


class PlanStage(Model):
    stage: Annotated[int, Field(ge=1)]
    title: str
    goal: str
    tasks: list[str] = Field(default_factory=list)


class DesignItem(Model):
    prep_id: PrepId
    title: str
    status: Literal["confirmed", "provisional", "blocked"]
    question: str = ""
    #: Fields a design-prep input must answer for this item.
    fields: list[str] = Field(default_factory=list)
    #: The assessment the fingerprint is taken over; absent in a markerless legacy plan.
    assessment: dict[str, Any] | None = None


class ImplementationPlan(Model):
    stages: Annotated[list[PlanStage], Field(min_length=1)]
    design_items: list[DesignItem] = Field(default_factory=list)


class ChangeRecord(Model):
    path: str
    summary: str


class CheckRecord(Model):
    name: str
    result: Literal["passed", "failed", "skipped"]


class ImplementationResults(Model):
    stage: Annotated[int, Field(ge=1)]
    outcome: Literal["passed", "failed", "partial"]
    changes: list[ChangeRecord] = Field(default_factory=list)
    checks: list[CheckRecord] = Field(default_factory=list)


class Criterion(Model):
    criterion: str
    result: Literal["met", "unmet", "not-assessed"]
    evidence: str = ""


class VerificationVerdict(Model):
    verdict: Literal["pass", "fail", "conditional"]
    criteria: list[Criterion] = Field(default_factory=list)


class ClarificationItem(Model):
    item_id: Annotated[str, Field(pattern=r"^CQ-[0-9]{3}$")]
    question: str
    context: str = ""
    options: list[str] = Field(default_factory=list)


class ConvergenceSummary(Model):
    terminal_state: str
    rounds: int
    confirmed: int = 0
    rejected: int = 0
    disputed: int = 0
    state_path: RelPath | None = None


#: Task type -> the one deliverable key its report carries.
DELIVERABLE_KEYS: Final = {
    "analysis": "analysisFindings",
    "option-selection": "optionCandidates",
    "implementation-planning": "implementationPlan",
    "implementation": "implementationResults",
    "final-verification": "verificationVerdict",
}
_DELIVERABLE_ATTRS: Final = {
    "analysisFindings": "analysis_findings",
    "optionCandidates": "option_candidates",
    "implementationPlan": "implementation_plan",
    "implementationResults": "implementation_results",
    "verificationVerdict": "verification_verdict",
}


class DeliverableMismatch(ValueError):
    """A report does not carry exactly one deliverable matching its task type (see :func:`deliverable_problem`)."""


def deliverable_problem(task_type: str, present: list[str]) -> str | None:
    """Why a report's deliverables break "exactly one, matching the task type" (None when fine)."""
    expected = DELIVERABLE_KEYS.get(task_type)
    if expected is None:
        return f"task type {task_type!r} has no known deliverable"
    if len(present) != 1:
        listed = ", ".join(present) if present else "none"
        return f"a report carries exactly one task-type deliverable; found {listed}"
    if present[0] != expected:
        return f"deliverable {present[0]} does not match task type {task_type} (expected {expected})"
    return None


def _deliverable_schema(schema: dict[str, Any]) -> None:
    """JSON Schema form of "exactly one deliverable, matching the task type"."""
    keys = list(DELIVERABLE_KEYS.values())
    rules: list[dict[str, Any]] = [{"properties": {"taskType": {"enum": list(DELIVERABLE_KEYS)}}}]
    for task_type, key in DELIVERABLE_KEYS.items():
        others = [k for k in keys if k != key]
        rules.append(
            {
                "if": {"properties": {"taskType": {"const": task_type}}, "required": ["taskType"]},
                "then": {"required": [key], "not": {"anyOf": [{"required": [o]} for o in others]}},
            }
        )
    schema["allOf"] = rules


class _ReportBase(Model):
    model_config = ConfigDict(json_schema_extra=_deliverable_schema)

    task_key: TaskKeyStr
    task_type: str
    title: str
    summary: str
    analysis_findings: list[Finding] | None = None
    option_candidates: OptionCandidates | None = None
    implementation_plan: ImplementationPlan | None = None
    implementation_results: ImplementationResults | None = None
    verification_verdict: VerificationVerdict | None = None
    clarification_items: list[ClarificationItem] = Field(default_factory=list)
    convergence: ConvergenceSummary | None = None
    selected_direction_ref: RelPath | None = None

    @model_validator(mode="after")
    def _one_deliverable(self) -> _ReportBase:
        present = [alias for alias, attr in _DELIVERABLE_ATTRS.items() if getattr(self, attr) is not None]
        problem = deliverable_problem(self.task_type, present)
        if problem:
            raise DeliverableMismatch(problem)
        return self

    def deliverable_key(self) -> str:
        return DELIVERABLE_KEYS[self.task_type]

    def deliverable(self) -> Any:
        return getattr(self, _DELIVERABLE_ATTRS[DELIVERABLE_KEYS[self.task_type]])


class FinalReportV3(_ReportBase):
    """``final-report-<task-type>-<seq>.data.json``, schema 3.0 (new bundles)."""

    schema_version: Literal["3.0"]
    report_language: str
    run_date_time_segment: str
    generated_at: Timestamp


class FinalReportV2(_ReportBase):
    """Historical schema 2.0 report data, read as it is."""

    schema_version: Literal["2.0"]
    report_language: str | None = None
    run_date_time_segment: str | None = None
    generated_at: Timestamp | None = None


FinalReport = FinalReportV3 | FinalReportV2


class SelectedDirection(Model):
    """``instruction-set/selected-direction.json``, written by planning prepare."""

    schema_version: str
    task_key: TaskKeyStr
    option_id: OptionId
    title: str
    summary: str
    mode: Literal["comparison", "preselected-validation"]
    source_report_path: RelPath
    source_data_sha256: Sha256
    user_response_path: RelPath | None = None
    selected_at: Timestamp


class StageEvidence(Strict):
    kind: str
    path: RelPath
    sha256: Sha256 | None = None


class CarryStage(Model):
    """``runs/implementation/carry/stage-<n>.json``: execution evidence for one stage."""

    schema_version: str
    task_key: TaskKeyStr
    stage: Annotated[int, Field(ge=1)]
    run_dir: RelPath
    run_manifest_path: RelPath
    outcome: Literal["passed", "failed", "partial"]
    evidence: list[StageEvidence] = Field(default_factory=list)
    recorded_at: Timestamp


class ConsumerLink(Model):
    """One line of ``runs/implementation-planning/consumers.jsonl``."""

    stage: Annotated[int, Field(ge=1)]
    plan_report_path: RelPath
    consumer_run_dir: RelPath
    consumer_run_manifest_path: RelPath
    consumed_at: Timestamp


__all__ = ["FinalReport", "FinalReportV2", "FinalReportV3", "Sha256"]
