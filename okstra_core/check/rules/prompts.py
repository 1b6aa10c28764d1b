"""Prompts, their adjacent metadata (the completion marker) and the duty-contract snapshot."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ... import layout, names
from ...digests import sha256_bytes
from ...models.run import DutyCatalog, PromptMeta, RunManifest
from ...workflows.prompts import assignment_digest
from ..catalog import (
    DUTY_SNAPSHOT_DRIFT,
    METADATA_BACKREF,
    METADATA_DIGEST,
    METADATA_WITHOUT_PROMPT,
    PROMPT_UNPUBLISHED,
    UNKNOWN_ASSIGNMENT,
)
from .scope import Artifact, RunScope, TaskScope

PROMPT_KINDS = ("lead-prompt", "worker-prompt", "reverify-prompt")
META_KINDS = ("lead-prompt-meta", "worker-prompt-meta", "reverify-prompt-meta")


def check_run(scope: TaskScope, run: RunScope) -> None:
    """Publication pairs, metadata back-references and digests, duty snapshots."""
    unit = scope.unit
    # Path texts, not Path objects: this runs for every artifact of every run dir.
    present = {a.entry.text for a in run.artifacts}
    for art in run.of_kind(*PROMPT_KINDS):
        folder = os.path.dirname(art.entry.text)
        if os.path.join(folder, names.meta_name_for(art.entry.name)) not in present:
            unit.report(
                PROMPT_UNPUBLISHED,
                art.path,
                "prompt has no adjacent .meta.json: unpublished (or interrupted) publication",
            )
    for art in run.of_kind(*META_KINDS):
        prompt = art.path.with_name(art.entry.name.removesuffix(names.PROMPT_META_SUFFIX))
        has_prompt = os.path.join(os.path.dirname(art.entry.text), prompt.name) in present
        if not has_prompt:
            unit.report(METADATA_WITHOUT_PROMPT, art.path, f"metadata without its prompt {prompt.name}")
        meta = unit.doc(art.path, PromptMeta)
        if meta is not None:
            _meta(scope, run, art, meta, prompt, has_prompt)
    for art, manifest in scope.run_manifests(run):
        if manifest.agent_contract is not None:
            _duty_snapshot(scope, art, manifest)


def _meta(scope: TaskScope, run: RunScope, art: Artifact, meta: PromptMeta, prompt: Path, has_prompt: bool) -> None:
    unit = scope.unit
    manifests_dir = run.path / layout.MANIFESTS_DIR
    manifest: RunManifest | None = None
    if meta.run_manifest_path is None:
        # No back-reference recorded: the run's own manifest of the same execution stands in for it.
        manifest = scope.manifest_for_segment(run, meta.run_date_time_segment)
    else:
        target = unit.root / meta.run_manifest_path
        if target.parent != manifests_dir or (a := run.find(target)) is None or a.kind != "run-manifest":
            unit.report(
                METADATA_BACKREF,
                art.path,
                f"runManifestPath {meta.run_manifest_path!r} is not a run manifest of this run dir "
                f"(expected one under {unit.rel(manifests_dir)}/)",
            )
        else:
            manifest = unit.doc(target, RunManifest)
    if meta.prompt_path is not None and meta.prompt_path != unit.rel(prompt):
        unit.report(
            METADATA_BACKREF,
            art.path,
            f"promptPath {meta.prompt_path!r} is not the adjacent prompt {unit.rel(prompt)!r}",
        )
    if manifest is not None and "invocation_assignments" not in manifest.model_fields_set:
        manifest = None  # the manifest records no invocationAssignments: nothing to hold the reference against
    if manifest is not None:
        match = [a for a in manifest.invocation_assignments if a.assignment_ref == meta.assignment_ref]
        if not match:
            unit.report(
                UNKNOWN_ASSIGNMENT,
                art.path,
                f"assignmentRef {meta.assignment_ref!r} is not held by the run manifest's invocationAssignments "
                f"(expected one of: {_some(a.assignment_ref for a in manifest.invocation_assignments)})",
            )
        else:
            assignment = match[0]
            for field, label in (
                ("invocation_id", "invocationId"),
                ("worker_id", "workerId"),
                ("audience", "audience"),
                ("dispatch_kind", "dispatchKind"),
            ):
                stated, reserved = getattr(meta, field), getattr(assignment, field)
                if stated is not None and reserved is not None and stated != reserved:
                    unit.report(
                        UNKNOWN_ASSIGNMENT,
                        art.path,
                        f"{label} {getattr(meta, field)!r} differs from assignment {meta.assignment_ref!r} "
                        f"({getattr(assignment, field)!r})",
                    )
            recorded_assignment = meta.digests.assignment if meta.digests is not None else None
            if recorded_assignment is not None and (found := assignment_digest(assignment)) != recorded_assignment:
                unit.report(
                    METADATA_DIGEST,
                    art.path,
                    f"digests.assignment is {recorded_assignment}, but assignment {meta.assignment_ref!r} of "
                    f"{_manifest_name(meta, run)} has canonical JSON digest {found}",
                )
            if assignment.meta_path is not None and assignment.meta_path != unit.rel(art.path):
                unit.report(
                    UNKNOWN_ASSIGNMENT,
                    art.path,
                    f"assignment {meta.assignment_ref!r} reserves metaPath {assignment.meta_path!r}, not this file",
                )
        contract = manifest.agent_contract
        recorded = meta.digests.catalog if meta.digests is not None else None
        if contract is not None and recorded is not None and contract.catalog_digest not in (None, recorded):
            unit.report(
                METADATA_DIGEST,
                art.path,
                f"catalog digest {recorded} differs from the run manifest's agentContract.catalogDigest "
                f"{contract.catalog_digest}",
            )
    _file_digests(scope, art, meta, prompt, has_prompt)


def _file_digests(scope: TaskScope, art: Artifact, meta: PromptMeta, prompt: Path, has_prompt: bool) -> None:
    """The prompt, instruction and duty digests the metadata records, against the bytes they name."""
    unit = scope.unit
    digests = meta.digests
    if digests is None:
        return
    if has_prompt and digests.prompt is not None and meta.prompt_path in (None, unit.rel(prompt)):
        data = unit.data(prompt)
        if data is not None and (found := sha256_bytes(data)) != digests.prompt:
            unit.report(
                METADATA_DIGEST,
                art.path,
                f"digests.prompt is {digests.prompt}, but the bytes of {prompt.name} hash to {found}",
            )
    for label, rel, digest in (
        ("instruction", meta.instruction_path, digests.instruction),
        ("duty", meta.duty_path, digests.duty),
    ):
        if rel is None or digest is None:
            continue
        if not unit.rel_exists(rel):
            unit.report(METADATA_DIGEST, art.path, f"{label}Path {rel!r} {unit.absent(rel)}")
            continue
        data = unit.data(unit.root / rel)
        if data is not None and (found := sha256_bytes(data)) != digest:
            unit.report(
                METADATA_DIGEST, art.path, f"digests.{label} is {digest}, but the bytes of {rel} hash to {found}"
            )


def _duty_snapshot(scope: TaskScope, art: Artifact, manifest: RunManifest) -> None:
    unit = scope.unit
    contract = manifest.agent_contract
    assert contract is not None
    if contract.duty_root is None:
        return  # no duty root recorded: nothing to hold the snapshot against
    if not unit.rel_exists(contract.duty_root):
        unit.report(DUTY_SNAPSHOT_DRIFT, art.path, f"agentContract.dutyRoot {contract.duty_root!r} does not exist")
        return
    catalog_path = unit.root / contract.duty_root / layout.DUTY_CATALOG_FILE
    if not unit.exists(catalog_path):
        unit.report(
            DUTY_SNAPSHOT_DRIFT,
            catalog_path,
            f"catalog.json is missing from the duty snapshot that agentContract.dutyRoot names in {unit.rel(art.path)}",
        )
        return
    data = unit.data(catalog_path)
    if data is None:
        return  # the read problem is reported on the file itself: one root cause, one finding
    if contract.catalog_digest is not None and (found := sha256_bytes(data)) != contract.catalog_digest:
        unit.report(
            DUTY_SNAPSHOT_DRIFT,
            catalog_path,
            f"catalog.json has digest {found}, not the catalogDigest {contract.catalog_digest} recorded in "
            f"{unit.rel(art.path)}",
        )
    catalog = unit.doc(catalog_path, DutyCatalog)
    if catalog is None:
        return
    for duty in catalog.duties:
        if duty.path is None:
            continue
        # Duty paths are relative to the snapshot folder (the prompt metadata's dutyPath adds the root).
        rel = f"{contract.duty_root}/{duty.path}"
        path = unit.root / rel
        if not unit.rel_exists(rel):
            unit.report(DUTY_SNAPSHOT_DRIFT, catalog_path, f"duty {duty.duty_id!r}: {duty.path!r} does not exist")
            continue
        raw = unit.data(path)
        if raw is not None and duty.sha256 is not None and sha256_bytes(raw) != duty.sha256:
            unit.report(
                DUTY_SNAPSHOT_DRIFT,
                path,
                f"duty {duty.duty_id!r} drifted: catalog.json records sha256 {duty.sha256}, "
                f"the file's bytes hash to {sha256_bytes(raw)}",
            )


def _manifest_name(meta: PromptMeta, run: RunScope) -> str:
    """The run manifest a metadata file is held against, for a message: the one it names, else its execution's."""
    if meta.run_manifest_path is not None:
        return meta.run_manifest_path.rsplit("/", 1)[-1]
    return f"the run manifest of {meta.run_date_time_segment} in {run.path.name}/"


def _some(values: Iterable[str | None], limit: int = 8) -> str:
    """Up to *limit* sorted values, comma-separated, with how many more there are."""
    shown = sorted(v for v in values if v is not None)
    text = ", ".join(shown[:limit]) or "none"
    return text + (f" and {len(shown) - limit} more" if len(shown) > limit else "")
