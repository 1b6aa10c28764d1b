"""Final report data (schema 3.0, and historical 2.0) and the selected-direction snapshot."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import ConfigDict, Field, model_validator

from .base import ADDED, Model, OptionId, PrepId, RelPath, Sha256, TaskKeyStr, Timestamp


class Finding(Model):
    finding_id: str | None = None
    title: str | None = None
    severity: Literal["critical", "high", "medium", "low", "info"] | None = None
    detail: str | None = None
    evidence: list[str] = Field(default_factory=list)


class OptionCandidate(Model):
    option_id: OptionId
    title: str | None = None
    summary: str | None = None
    pros: list[str] = Field(default_factory=list)
    cons: list[str] = Field(default_factory=list)
    risk: Literal["low", "medium", "high"] | None = None


class Preselection(Model):
    option_id: OptionId
    confirmed_by: str | None = None
    confirmed_at: Timestamp | None = None


class OptionCandidates(Model):
    mode: Literal["comparison", "preselected-validation"] | None = None
    candidates: Annotated[list[OptionCandidate], Field(min_length=1)]
    recommendation: OptionId | None = None
    preselected: Preselection | None = None


class PlanStage(Model):
    stage: Annotated[int, Field(ge=1)]
    title: str | None = None
    goal: str | None = None
    tasks: list[str] = Field(default_factory=list)


class DesignItem(Model):
    prep_id: PrepId
    title: str | None = None
    status: Literal["confirmed", "provisional", "blocked"]
    question: str | None = None
    #: Fields a design-prep input must answer for this item.
    fields: list[str] = Field(default_factory=list)
    #: The assessment the fingerprint is taken over; absent in a markerless legacy plan.
    assessment: dict[str, Any] | None = None


class ImplementationPlan(Model):
    stages: Annotated[list[PlanStage], Field(min_length=1)]
    design_items: list[DesignItem] = Field(default_factory=list)


class ChangeRecord(Model):
    path: str | None = None
    summary: str | None = None


class CheckRecord(Model):
    name: str | None = None
    result: Literal["passed", "failed", "skipped"] | None = None


class ImplementationResults(Model):
    stage: Annotated[int, Field(ge=1)] | None = None
    outcome: Literal["passed", "failed", "partial"] | None = None
    changes: list[ChangeRecord] = Field(default_factory=list)
    checks: list[CheckRecord] = Field(default_factory=list)


class Criterion(Model):
    criterion: str | None = None
    result: Literal["met", "unmet", "not-assessed"] | None = None
    evidence: str | None = None


class VerificationVerdict(Model):
    verdict: Literal["pass", "fail", "conditional"]
    criteria: list[Criterion] = Field(default_factory=list)


class ClarificationItem(Model):
    item_id: Annotated[str, Field(pattern=r"^CQ-[0-9]{3}$")]
    question: str | None = None
    context: str | None = None
    options: list[str] = Field(default_factory=list)


class ConvergenceSummary(Model):
    terminal_state: str | None = None
    rounds: int | None = None
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
    """Why a report's deliverables break "exactly one, matching the task type" (None when fine).

    A task type this project does not know has no known deliverable: that is no
    problem of the report (the run dir's unknown type is reported once, as info).
    """
    expected = DELIVERABLE_KEYS.get(task_type)
    if len(present) != 1:
        listed = ", ".join(present) if present else "none"
        if expected is None:
            return None if not present else f"a report carries at most one task-type deliverable; found {listed}"
        return f"a report carries exactly one task-type deliverable ({expected}); found {listed}"
    if expected is None:
        return None
    if present[0] != expected:
        return f"deliverable {present[0]} does not match task type {task_type} (expected {expected})"
    return None


def present_deliverables(value: Any) -> list[str]:
    """The deliverable keys a report (a model or its JSON object) carries."""
    if isinstance(value, dict):
        return [k for k in DELIVERABLE_KEYS.values() if value.get(k) is not None]
    return [alias for alias, attr in _DELIVERABLE_ATTRS.items() if getattr(value, attr, None) is not None]


def _deliverable_schema(schema: dict[str, Any]) -> None:
    """JSON Schema form of "exactly one deliverable, matching the task type"."""
    keys = list(DELIVERABLE_KEYS.values())
    rules: list[dict[str, Any]] = []
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
    """Report data; the task type is the file name's (``taskType`` in the data, when present, must agree)."""

    model_config = ConfigDict(json_schema_extra=_deliverable_schema)

    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    task_type: Annotated[str | None, ADDED] = None
    title: Annotated[str | None, ADDED] = None
    summary: Annotated[str | None, ADDED] = None
    analysis_findings: list[Finding] | None = None
    option_candidates: OptionCandidates | None = None
    implementation_plan: ImplementationPlan | None = None
    implementation_results: ImplementationResults | None = None
    verification_verdict: VerificationVerdict | None = None
    clarification_items: Annotated[list[ClarificationItem], ADDED] = Field(default_factory=list)
    convergence: ConvergenceSummary | None = None
    selected_direction_ref: RelPath | None = None

    @model_validator(mode="after")
    def _one_deliverable(self) -> _ReportBase:
        present = present_deliverables(self)
        if self.task_type is not None:
            problem = deliverable_problem(self.task_type, present)
        elif len(present) > 1:
            problem = f"a report carries exactly one task-type deliverable; found {', '.join(present)}"
        else:
            problem = None
        if problem:
            raise DeliverableMismatch(problem)
        return self

    def kind(self) -> str | None:
        """The task type the report is for: its ``taskType``, else the one known deliverable it carries."""
        if self.task_type is not None:
            return self.task_type
        present = present_deliverables(self)
        if len(present) == 1:
            return next(t for t, k in DELIVERABLE_KEYS.items() if k == present[0])
        return None

    def deliverable_key(self) -> str | None:
        kind = self.kind()
        return DELIVERABLE_KEYS.get(kind) if kind is not None else None

    def deliverable(self) -> Any:
        key = self.deliverable_key()
        return getattr(self, _DELIVERABLE_ATTRS[key]) if key is not None else None


class FinalReportV3(_ReportBase):
    """``final-report-<task-type>-<seq>.data.json``, schema 3.0 (new bundles)."""

    schema_version: Literal["3.0"]
    run_date_time_segment: Timestamp
    report_language: Annotated[str | None, ADDED] = None
    generated_at: Annotated[Timestamp | None, ADDED] = None


class FinalReportV2(_ReportBase):
    """Historical schema 2.0 report data, read as it is."""

    schema_version: Literal["2.0"]
    report_language: str | None = None
    run_date_time_segment: Timestamp | None = None
    generated_at: Timestamp | None = None


FinalReport = FinalReportV3 | FinalReportV2


class ReportTime(Model):
    """A final report's ``generatedAt`` alone: read from report data of any version, even data its model refuses."""

    generated_at: str | None = None


class SelectedDirection(Model):
    """``instruction-set/selected-direction.json``, written by planning prepare.

    Required: ``sourceDataSha256`` (the contract's digest field). The normalized choice is read when present.
    """

    schema_version: Annotated[str | None, ADDED] = None
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    option_id: Annotated[OptionId | None, ADDED] = None
    title: Annotated[str | None, ADDED] = None
    summary: Annotated[str | None, ADDED] = None
    mode: Annotated[Literal["comparison", "preselected-validation"] | None, ADDED] = None
    source_report_path: Annotated[RelPath | None, ADDED] = None
    source_data_sha256: Sha256
    user_response_path: RelPath | None = None
    selected_at: Annotated[Timestamp | None, ADDED] = None


class StageEvidence(Model):
    kind: str | None = None
    path: RelPath | None = None
    sha256: Sha256 | None = None


class CarryStage(Model):
    """``runs/implementation/carry/stage-<n>.json``: execution evidence for one stage (fields checked when present)."""

    schema_version: Annotated[str | None, ADDED] = None
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    stage: Annotated[Annotated[int, Field(ge=1)] | None, ADDED] = None
    run_dir: Annotated[RelPath | None, ADDED] = None
    run_manifest_path: Annotated[RelPath | None, ADDED] = None
    outcome: Annotated[Literal["passed", "failed", "partial"] | None, ADDED] = None
    evidence: Annotated[list[StageEvidence], ADDED] = Field(default_factory=list)
    recorded_at: Annotated[Timestamp | None, ADDED] = None


class ConsumerLink(Model):
    """One line of ``runs/implementation-planning/consumers.jsonl`` (fields checked when present)."""

    stage: Annotated[Annotated[int, Field(ge=1)] | None, ADDED] = None
    plan_report_path: Annotated[RelPath | None, ADDED] = None
    consumer_run_dir: Annotated[RelPath | None, ADDED] = None
    consumer_run_manifest_path: Annotated[RelPath | None, ADDED] = None
    consumed_at: Annotated[Timestamp | None, ADDED] = None


__all__ = ["FinalReport", "FinalReportV2", "FinalReportV3", "Sha256"]
