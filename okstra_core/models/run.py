"""Run-level artifacts: run manifest, run contexts, team-state, prompt metadata, errors, status."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Final, Literal, TypeVar

from pydantic import ConfigDict, Field, model_validator

from .base import (
    ADDED,
    InvocationIdentity,
    Model,
    RelPath,
    RelPosixPath,
    Sha256,
    Strict,
    TaskKeyStr,
    Timestamp,
    model_attr,
    require_uniform_identity,
    uniform_identity_schema,
)

T = TypeVar("T")

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


#: The run statuses of a run that has not ended, and of one that ended badly (a run ``completed`` ended well;
#: ``not-run``, ``blocked`` and ``cancelled`` are neither). The statistics, the notices, the activity and
#: now-running all group statuses by these.
COMPLETED_STATUS: Final = "completed"
IN_PROGRESS_STATUSES: Final = frozenset({"prepared", "in-progress"})
FAILED_STATUSES: Final = frozenset({"error", "failed", "timeout"})


def final_status(manifest_status: str | None, status_text: str | None) -> tuple[str | None, bool]:
    """A run's status and whether the run was closed: the word in the status file its manifest names
    (*status_text*, None when there is no such file) is the run's final word; without one, the manifest's
    own status stands. An unknown word gives None (the checker reports it)."""
    if status_text is not None:
        value = status_text.strip()
        return (value if value in RUN_STATUSES else None), True
    return manifest_status, False


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
    """A row of ``workerAssignments[]``; the contract names the persisted runner values."""

    worker_id: str | None = None
    role: str | None = None
    provider: str | None = None
    model: str | None = None
    runner: Literal["native-session", "cli-wrapper"] | None = None
    audience: str | None = None


class InvocationAssignment(InvocationIdentity):
    """A row of ``invocationAssignments[]``: what invocation metadata refers to by ``assignmentRef``."""

    assignment_ref: str
    invocation_id: str | None = None
    worker_id: str | None = None
    audience: str | None = None
    dispatch_kind: str | None = None
    prompt_path: RelPath | None = None
    meta_path: RelPath | None = None


class AgentContract(Model):
    """Immutable for the lifetime of the run."""

    duty_root: Annotated[RelPath | None, ADDED] = None
    catalog_digest: Annotated[Sha256 | None, ADDED] = None
    reservation_root: Annotated[RelPath | None, ADDED] = None
    audiences: Annotated[dict[str, str], ADDED] = Field(default_factory=lambda: dict(AUDIENCE_PREAMBLES))
    error_contract_path: Annotated[str, ADDED] = ERROR_CONTRACT_PATH


class AuthorizedPaths(Model):
    """Allowlisted instruction, prompt and result roots, and the declared result paths (None: not stated)."""

    instruction_roots: Annotated[list[RelPath] | None, ADDED] = None
    prompt_roots: Annotated[list[RelPath] | None, ADDED] = None
    result_roots: Annotated[list[RelPath] | None, ADDED] = None
    declared_results: Annotated[list[RelPath] | None, ADDED] = None


class LeadSession(Model):
    session_id: str | None = None
    accounting_mode: str | None = None


class RunManifest(Model):
    """``manifests/run-manifest-<task-type>-<seq>.json``.

    Required: ``runDateTimeSegment`` ("the cross-category identifier is the manifest's
    runDateTimeSegment"). The "main contents" the contract lists in prose are optional on read.
    """

    model_config = ConfigDict(json_schema_extra=uniform_identity_schema("schemaVersion", ["invocationAssignments"]))

    schema_version: Annotated[str | None, ADDED] = None
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    task_type: Annotated[str | None, ADDED] = None
    work_category: Annotated[str | None, ADDED] = None
    stage: Annotated[int, Field(ge=1)] | None = None
    run_date_time_segment: Timestamp
    run_dir: Annotated[RelPath | None, ADDED] = None
    task_brief_path: RelPath | None = None
    analysis_target: Any = None
    related_tasks: list[Any] = Field(default_factory=list)
    selected_workers: list[Any] = Field(default_factory=list)
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
    status: Annotated[str | None, ADDED] = None
    workflow_snapshot: Any = None
    team_contract: Any = None
    fix_cycle_id: str | None = None
    agent_contract: AgentContract | None = None
    invocation_assignments: list[InvocationAssignment] = Field(default_factory=list)
    authorized_paths: AuthorizedPaths | None = None

    @model_validator(mode="after")
    def _uniform(self) -> RunManifest:
        require_uniform_identity(list(self.invocation_assignments), self.schema_version, "invocationAssignments")
        return self

    def path_fields(self) -> list[tuple[str, str]]:
        """Every path this manifest records, as ``(field, value)``: all are stored relative to the project root."""
        out: list[tuple[str, str]] = []
        for attr, label in _RUN_PATH_FIELDS:
            value = getattr(self, attr)
            if value:
                out.append((label, value))
        out.extend((f"workerPromptPaths.{k}", v) for k, v in self.worker_prompt_paths.items())
        contract = self.agent_contract
        if contract is not None:
            for label, value in (("dutyRoot", contract.duty_root), ("reservationRoot", contract.reservation_root)):
                if value:
                    out.append((f"agentContract.{label}", value))
        for i, row in enumerate(self.invocation_assignments):
            for label, value in (("promptPath", row.prompt_path), ("metaPath", row.meta_path)):
                if value:
                    out.append((f"invocationAssignments[{i}].{label}", value))
        paths = self.authorized_paths
        if paths is not None:
            for label in ("instructionRoots", "promptRoots", "resultRoots", "declaredResults"):
                values = getattr(paths, _snake(label)) or []
                out.extend((f"authorizedPaths.{label}[{i}]", v) for i, v in enumerate(values))
        return out


_RUN_PATH_FIELDS: Final = (
    ("run_dir", "runDir"),
    ("task_brief_path", "taskBriefPath"),
    ("resume_command_path", "resumeCommandPath"),
    ("expected_report_path", "expectedReportPath"),
    ("expected_status_path", "expectedStatusPath"),
    ("prompt_snapshot_path", "promptSnapshotPath"),
    ("verification_target_path", "verificationTargetPath"),
    ("worker_prompt_dir", "workerPromptDir"),
)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


#: Fields of a run manifest that may never change once published.
RUN_MANIFEST_IMMUTABLE: Final = ("agentContract", "invocationAssignments")


class RunIdentity(Model):
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    task_type: Annotated[str | None, ADDED] = None
    stage: Annotated[int, Field(ge=1)] | None = None
    run_date_time_segment: Annotated[Timestamp | None, ADDED] = None


class PathHints(Model):
    """Enough to rebuild every legacy flat path key: the run dir and each category's seq."""

    run_dir: Annotated[RelPath | None, ADDED] = None
    seqs: Annotated[dict[str, str], ADDED] = Field(default_factory=dict)


class RuntimeResources(Model):
    audiences: dict[str, str] = Field(default_factory=lambda: dict(AUDIENCE_PREAMBLES))
    error_contract_path: str = ERROR_CONTRACT_PATH


def _compact_context(schema_version: str | None, identity: Any, path_hints: Any) -> None:
    """From schemaVersion 2.0 the contract says a context stores ``identity`` + ``pathHints``."""
    if schema_version is not None and schema_version.startswith("2.") and (identity is None or path_hints is None):
        raise ValueError(f"schemaVersion {schema_version} stores identity + pathHints")


class RunContext(Model):
    """``manifests/run-context-<task-type>-<seq>.json``: ``identity`` + ``pathHints`` from schema 2.0."""

    schema_version: str | None = None
    identity: RunIdentity | None = None
    path_hints: PathHints | None = None
    runtime_resources: RuntimeResources | None = None

    @model_validator(mode="after")
    def _compact(self) -> RunContext:
        _compact_context(self.schema_version, self.identity, self.path_hints)
        return self


class ActiveWorker(Model):
    worker_id: Annotated[str | None, ADDED] = None
    role: Annotated[str | None, ADDED] = None
    audience: Annotated[str | None, ADDED] = None


class ActiveRunContext(Model):
    """``state/active-run-context-<task-type>-<seq>.json``: the lead's compact intake (2.0: identity + pathHints)."""

    schema_version: str | None = None
    identity: RunIdentity | None = None
    path_hints: PathHints | None = None
    workers: Annotated[list[ActiveWorker], ADDED] = Field(default_factory=list)
    runtime_resources: RuntimeResources | None = None

    @model_validator(mode="after")
    def _compact(self) -> ActiveRunContext:
        _compact_context(self.schema_version, self.identity, self.path_hints)
        return self


class WorkerDispatch(InvocationIdentity):
    """A code-owned worker launch. Keyed by ``dispatchId`` when it has one."""

    dispatch_id: str | None = None
    worker_id: Annotated[str | None, ADDED] = None
    invocation_id: str | None = None
    session_id: str | None = None
    pane_id: str | None = None
    prompt_path: RelPath | None = None
    dispatched_at: Annotated[Timestamp | None, ADDED] = None
    status: Annotated[str | None, ADDED] = None


class AgentDispatch(InvocationIdentity):
    """A host-native agent call."""

    dispatch_id: str | None = None
    worker_id: Annotated[str | None, ADDED] = None
    invocation_id: Annotated[str | None, ADDED] = None
    prompt_path: Annotated[RelPath | None, ADDED] = None
    dispatched_at: Annotated[Timestamp | None, ADDED] = None
    status: Annotated[str | None, ADDED] = None


class AgentResultLink(Strict):
    """Associates an accepted result path with exactly one dispatch id (and vice versa)."""

    dispatch_id: str
    result_path: RelPath
    accepted_at: Annotated[Timestamp | None, ADDED] = None


class TeamState(Model):
    """``state/team-state-<task-type>-<seq>.json``."""

    model_config = ConfigDict(
        json_schema_extra=uniform_identity_schema("schemaVersion", ["workerDispatches", "agentDispatches"])
    )

    schema_version: Annotated[str | None, ADDED] = None
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    task_type: Annotated[str | None, ADDED] = None
    run_date_time_segment: Timestamp
    worker_dispatches: list[WorkerDispatch] = Field(default_factory=list)
    agent_dispatches: list[AgentDispatch] = Field(default_factory=list)
    agent_result_links: list[AgentResultLink] = Field(default_factory=list)
    spec_link_gate: Annotated[str | None, ADDED] = None
    prompt_delivery_verified: Literal[False] = False

    @model_validator(mode="after")
    def _uniform(self) -> TeamState:
        rows: list[InvocationIdentity] = [*self.worker_dispatches, *self.agent_dispatches]
        require_uniform_identity(rows, self.schema_version, "dispatch")
        return self


class PromptDigests(Strict):
    """The five catalog / assignment / duty / instruction / prompt digests (each checked when present)."""

    catalog: Sha256 | None = None
    assignment: Sha256 | None = None
    duty: Sha256 | None = None
    instruction: Sha256 | None = None
    prompt: Sha256 | None = None


class PromptMeta(InvocationIdentity):
    """``prompts/<prompt-name>.md.meta.json``: published last, the prompt's completion marker.

    Required: ``assignmentRef`` ("every invocation metadata file refers back to that
    manifest and to one assignmentRef") and the run's ``runDateTimeSegment``.
    """

    schema_version: Annotated[str | None, ADDED] = None
    invocation_id: Annotated[str | None, ADDED] = None
    worker_id: Annotated[str | None, ADDED] = None
    audience: Annotated[str | None, ADDED] = None
    dispatch_kind: Annotated[str | None, ADDED] = None
    assignment_ref: str
    run_manifest_path: Annotated[RelPath | None, ADDED] = None
    prompt_path: Annotated[RelPath | None, ADDED] = None
    duty_id: Annotated[str | None, ADDED] = None
    duty_path: Annotated[RelPath | None, ADDED] = None
    instruction_path: Annotated[RelPath | None, ADDED] = None
    source_paths: Annotated[list[RelPath], ADDED] = Field(default_factory=list)
    instruction_provenance: Annotated[Annotated[list[Provenance], Field(min_length=1)] | None, ADDED] = None
    digests: Annotated[PromptDigests | None, ADDED] = None
    published_at: Annotated[Timestamp | None, ADDED] = None
    #: The execution this prompt belongs to (groups an execution's files across categories).
    run_date_time_segment: Timestamp

    @model_validator(mode="after")
    def _version(self) -> PromptMeta:
        require_uniform_identity([self], self.schema_version, "prompt metadata")
        return self


class DutyEntry(Model):
    duty_id: Annotated[str | None, ADDED] = None
    path: Annotated[RelPath | None, ADDED] = None
    sha256: Annotated[Sha256 | None, ADDED] = None


class DutyCatalog(Model):
    """``prompts/duty-contracts-<task-type>-<seq>/catalog.json`` (this project's shape of the snapshot's index)."""

    schema_version: Annotated[str | None, ADDED] = None
    duties: Annotated[list[DutyEntry], ADDED] = Field(default_factory=list)


class ErrorRecord(Model):
    """One line of ``logs/errors-<task-type>-<seq>.jsonl`` (the contract names the file only)."""

    at: Annotated[Timestamp | None, ADDED] = None
    worker_id: Annotated[str | None, ADDED] = None
    severity: str | None = None
    code: Annotated[str | None, ADDED] = None
    message: Annotated[str | None, ADDED] = None


def segment_of(doc: object) -> str | None:
    """The ``runDateTimeSegment`` a run-level document records: its own, or a run context's ``identity``'s.

    The one owner of "which execution a file belongs to" (DECISIONS 1: the read
    side groups an execution's files by it); the checker's seq rule uses it too.
    """
    seg = model_attr(doc, "run_date_time_segment")
    if seg is None:
        identity = model_attr(doc, "identity")
        seg = model_attr(identity, "run_date_time_segment") if identity is not None else None
    return seg if isinstance(seg, str) and seg else None


def segments_by_seq(items: Iterable[tuple[str, int, str, T]]) -> dict[tuple[str, int], dict[str, list[T]]]:
    """``(category, seq) -> segment -> items`` for ``(category, seq, segment, item)`` rows.

    One execution takes one seq per category folder, so a ``(category, seq)`` with
    more than one segment is shared by two executions; with one, it names the
    execution every file of that seq in that folder belongs to.
    """
    out: dict[tuple[str, int], dict[str, list[T]]] = {}
    for category, seq, segment, item in items:
        out.setdefault((category, seq), {}).setdefault(segment, []).append(item)
    return out
