"""Design preparation: requests and inputs against the approved plan, as the resolver judges them."""

from __future__ import annotations

from ... import reading
from ...models.report import ImplementationPlan
from ...models.sidecars import DesignPrepInputHeader, DesignPrepRequestHeader
from ...workflows.design_prep import TEMPLATE_VERSION, request_text, resolve
from ...workflows.reports import load_report_artifact
from ..catalog import (
    DESIGN_PREP_DUPLICATE,
    DESIGN_PREP_INPUT_MISMATCH,
    DESIGN_PREP_REQUEST_MISMATCH,
    DESIGN_PREP_STALE,
    LEGACY_UNASSESSED_PLAN,
    REQUEST_NOT_RECOMPUTED,
)
from .direction import open_task
from .documents import load_report
from .scope import Artifact, RunScope, TaskScope

_Plans = dict[int, tuple[str, ImplementationPlan | None]]


def check_run(scope: TaskScope, run: RunScope) -> None:
    """Headers against names and plans; duplicate and stale revisions exactly as :func:`resolve` skips them."""
    unit = scope.unit
    plans: _Plans = {}
    for art in run.of_kind("final-report-data"):
        report = load_report(unit, art)
        if art.name.seq is not None:
            plans[art.name.seq] = (unit.rel(art.path), report.implementation_plan if report is not None else None)
    _check_requests(scope, run, plans)
    _check_inputs(scope, run, plans)
    if plans:
        _check_resolution(scope)


def _check_requests(scope: TaskScope, run: RunScope, plans: _Plans) -> None:
    """Each design-prep request's header against its file name and the approved plan of its seq, then its bytes."""
    unit = scope.unit
    for art in run.of_kind("design-prep-request"):
        loaded = unit.sidecar(art.path, DesignPrepRequestHeader)
        if loaded is None:
            continue
        header, _ = loaded
        prep_id = art.name.prep_id
        if header.prep_id is not None and header.prep_id != prep_id:
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH,
                art.path,
                f"prep-id {header.prep_id} differs from the file name's {prep_id}",
            )
        plan = plans.get(art.name.seq or 0)
        if plan is None:
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH,
                art.path,
                f"no planning report with seq {art.name.seq_text} in this run dir "
                f"(expected reports/final-report-implementation-planning-{art.name.seq_text}.data.json)",
            )
            continue
        rel, model = plan
        if header.report is not None and header.report != rel:
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH,
                art.path,
                f"report {header.report!r} is not the snapshot of seq {art.name.seq_text} ({rel})",
            )
        if model is None:
            continue
        item = next((i for i in model.design_items if i.prep_id == prep_id), None)
        if item is None:
            listed = ", ".join(i.prep_id for i in model.design_items) or "none"
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH, art.path, f"{prep_id} is not a design item of {rel} (items: {listed})"
            )
        elif header.item_status is not None and item.status != header.item_status:
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH,
                art.path,
                f"item-status {header.item_status} but the approved plan says {item.status}",
            )
        elif item.assessment is not None:
            _recompute(scope, art, header, rel)


def _recompute(scope: TaskScope, art: Artifact, header: DesignPrepRequestHeader, rel: str) -> None:
    """A request is deterministic from its snapshot, report language and template version: recompute and compare."""
    unit = scope.unit
    version = header.template_version
    if version != TEMPLATE_VERSION:
        named = f"request-template version {version}" if version is not None else "no request-template version"
        unit.report(
            REQUEST_NOT_RECOMPUTED,
            art.path,
            f"written with {named}; this checker renders version {TEMPLATE_VERSION}, so it was not recomputed",
        )
        return
    with unit.owner():
        task = open_task(scope)
        found = (a for rd in task.run_dirs for a in rd.of_kind("final-report-data") if unit.rel(a.path) == rel)
        report_art = next(found, None)
        loaded = load_report_artifact(report_art) if report_art is not None else None
    if loaded is None or isinstance(loaded, reading.LoadError):
        return  # the report's own problem is reported on it
    plan = loaded.model.implementation_plan
    item = next((i for i in plan.design_items if i.prep_id == art.name.prep_id), None) if plan else None
    if item is None:
        return
    want = request_text(loaded, item)
    have = unit.text(art.entry.text)
    if have is None or have == want:
        return
    line = next(
        (n for n, (a, b) in enumerate(zip(have.split("\n"), want.split("\n"), strict=False), start=1) if a != b),
        min(have.count("\n"), want.count("\n")) + 1,
    )
    unit.report(
        DESIGN_PREP_REQUEST_MISMATCH,
        art.path,
        f"differs from the request recomputed from {rel} with template version {TEMPLATE_VERSION} "
        f"(first difference at line {line}): edited after materialization",
        line,
    )


def _check_inputs(scope: TaskScope, run: RunScope, plans: _Plans) -> None:
    """Each confirmed input's header against its file name and the design items of its plan."""
    unit = scope.unit
    for art in run.of_kind("design-prep-input"):
        got = unit.sidecar(art.path, DesignPrepInputHeader)
        if got is None:
            continue
        answer, _ = got
        if (answer.prep_id is not None and answer.prep_id != art.name.prep_id) or (
            answer.revision is not None and answer.revision != art.name.revision
        ):
            unit.report(
                DESIGN_PREP_INPUT_MISMATCH,
                art.path,
                f"header says {answer.prep_id or art.name.prep_id} r{answer.revision or art.name.revision}, "
                f"the file name {art.name.prep_id} r{art.name.revision}",
            )
        plan = plans.get(art.name.seq or 0)
        if plan is None:
            unit.report(
                DESIGN_PREP_INPUT_MISMATCH, art.path, f"no planning report with seq {art.name.seq_text} in this run dir"
            )
        elif plan[1] is not None and not any(i.prep_id == art.name.prep_id for i in plan[1].design_items):
            listed = ", ".join(i.prep_id for i in plan[1].design_items) or "none"
            unit.report(
                DESIGN_PREP_INPUT_MISMATCH,
                art.path,
                f"{art.name.prep_id} is not a design item of {plan[0]} (items: {listed})",
            )


def _check_resolution(scope: TaskScope) -> None:
    """What :func:`resolve` skips, reported where it skips it (requests are recomputed above, per seq)."""
    unit = scope.unit
    with unit.owner():
        resolution = resolve(open_task(scope))
    if resolution.legacy_unassessed and resolution.report is not None:
        unit.report(
            LEGACY_UNASSESSED_PLAN,
            resolution.report,
            "markerless legacy plan: proceeds with the legacy-unassessed warning",
        )
    for res in resolution.items:
        for verdict in res.inputs:
            if verdict.verdict == "duplicate-revision":
                unit.report(DESIGN_PREP_DUPLICATE, verdict.path, f"{res.prep_id}: skipped: {verdict.reason}")
            elif verdict.verdict == "stale-fingerprint":
                unit.report(DESIGN_PREP_STALE, verdict.path, f"{res.prep_id}: skipped: {verdict.reason}")
