"""Convergence decision trail under a run's ``state/``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import Model, RelPath, Strict, TaskKeyStr, Timestamp

Vote = Literal["agree", "disagree", "abstain"]
Verdict = Literal["confirmed", "rejected", "disputed"]


class GroupedFinding(Model):
    finding_id: str
    analyser_id: str
    summary: str


class FindingGroup(Model):
    group_id: str
    title: str
    tickets: list[str] = Field(default_factory=list)
    findings: list[GroupedFinding]


class ConvergenceGroups(Model):
    """Lead-authored semantic groups and the resolved analyser roster (Round 0)."""

    schema_version: str
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: str | None = None
    task_key: TaskKeyStr
    roster: Annotated[list[str], Field(min_length=1)]
    groups: list[FindingGroup]


class FindingState(Model):
    state: Literal["open", "confirmed", "rejected", "disputed"]
    votes: dict[str, Vote] = Field(default_factory=dict)


class RoundRecord(Model):
    round: Annotated[int, Field(ge=0)]
    status: Literal["planned", "collected", "reduced"]


class ConvergenceWork(Model):
    """Engine-owned queue, finding state and round history."""

    schema_version: str
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: str | None = None
    task_key: TaskKeyStr
    status: Literal["open", "terminal"]
    queue: list[str] = Field(default_factory=list)
    findings: dict[str, FindingState] = Field(default_factory=dict)
    rounds: list[RoundRecord] = Field(default_factory=list)
    seeded_from: RelPath | None = None


class PlannedDispatch(Model):
    analyser_id: str
    group_ids: list[str]
    prompt_path: RelPath


class RoundPlan(Model):
    """Immutable roster-aware dispatch plan for one round."""

    schema_version: str
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: str | None = None
    round: Annotated[int, Field(ge=1)]
    roster: list[str]
    dispatches: list[PlannedDispatch]


class ParsedVote(Strict):
    group_id: str
    vote: Vote
    rationale: str = ""


class AdapterOutcome(Model):
    analyser_id: str
    status: Literal["completed", "timeout", "error", "not-run"]
    votes: list[ParsedVote] = Field(default_factory=list)


class RoundResults(Model):
    """Adapter outcomes and parsed votes supplied to the reducer."""

    schema_version: str
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: str | None = None
    round: Annotated[int, Field(ge=1)]
    outcomes: list[AdapterOutcome]


class GroupOutcome(Model):
    group_id: str
    verdict: Verdict
    votes: dict[str, Vote] = Field(default_factory=dict)


class ConvergenceFinal(Model):
    """Validated terminal state (schema v1.2) consumed by reporting and Phase 7."""

    schema_version: Literal["1.2"]
    #: The execution this file belongs to (groups an execution's files across categories).
    run_date_time_segment: str | None = None
    task_key: TaskKeyStr
    terminal_state: Literal["converged", "max-rounds", "aborted"]
    rounds: Annotated[int, Field(ge=0)]
    roster: list[str]
    groups: list[GroupOutcome]
    finalized_at: Timestamp
