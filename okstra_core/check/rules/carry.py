"""Implementation carry sidecars and the planning run's consumers backlinks."""

from __future__ import annotations

from ... import names
from ...models.report import CarryStage, ConsumerLink
from ..catalog import BAD_NAME, CARRY_RUN_MISSING, CONSUMER_RUN_MISSING, FOREIGN_ARTIFACT
from .scope import TaskScope


def check_task(scope: TaskScope) -> None:
    """Carry files point at the run that produced them; consumer lines at the run that consumed a stage."""
    unit = scope.unit
    for e in scope.carry:
        parsed = names.parse_carry(e.name)
        if parsed is None or e.kind != "file":
            unit.report(BAD_NAME, e.path, f"{e.name!r} is not carry/stage-<n>.json")
            continue
        carry = unit.doc(e.path, CarryStage)
        if carry is None:
            continue
        stage = carry.stage if carry.stage is not None else parsed.stage
        if carry.stage is not None and carry.stage != parsed.stage:
            unit.report(
                CARRY_RUN_MISSING, e.path, f"stage {carry.stage} differs from the file name's stage-{parsed.stage}"
            )
        if scope.task_key is not None and carry.task_key is not None and carry.task_key != scope.task_key:
            unit.report(FOREIGN_ARTIFACT, e.path, f"taskKey {carry.task_key!r} is not this task's {scope.task_key!r}")
        for label, value in (("runDir", carry.run_dir), ("runManifestPath", carry.run_manifest_path)):
            if value is not None and not unit.rel_exists(value):
                unit.report(CARRY_RUN_MISSING, e.path, f"{label} {value!r} does not exist")
        expected = f"{scope.rel}/runs/implementation/stage-{stage}"
        if carry.run_dir is not None and carry.run_dir != expected:
            unit.report(
                CARRY_RUN_MISSING,
                e.path,
                f"runDir {carry.run_dir!r} is not this task's stage-{stage} run dir {expected!r}",
            )
    if scope.consumers is None:
        return
    for line, link in unit.jsonl(scope.consumers, ConsumerLink):
        for label, value in (
            ("planReportPath", link.plan_report_path),
            ("consumerRunDir", link.consumer_run_dir),
            ("consumerRunManifestPath", link.consumer_run_manifest_path),
        ):
            if value is not None and not unit.rel_exists(value):
                unit.report(CONSUMER_RUN_MISSING, scope.consumers, f"{label} {value!r} does not exist", line)
        if link.consumer_run_dir is not None and "/runs/implementation/" not in link.consumer_run_dir:
            unit.report(
                CONSUMER_RUN_MISSING,
                scope.consumers,
                f"consumerRunDir {link.consumer_run_dir!r} is not an implementation run",
                line,
            )
