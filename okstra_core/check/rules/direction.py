"""Direction selection: user-response sidecars, the selected-direction snapshot, the digest chain."""

from __future__ import annotations

from pathlib import Path

from ... import layout, names, store
from ...digests import sha256_bytes
from ...models.report import OptionCandidates, SelectedDirection
from ...models.sidecars import UserResponseHeader
from ...workflows.direction import check_chain
from ..catalog import (
    FOREIGN_ARTIFACT,
    OPTION_NOT_IN_REPORT,
    PLAN_MISSING_DIRECTION,
    SELECTED_DIRECTION_DIGEST,
    SIDECAR_DIGEST,
)
from .documents import load_report
from .scope import Artifact, TaskScope

#: check_chain step -> rule; steps not listed describe pending states or load errors reported elsewhere.
_STEP_RULES = {
    "sidecar source-data-sha256": SIDECAR_DIGEST,
    "sidecar option": OPTION_NOT_IN_REPORT,
    "preselected confirmation": OPTION_NOT_IN_REPORT,
    "snapshot sourceDataSha256": SELECTED_DIRECTION_DIGEST,
    "snapshot option": OPTION_NOT_IN_REPORT,
    "planning selectedDirectionRef": PLAN_MISSING_DIRECTION,
}


def open_task(scope: TaskScope) -> store.Task:
    """The read side's view of the same task, for owners that take a :class:`store.Task`.

    Opened once per task: the direction chain and the design-prep resolver share
    its run-dir listings.
    """
    if scope.store_task is None:
        project = store.Project(scope.unit.root)
        ref = store.TaskRef(project, scope.root.parent.name, scope.root.name, scope.root, None)
        scope.store_task = ref.open()
    task: store.Task = scope.store_task
    return task


def check_task(scope: TaskScope) -> None:
    """The chain as :func:`okstra_core.workflows.direction.check_chain` judges it, plus every other sidecar."""
    unit = scope.unit
    sidecars = [a for run in scope.runs for a in run.of_kind("user-response", "user-response-superseded")]
    covered: set[Path] = set()
    has_option_run = any(r.task_type == "option-selection" and r.of_kind("final-report-data") for r in scope.runs)
    sd_path = layout.selected_direction_path(scope.root)
    # The listing, not a stat: a symlink escaping the project is reported where it is listed, never followed.
    if unit.exists(sd_path) or has_option_run:
        # The unit reads the chain's files first, so that the chain takes them from it instead of reading again.
        if unit.entry(sd_path) is not None:
            unit.doc(sd_path, SelectedDirection)
        for art in sidecars:
            unit.text(art.path)
        with unit.owner():
            steps = check_chain(open_task(scope))
        for step in steps:
            rule = _STEP_RULES.get(step.step)
            if step.path is not None and rule is not None:
                covered.add(step.path)  # judged by the chain (a sidecar it could not read is judged below)
            if rule is not None and not step.ok and step.path is not None:
                unit.report(rule, step.path, f"{step.step}: {step.detail}")
    if unit.entry(sd_path) is not None:
        sd = unit.doc(sd_path, SelectedDirection)
        if sd is not None and scope.task_key is not None and sd.task_key not in (None, scope.task_key):
            unit.report(FOREIGN_ARTIFACT, sd_path, f"taskKey {sd.task_key!r} is not this task's {scope.task_key!r}")
    for art in sidecars:
        _sidecar(scope, art, art.path in covered and art.kind == "user-response")


def _sidecar(scope: TaskScope, art: Artifact, covered: bool) -> None:
    unit = scope.unit
    loaded = unit.sidecar(art.path, UserResponseHeader)
    if loaded is None:
        return
    header, _ = loaded
    if scope.task_key is not None and header.task_key not in (None, scope.task_key):
        unit.report(FOREIGN_ARTIFACT, art.path, f"task-key {header.task_key!r} is not this task's {scope.task_key!r}")
    if header.task_type not in (None, art.name.task_type):
        unit.report(
            FOREIGN_ARTIFACT,
            art.path,
            f"task-type {header.task_type!r} differs from the file name's {art.name.task_type!r}",
        )
    expected = f"final-report-{art.name.task_type}-{art.name.seq_text}{names.REPORT_DATA_SUFFIX}"
    if header.report is not None and Path(header.report).name != expected:
        unit.report(
            FOREIGN_ARTIFACT,
            art.path,
            f"report {header.report!r} is not the report this sidecar is named after ({expected})",
        )
    if covered or art.kind == "user-response-superseded":
        return  # judged by the chain above, or kept only as history
    # The sidecar answers the report it is named after (the same folder's run dir, reports/).
    report_rel = header.report or unit.rel(art.path.parent.parent / layout.REPORTS_DIR / expected)
    if not unit.rel_exists(report_rel):
        unit.report(SIDECAR_DIGEST, art.path, f"report {report_rel!r} does not exist")
        return
    data = unit.data(unit.root / report_rel)
    if data is not None and (found := sha256_bytes(data)) != header.source_data_sha256:
        unit.report(
            SIDECAR_DIGEST,
            art.path,
            f"source-data-sha256 {header.source_data_sha256} differs from the SHA-256 of {report_rel} ({found})",
        )
    if header.selected_option is not None:
        report_art = None
        for run in scope.runs:
            for a in run.of_kind("final-report-data"):
                if unit.rel(a.path) == report_rel:
                    report_art = a
        report = load_report(unit, report_art) if report_art is not None else None
        oc: OptionCandidates | None = report.option_candidates if report is not None else None
        if report is not None and (oc is None or header.selected_option not in {c.option_id for c in oc.candidates}):
            unit.report(
                OPTION_NOT_IN_REPORT,
                art.path,
                f"selected-option {header.selected_option} is not a candidate of {report_rel}",
            )
