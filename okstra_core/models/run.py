"""Run-level artifacts: run manifest, run contexts, team-state, prompt metadata, errors, status."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import ConfigDict, Field, model_validator

from .base import (
    InvocationIdentity,
    Model,
    RelPath,
    RelPosixPath,
    Sha256,
    Strict,
    TaskKeyStr,
    Timestamp,
    require_uniform_identity,
    uniform_identity_schema,
)

#: Status values a run, a worker or a ``status/final-*.status`` file may hold.
RUN_STATUSES: Final = (
    "prepared",
    "in-progress",
    "completed",
    "timeout",
    "error",
    "not-run",
    "failed",
    "blocked",
    "cancelled",
)

#: Audience -> persisted preamble path.
AUDIENCE_PREAMBLES: Final = {
    "analysis": "templates/worker-prompt-preamble.md",
    "implementation": "templates/implementation-worker-preamble.md",
    "report-writing": "templates/report-writer-prompt-preamble.md",
}
ERROR_CONTRACT_PATH: Final = "templates/worker-error-contract.md"

Audience = Literal["lead", "analysis", "implementation", "report-writing", "reverify"]
DispatchKind = Literal["lead", "worker", "reverify", "report-writer", "host-native"]


class Provenance(Strict):
    """One instruction provenance entry: a normalised POSIX path relative to its authority."""

    kind: Literal["project", "runtime"]
    path: RelPosixPath


class WorkerAssignment(Model):
    worker_id: str
    role: Literal["analyser", "executor", "verifier", "report-writer"]
    provider: str
    model: str
    runner: Literal["native-session", "cli-wrapper"]
    audience: Audience


class InvocationAssignment(InvocationIdentity):
    assignment_ref: str
    invocation_id: str
    worker_id: str
    audience: Audience
    dispatch_kind: DispatchKind
    prompt_path: RelPath
    meta_path: RelPath


class AgentContract(Model):
    """Immutable for the lifetime of the run."""

    duty_root: RelPath
    catalog_digest: Sha256
    reservation_root: RelPath
    audiences: dict[str, str] = Field(default_factory=lambda: dict(AUDIENCE_PREAMBLES))
    error_contract_path: str = ERROR_CONTRACT_PATH


class AuthorizedPaths(Model):
    """Allowlisted instruction, prompt and result roots, and the declared result paths."""

    instruction_roots: list[RelPath]
    prompt_roots: list[RelPath]
    result_roots: list[RelPath]
    declared_results: list[RelPath] = Field(default_factory=list)


class LeadSession(Model):
    session_id: str
    accounting_mode: str = "host-native"


class RunManifest(Model):
    """``manifests/run-manifest-<task-type>-<seq>.json``."""

    model_config = ConfigDict(json_schema_extra=uniform_identity_schema("schemaVersion", ["invocationAssignments"]))

    schema_version: str
    task_key: TaskKeyStr
    task_type: str
    work_category: str
    stage: Annotated[int, Field(ge=1)] | None = None
    run_date_time_segment: str
    run_dir: RelPath
    task_brief_path: RelPath | None = None
    analysis_target: str | None = None
    related_tasks: list[dict[str, Any]] = Field(default_factory=list)
    selected_workers: list[str] = Field(default_factory=list)
    worker_assignments: list[WorkerAssignment] = Field(default_factory=list)
    lead_session: LeadSession | None = None
    claude_session_id: str | None = None
    resume_command_path: RelPath | None = None
    expected_report_path: RelPath | None = None
    expected_status_path: RelPath | None = None
    prompt_snapshot_path: RelPath | None = None
    verification_target_path: str = ""
    verification_target_sha256: str = ""
    worker_prompt_dir: RelPath | None = None
    worker_prompt_paths: dict[str, RelPath] = Field(default_factory=dict)
    status: str
    workflow_snapshot: dict[str, Any] = Field(default_factory=dict)
    team_contract: dict[str, Any] = Field(default_factory=dict)
    fix_cycle_id: str | None = None
    agent_contract: AgentContract | None = None
    invocation_assignments: list[InvocationAssignment] = Field(default_factory=list)
    authorized_paths: AuthorizedPaths | None = None

    @model_validator(mode="after")
    def _uniform(self) -> RunManifest:
        require_uniform_identity(list(self.invocation_assignments), self.schema_version, "invocationAssignments")
        return self


#: Fields of a run manifest that may never change once published.
RUN_MANIFEST_IMMUTABLE: Final = ("agentContract", "invocationAssignments")


class RunIdentity(Model):
    task_key: TaskKeyStr
    task_type: str
    stage: Annotated[int, Field(ge=1)] | None = None
    run_date_time_segment: str


class PathHints(Model):
    """Enough to rebuild every legacy flat path key: the run dir and each category's seq."""

    run_dir: RelPath
    seqs: dict[str, str]


