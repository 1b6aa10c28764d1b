"""Implementation carry sidecars and the planning run's consumers backlinks."""

from __future__ import annotations

from pathlib import Path

from .. import layout, writes
from ..models.report import CarryStage, ConsumerLink, StageEvidence
from ..times import iso
from .common import SYSTEM_CLOCK, Clock, update_json
from .tasks import Run


def record_carry(run: Run, outcome: str, evidence: list[StageEvidence], clock: Clock = SYSTEM_CLOCK) -> Path:
    """Write ``runs/implementation/carry/stage-<n>.json`` (flat; a rerun of the stage replaces it)."""
    assert run.stage is not None
    path = layout.carry_path(run.task_root, run.stage)
    value = CarryStage(
        schema_version="1.0",
        task_key=run.task_key,
        stage=run.stage,
        run_dir=run.rel(run.run_dir),
        run_manifest_path=run.rel(run.manifest_path),
        outcome=outcome,
        evidence=evidence,
        recorded_at=iso(clock.now()),
    )

    def replace(_current: CarryStage | None) -> CarryStage:
        return value

    update_json(run.project_root, path, CarryStage, replace)
    return path


def record_consumer(run: Run, plan_report_rel: str, clock: Clock = SYSTEM_CLOCK) -> Path:
    """Append the backlink from the planning run to the implementation run that consumed a stage."""
    assert run.stage is not None
    path = layout.consumers_path(run.task_root)
    link = ConsumerLink(
        stage=run.stage,
        plan_report_path=plan_report_rel,
        consumer_run_dir=run.rel(run.run_dir),
        consumer_run_manifest_path=run.rel(run.manifest_path),
        consumed_at=iso(clock.now()),
    )
    writes.append_jsonl(run.project_root, path, link.dump())
    return path
