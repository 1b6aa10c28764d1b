"""Every JSON and JSONL artifact of a run dir against its model, its identity, seqs and status files."""

from __future__ import annotations

from typing import Any, Final

from ... import layout, names, reading
from ...models import run as rm
from ...models.base import model_attr
from ...models.report import FinalReportV2, FinalReportV3, deliverable_problem, present_deliverables
from ..catalog import (
    FOREIGN_ARTIFACT,
    MANIFEST_PATH_NOT_RELATIVE,
    SCHEMA_MISMATCH,
    SHARED_SEQ,
    UNKNOWN_REPORT_SCHEMA,
    UNKNOWN_STATUS,
    WRONG_DELIVERABLE,
)
from ..unit import Unit
from .scope import Artifact, RunScope, TaskScope

#: Artifact kinds whose content is one JSON document of a registered kind (:attr:`names.Kind.reader`).
JSON_KINDS: Final[frozenset[str]] = frozenset(k.name for k in names.KINDS if k.reader == "json")


def load(unit: Unit, art: Artifact) -> Any:
    """The validated document of a JSON artifact (None when it does not validate)."""
    if art.kind == "final-report-data":
        return load_report(unit, art)
    spec = names.KINDS_BY_NAME[art.kind]
    if spec.reader != "json" or spec.model is None:
        return None
    return unit.doc(art.entry.text, spec.model)


def load_report(unit: Unit, art: Artifact) -> FinalReportV3 | FinalReportV2 | None:
    """Report data by the schema version it declares (the reader's own choice of model)."""
    value = unit.json(art.entry.text)
    if value is None:
        return None
    model = reading.report_model_for(value)
    if isinstance(model, str):
        unit.report(UNKNOWN_REPORT_SCHEMA if isinstance(value, dict) else SCHEMA_MISMATCH, art.path, model)
        return None
    return unit.doc(art.entry.text, model)


def check_run(scope: TaskScope, run: RunScope) -> None:
    """Validate every document of *run*; check identities, seq sharing and status values."""
    unit = scope.unit
    rows: list[tuple[str, int, str, Artifact]] = []
    run_rel = unit.rel(run.path)
    for art in run.artifacts:
        spec = names.KINDS_BY_NAME[art.kind]
        if spec.reader == "jsonl" and spec.model is not None:
            unit.jsonl(art.path, spec.model)
            continue
        if art.kind == "final-status":
            _status(unit, art)
            continue
        doc = load(unit, art)
        if doc is None:
            continue
        _identity(scope, run, art, doc, run_rel)
        if art.kind == "run-manifest":
            _manifest_paths(scope, art, doc)
        elif art.kind == "final-report-data":
            _deliverable(scope, run, art, doc)
        seg = rm.segment_of(doc)
        if seg is not None:
            run.segments.append((art, seg))
        if seg is not None and art.name.seq is not None and not art.flat:
            rows.append((art.name.category, art.name.seq, seg, art))
        if art.kind == "run-manifest" and doc.status is not None and doc.status not in rm.RUN_STATUSES:
            unit.report(UNKNOWN_STATUS, art.path, f"status {doc.status!r} is not a known status ({known_statuses()})")
    for (category, seq), segs in sorted(rm.segments_by_seq(rows).items()):
        if len(segs) > 1:
            listing = "; ".join(f"{s}: {', '.join(a.entry.name for a in arts)}" for s, arts in sorted(segs.items()))
            last = max((a for arts in segs.values() for a in arts), key=lambda a: a.entry.name)
            unit.report(
                SHARED_SEQ, last.path, f"{category}/ seq {seq:03d} is used by {len(segs)} executions ({listing})"
            )


def _status(unit: Unit, art: Artifact) -> None:
    text = unit.text(art.entry.text)
    if text is None:
        return
    value = text.strip()
    if value not in rm.RUN_STATUSES:
        unit.report(UNKNOWN_STATUS, art.path, f"status {value[:60]!r} is not a known status ({known_statuses()})")


def _identity(scope: TaskScope, run: RunScope, art: Artifact, doc: Any, run_rel: str) -> None:
    unit = scope.unit
    ident = model_attr(doc, "identity") or doc
    key = model_attr(ident, "task_key")
    if scope.task_key is not None and isinstance(key, str) and key != scope.task_key:
        unit.report(FOREIGN_ARTIFACT, art.path, f"taskKey {key!r} is not this task's {scope.task_key!r}")
    task_type = model_attr(ident, "task_type")
    if isinstance(task_type, str) and task_type != run.task_type:
        unit.report(FOREIGN_ARTIFACT, art.path, f"taskType {task_type!r} is not the run dir's {run.task_type!r}")
    if art.kind in ("run-manifest", "run-context", "active-run-context"):
        stage = model_attr(ident, "stage")
        if stage != run.stage:
            unit.report(FOREIGN_ARTIFACT, art.path, stage_mismatch(stage, run.stage, run_rel))
        if art.kind == "run-manifest":
            hint = doc.run_dir
        else:
            hint = doc.path_hints.run_dir if doc.path_hints is not None else None
        if hint is not None and hint != run_rel:
            unit.report(FOREIGN_ARTIFACT, art.path, f"runDir {hint!r} is not this run dir {run_rel!r}")


def known_statuses() -> str:
    """The expected side of an unknown-status message."""
    return "expected one of: " + ", ".join(rm.RUN_STATUSES)


def stage_mismatch(stated: int | None, expected: int | None, run_rel: str) -> str:
    """Expected and found, for a document whose stage disagrees with its run dir."""
    if expected is None:
        return f"stage {stated} is recorded, but this run dir ({run_rel}) is not a stage run dir (expected no stage)"
    if stated is None:
        return f"no stage is recorded, but this run dir is stage-{expected} (expected stage {expected})"
    return f"stage {stated} is recorded, but this run dir is stage-{expected} (expected stage {expected})"


def _manifest_paths(scope: TaskScope, art: Artifact, doc: rm.RunManifest) -> None:
    """The contract stores every run-manifest path relative to the target project root."""
    unit = scope.unit
    for label, value in doc.path_fields():
        if not layout.is_relative_posix(value):
            unit.report(
                MANIFEST_PATH_NOT_RELATIVE,
                art.path,
                f"{label} {value!r} is not a project-relative POSIX path (no leading /, no .., no backslash)",
            )


def _deliverable(scope: TaskScope, run: RunScope, art: Artifact, doc: FinalReportV3 | FinalReportV2) -> None:
    """Exactly one deliverable, the one of the run dir's task type (an unknown type is reported on its run dir)."""
    if doc.task_type is not None:
        return  # the model judged it against its own taskType; OKS024 compares that type with the run dir's
    problem = deliverable_problem(run.task_type, present_deliverables(doc))
    if problem is not None:
        scope.unit.report(WRONG_DELIVERABLE, art.path, problem)
