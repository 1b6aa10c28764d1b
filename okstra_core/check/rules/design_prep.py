"""Design preparation: requests and inputs against the approved plan, as the resolver judges them."""

from __future__ import annotations

from ...models.report import ImplementationPlan
from ...models.sidecars import DesignPrepInputHeader, DesignPrepRequestHeader
from ...workflows.design_prep import resolve
from ..catalog import (
    DESIGN_PREP_DUPLICATE,
    DESIGN_PREP_INPUT_MISMATCH,
    DESIGN_PREP_REQUEST_MISMATCH,
    DESIGN_PREP_STALE,
    LEGACY_UNASSESSED_PLAN,
)
from ..unit import Unit
from .direction import open_task
from .documents import load_report
from .scope import RunScope, TaskScope

_Plans = dict[int, tuple[str, ImplementationPlan | None]]


def check_run(scope: TaskScope, run: RunScope) -> None:
    """Headers against names and plans; duplicate and stale revisions exactly as :func:`resolve` skips them."""
    unit = scope.unit
    plans: _Plans = {}
    for art in run.of_kind("final-report-data"):
        report = load_report(unit, art)
        if art.name.seq is not None:
            plans[art.name.seq] = (unit.rel(art.path), report.implementation_plan if report is not None else None)
    _check_requests(unit, run, plans)
    _check_inputs(unit, run, plans)
    if plans:
        _check_resolution(scope)


def _check_requests(unit: Unit, run: RunScope, plans: _Plans) -> None:
    """Each design-prep request's header against its file name and the approved plan of its seq."""
    for art in run.of_kind("design-prep-request"):
        loaded = unit.sidecar(art.path, DesignPrepRequestHeader)
        if loaded is None:
            continue
        header, _ = loaded
        if header.prep_id != art.name.prep_id:
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH,
                art.path,
                f"prep-id {header.prep_id} differs from the file name's {art.name.prep_id}",
            )
        plan = plans.get(art.name.seq or 0)
        if plan is None:
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH,
                art.path,
                f"no planning report with seq {art.name.seq_text} in this run dir",
            )
            continue
        rel, model = plan
        if header.report != rel:
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH,
                art.path,
                f"report {header.report!r} is not the snapshot of seq {art.name.seq_text} ({rel})",
            )
        if model is None:
            continue
        item = next((i for i in model.design_items if i.prep_id == header.prep_id), None)
        if item is None:
            unit.report(DESIGN_PREP_REQUEST_MISMATCH, art.path, f"{header.prep_id} is not a design item of {rel}")
        elif item.status != header.item_status:
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH,
                art.path,
                f"item-status {header.item_status} but the approved plan says {item.status}",
            )


def _check_inputs(unit: Unit, run: RunScope, plans: _Plans) -> None:
    """Each confirmed input's header against its file name and the design items of its plan."""
    for art in run.of_kind("design-prep-input"):
        got = unit.sidecar(art.path, DesignPrepInputHeader)
        if got is None:
            continue
        answer, _ = got
        if answer.prep_id != art.name.prep_id or answer.revision != art.name.revision:
            unit.report(
                DESIGN_PREP_INPUT_MISMATCH,
                art.path,
                f"header says {answer.prep_id} r{answer.revision}, the file name {art.name.prep_id} "
                f"r{art.name.revision}",
            )
        plan = plans.get(art.name.seq or 0)
        if plan is None:
            unit.report(
                DESIGN_PREP_INPUT_MISMATCH, art.path, f"no planning report with seq {art.name.seq_text} in this run dir"
            )
        elif plan[1] is not None and not any(i.prep_id == answer.prep_id for i in plan[1].design_items):
            unit.report(DESIGN_PREP_INPUT_MISMATCH, art.path, f"{answer.prep_id} is not a design item of {plan[0]}")


def _check_resolution(scope: TaskScope) -> None:
    """What :func:`resolve` skips or flags, reported where it skips it."""
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
        if res.request is not None and res.request_ok is False:
            unit.report(
                DESIGN_PREP_REQUEST_MISMATCH,
                res.request,
                f"request differs from the deterministic request for {res.prep_id} of the approved snapshot",
            )
        for verdict in res.inputs:
            if verdict.verdict == "duplicate-revision":
                unit.report(DESIGN_PREP_DUPLICATE, verdict.path, f"{res.prep_id}: skipped: {verdict.reason}")
            elif verdict.verdict == "stale-fingerprint":
                unit.report(DESIGN_PREP_STALE, verdict.path, f"{res.prep_id}: skipped: {verdict.reason}")