class RuntimeResources(Model):
    audiences: dict[str, str] = Field(default_factory=lambda: dict(AUDIENCE_PREAMBLES))
    error_contract_path: str = ERROR_CONTRACT_PATH


class RunContext(Model):
    """``manifests/run-context-<task-type>-<seq>.json`` (schema 2.0)."""

    schema_version: Literal["2.0"]
    identity: RunIdentity
    path_hints: PathHints
    runtime_resources: RuntimeResources = Field(default_factory=RuntimeResources)


class ActiveWorker(Model):
    worker_id: str
    role: str
    audience: Audience


class ActiveRunContext(Model):
    """``state/active-run-context-<task-type>-<seq>.json`` (schema 2.0): the lead's compact intake."""

    schema_version: Literal["2.0"]
    identity: RunIdentity
    path_hints: PathHints
    workers: list[ActiveWorker] = Field(default_factory=list)
    runtime_resources: RuntimeResources = Field(default_factory=RuntimeResources)


class WorkerDispatch(InvocationIdentity):
    """A code-owned worker launch. Keyed by ``dispatchId`` when it has one."""

    dispatch_id: str | None = None
    worker_id: str
    invocation_id: str | None = None
    session_id: str = ""
    pane_id: str | None = None
    prompt_path: RelPath | None = None
    dispatched_at: Timestamp
    status: str = "in-progress"


class AgentDispatch(InvocationIdentity):
    """A host-native agent call."""

    dispatch_id: str
    worker_id: str
    invocation_id: str | None = None
    prompt_path: RelPath | None = None
    dispatched_at: Timestamp
    status: str = "in-progress"


class AgentResultLink(Strict):
    """Associates an accepted result path with exactly one dispatch id (and vice versa)."""

    dispatch_id: str
    result_path: RelPath
    accepted_at: Timestamp


class TeamState(Model):
    """``state/team-state-<task-type>-<seq>.json``."""

    model_config = ConfigDict(
        json_schema_extra=uniform_identity_schema("schemaVersion", ["workerDispatches", "agentDispatches"])
    )

    schema_version: str
    task_key: TaskKeyStr
    task_type: str
    run_date_time_segment: str
    worker_dispatches: list[WorkerDispatch] = Field(default_factory=list)
    agent_dispatches: list[AgentDispatch] = Field(default_factory=list)
    agent_result_links: list[AgentResultLink] = Field(default_factory=list)
    spec_link_gate: str | None = None
    prompt_delivery_verified: Literal[False] = False

    @model_validator(mode="after")
    def _uniform(self) -> TeamState:
        rows: list[InvocationIdentity] = [*self.worker_dispatches, *self.agent_dispatches]
        require_uniform_identity(rows, self.schema_version, "dispatch")
        return self


class PromptDigests(Strict):
    """The five catalog / assignment / duty / instruction / prompt digests."""

    catalog: Sha256
    assignment: Sha256
    duty: Sha256
    instruction: Sha256
    prompt: Sha256


class PromptMeta(InvocationIdentity):
    """``prompts/<prompt-name>.md.meta.json``: published last, the prompt's completion marker."""

    schema_version: str
    invocation_id: str
    worker_id: str
    audience: Audience
    dispatch_kind: DispatchKind
    assignment_ref: str
    run_manifest_path: RelPath
    prompt_path: RelPath
    duty_id: str
    duty_path: RelPath
    instruction_path: RelPath
    source_paths: list[RelPath] = Field(default_factory=list)
    instruction_provenance: Annotated[list[Provenance], Field(min_length=1)]
    digests: PromptDigests
    published_at: Timestamp
    #: The execution this prompt belongs to (groups an execution's files across categories).
    run_date_time_segment: str | None = None

    @model_validator(mode="after")
    def _version(self) -> PromptMeta:
        require_uniform_identity([self], self.schema_version, "prompt metadata")
        return self


class DutyEntry(Strict):
    duty_id: str
    path: RelPath
    sha256: Sha256


class DutyCatalog(Model):
    """``prompts/duty-contracts-<task-type>-<seq>/catalog.json``."""

    schema_version: str
    duties: list[DutyEntry]


class ErrorRecord(Model):
    """One line of ``logs/errors-<task-type>-<seq>.jsonl``."""

    at: Timestamp
    worker_id: str | None = None
    severity: Literal["error", "warning", "info"] = "error"
    code: str
    message: str
