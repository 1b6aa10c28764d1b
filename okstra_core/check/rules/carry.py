"""Implementation carry sidecars and the planning run's consumers backlinks."""

from __future__ import annotations

import datetime as dt

from ... import layout, names, times
from ...digests import sha256_bytes
from ...models.report import CarryStage, ConsumerLink
from ...models.run import RunManifest
from ..catalog import (
    BAD_NAME,
    CARRY_RUN_MISSING,
    CONSUMER_RUN_MISSING,
    CONSUMER_WRONG_RUN,
    FOREIGN_ARTIFACT,
    VERIFICATION_TARGET_DIGEST,
)
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
        expected = f"{scope.rel}/{layout.RUNS_DIR}/{layout.IMPLEMENTATION}/{layout.STAGE_DIR_PREFIX}{stage}"
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
        if (
            link.consumer_run_dir is not None
            and f"/{layout.RUNS_DIR}/{layout.IMPLEMENTATION}/" not in link.consumer_run_dir
        ):
            unit.report(
                CONSUMER_RUN_MISSING,
                scope.consumers,
                f"consumerRunDir {link.consumer_run_dir!r} is not an implementation run",
                line,
            )
        else:
            _consumer_stage(scope, line, link)


def _consumer_stage(scope: TaskScope, line: int, link: ConsumerLink) -> None:
    """The line's run dir and run manifest are those of the stage it links."""
    unit = scope.unit
    assert scope.consumers is not None
    if link.stage is None:
        return
    stage_dir = unit.rel(layout.run_dir(scope.root, layout.IMPLEMENTATION, link.stage))
    if link.consumer_run_dir is not None and link.consumer_run_dir != stage_dir:
        unit.report(
            CONSUMER_WRONG_RUN,
            scope.consumers,
            f"stage {link.stage} is linked to consumerRunDir {link.consumer_run_dir!r}, not to the stage's run dir "
            f"{stage_dir!r}",
            line,
        )
    manifest_rel = link.consumer_run_manifest_path
    if manifest_rel is None or not unit.rel_exists(manifest_rel):
        return  # a missing manifest is OKS101's
    run_dir = link.consumer_run_dir or stage_dir
    if not manifest_rel.startswith(run_dir + "/"):
        unit.report(
            CONSUMER_WRONG_RUN,
            scope.consumers,
            f"stage {link.stage} names consumerRunManifestPath {manifest_rel!r}, which is not in the run dir "
            f"{run_dir!r}",
            line,
        )
        return
    manifest = unit.doc(unit.root / manifest_rel, RunManifest)
    if manifest is not None and manifest.stage is not None and manifest.stage != link.stage:
        unit.report(
            CONSUMER_WRONG_RUN,
            scope.consumers,
            f"stage {link.stage} is linked to {manifest_rel}, which records stage {manifest.stage}",
            line,
        )


def check_verification_target(scope: TaskScope) -> None:
    """The latest final-verification run's target digest is the SHA-256 of the snapshot's bytes."""
    unit = scope.unit
    latest: tuple[dt.datetime, str, RunManifest] | None = None
    for run in scope.runs:
        if run.task_type != layout.FINAL_VERIFICATION:
            continue
        for art, manifest in scope.run_manifests(run):
            moment = times.parse_time(manifest.run_date_time_segment)
            if moment is None or not manifest.verification_target_path or not manifest.verification_target_sha256:
                continue
            if latest is None or moment > latest[0]:
                latest = (moment, unit.rel(art.path), manifest)
    if latest is None:
        return
    _, manifest_rel, manifest = latest
    target = manifest.verification_target_path
    if not unit.rel_exists(target):
        return  # a missing target is a missing path, reported with the manifest's paths
    data = unit.data(unit.root / target)
    if data is None:
        return
    found = sha256_bytes(data)
    if found != manifest.verification_target_sha256:
        unit.report(
            VERIFICATION_TARGET_DIGEST,
            unit.root / manifest_rel,
            f"verificationTargetSha256 is {manifest.verification_target_sha256}, but the bytes of {target} hash to "
            f"{found}",
        )
