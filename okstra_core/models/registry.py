"""The registry tying each document kind to its model and schema file.

Importing it builds every model; :mod:`okstra_core.models` loads it on first use of
``DOC_KINDS``, ``DOC_KINDS_BY_NAME`` or ``DocKind``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pydantic import BaseModel

from . import convergence, invocation, manager, report, run, sidecars, task


@dataclass(frozen=True, slots=True)
class DocKind:
    """A document kind: its model, its schema file, and whether it is one JSON value or JSONL lines."""

    name: str
    model: type[BaseModel]
    schema_file: str
    jsonl: bool = False


def _d(name: str, model: type[BaseModel], *, jsonl: bool = False, schema_file: str | None = None) -> DocKind:
    return DocKind(name, model, schema_file or f"{name}.schema.json", jsonl)


DOC_KINDS: Final[tuple[DocKind, ...]] = (
    _d("task-catalog", task.TaskCatalog),
    _d("latest-task", task.LatestTask),
    _d("project", task.ProjectFile),
    _d("task-manifest", task.TaskManifest),
    _d("timeline", task.Timeline),
    _d("fix-cycles", task.FixCycleEvent, jsonl=True),
    _d("recap-log", task.RecapEntry, jsonl=True),
    _d("run-manifest", run.RunManifest),
    _d("run-context", run.RunContext),
    _d("active-run-context", run.ActiveRunContext),
    _d("team-state", run.TeamState),
    _d("prompt-meta", run.PromptMeta),
    _d("duty-catalog", run.DutyCatalog),
    _d("errors-log", run.ErrorRecord, jsonl=True),
    _d("convergence-groups", convergence.ConvergenceGroups),
    _d("convergence-work", convergence.ConvergenceWork),
    _d("convergence-round-plan", convergence.RoundPlan),
    _d("convergence-round-results", convergence.RoundResults),
    _d("convergence-final", convergence.ConvergenceFinal, schema_file="convergence-final-v1.2.schema.json"),
    _d("final-report-v3.0", report.FinalReportV3, schema_file="final-report-v3.0.schema.json"),
    _d("final-report-v2.0", report.FinalReportV2, schema_file="final-report-v2.0.schema.json"),
    _d("selected-direction", report.SelectedDirection),
    _d("carry", report.CarryStage),
    _d("consumers", report.ConsumerLink, jsonl=True),
    _d("invocation-meta", invocation.InvocationMeta),
    _d("invocation-result", invocation.ResultEnvelope),
    _d("invocation-completion", invocation.CompletionMarker),
    _d("manager", manager.ManagerFile),
    _d("manager-projects", manager.ProjectsFile),
    _d("manager-task-manifest", manager.ManagerTaskManifest),
    _d("manager-children", manager.ChildrenFile),
    _d("manager-directives", manager.Directive, jsonl=True),
    _d("manager-snapshots", manager.SnapshotsFile),
    _d("manager-events", manager.ManagerEvent, jsonl=True),
    _d("user-response-header", sidecars.UserResponseHeader),
    _d("design-prep-request-header", sidecars.DesignPrepRequestHeader),
    _d("design-prep-input-header", sidecars.DesignPrepInputHeader),
)

DOC_KINDS_BY_NAME: Final = {d.name: d for d in DOC_KINDS}
