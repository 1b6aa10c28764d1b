"""Convergence decision trail under a run's ``state/``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import ADDED, Model, RelPath, Strict, TaskKeyStr, Timestamp

Vote = Literal["agree", "disagree", "abstain"]
Verdict = Literal["confirmed", "rejected", "disputed"]


class GroupedFinding(Model):
    finding_id: str | None = None
    analyser_id: str | None = None
    summary: str | None = None


class FindingGroup(Model):
    group_id: str | None = None
    title: str | None = None
    tickets: list[str] = Field(default_factory=list)
    findings: list[GroupedFinding] = Field(default_factory=list)


class ConvergenceGroups(Model):
    """Lead-authored semantic groups and the resolved analyser roster (Round 0)."""

    schema_version: Annotated[str | None, ADDED] = None
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: Timestamp
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    roster: Annotated[list[str], ADDED] = Field(default_factory=list)
    groups: Annotated[list[FindingGroup], ADDED] = Field(default_factory=list)


class FindingState(Model):
    state: Literal["open", "confirmed", "rejected", "disputed"] | None = None
    votes: dict[str, Vote] = Field(default_factory=dict)


class RoundRecord(Model):
    round: Annotated[int, Field(ge=0)] | None = None
    status: Literal["planned", "collected", "reduced"] | None = None


class ConvergenceWork(Model):
    """Engine-owned queue, finding state and round history."""

    schema_version: Annotated[str | None, ADDED] = None
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: Timestamp
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    status: Annotated[Literal["open", "terminal"] | None, ADDED] = None
    queue: Annotated[list[str], ADDED] = Field(default_factory=list)
    findings: Annotated[dict[str, FindingState], ADDED] = Field(default_factory=dict)
    rounds: Annotated[list[RoundRecord], ADDED] = Field(default_factory=list)
    seeded_from: Annotated[RelPath | None, ADDED] = None


class PlannedDispatch(Model):
    analyser_id: str | None = None
    group_ids: list[str] = Field(default_factory=list)
    prompt_path: RelPath | None = None


class RoundPlan(Model):
    """Immutable roster-aware dispatch plan for one round (its round number is in its name)."""

    schema_version: Annotated[str | None, ADDED] = None
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: Timestamp
    round: Annotated[Annotated[int, Field(ge=1)] | None, ADDED] = None
    roster: Annotated[list[str], ADDED] = Field(default_factory=list)
    dispatches: Annotated[list[PlannedDispatch], ADDED] = Field(default_factory=list)


class ParsedVote(Strict):
    group_id: str | None = None
    vote: Vote | None = None
    rationale: str | None = None


class AdapterOutcome(Model):
    analyser_id: str | None = None
    status: Literal["completed", "timeout", "error", "not-run"] | None = None
    votes: list[ParsedVote] = Field(default_factory=list)


class RoundResults(Model):
    """Adapter outcomes and parsed votes supplied to the reducer."""

    schema_version: Annotated[str | None, ADDED] = None
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: Timestamp
    round: Annotated[Annotated[int, Field(ge=1)] | None, ADDED] = None
    outcomes: Annotated[list[AdapterOutcome], ADDED] = Field(default_factory=list)


class GroupOutcome(Model):
    group_id: str | None = None
    verdict: Verdict | None = None
    votes: dict[str, Vote] = Field(default_factory=dict)


class ConvergenceFinal(Model):
    """Validated terminal state (schema v1.2) consumed by reporting and Phase 7.

    Required: ``schemaVersion`` 1.2 (the contract names the terminal state's schema) and the run's segment.
    """

    schema_version: Literal["1.2"]
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: Timestamp
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    terminal_state: Annotated[Literal["converged", "max-rounds", "aborted"] | None, ADDED] = None
    rounds: Annotated[Annotated[int, Field(ge=0)] | None, ADDED] = None
    roster: Annotated[list[str], ADDED] = Field(default_factory=list)
    groups: Annotated[list[GroupOutcome], ADDED] = Field(default_factory=list)
    finalized_at: Annotated[Timestamp | None, ADDED] = None
