"""Prompt publication: create-only prompt first, adjacent metadata last as the completion marker.

Two files cannot be replaced atomically, so publication is recoverable instead:
under the per-invocation publication lock a retry recovers a byte-identical
orphan prompt and refuses different bytes. A reservation binds the invocation's
identity (invocationId, workerId, assignment, audience, dispatch kind, prompt
path, metadata path) before the prompt is written, so two writers can never
mix one invocation's prompt and metadata.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import layout, names, reading, writes
from ..digests import pretty_json, sha256_bytes, sha256_json
from ..errors import WriteRefused
from ..models import run as rm
from ..times import iso
from .common import SYSTEM_CLOCK, Clock, update_json, validated


@dataclass(frozen=True)
class Published:
    prompt: Path
    meta: Path
    recovered_orphan: bool


def load_run_manifest(project_root: Path, manifest_path: Path) -> rm.RunManifest:
    """The published run manifest, or a refusal naming it."""
    loaded = reading.load_model(manifest_path, rm.RunManifest, root=project_root)
    if isinstance(loaded, reading.LoadError):
        raise WriteRefused(manifest_path, f"run manifest must be published before any prompt ({loaded.reason})")
    return loaded


def reservation_binding(assignment: rm.InvocationAssignment) -> dict[str, Any]:
    """What a reservation binds; a second writer with a different binding is refused."""
    return {
        "invocationId": assignment.invocation_id,
        "workerId": assignment.worker_id,
        "assignmentRef": assignment.assignment_ref,
        "audience": assignment.audience,
        "dispatchKind": assignment.dispatch_kind,
        "promptPath": assignment.prompt_path,
        "metaPath": assignment.meta_path,
    }


def assignment_digest(assignment: rm.InvocationAssignment) -> str:
    return sha256_json(assignment.dump())


def bound_digests(assignment: rm.InvocationAssignment, prompt: bytes, instruction: bytes) -> dict[str, str]:
    """The digests binding a prompt's metadata to its invocation: assignment, prompt bytes, instruction bytes."""
    return {
        "assignment": assignment_digest(assignment),
        "instruction": sha256_bytes(instruction),
        "prompt": sha256_bytes(prompt),
    }


@dataclass(frozen=True)
class _Publication:
    """One prompt to publish, with every input it depends on already read and checked."""

    manifest: rm.RunManifest
    manifest_rel: str
    assignment: rm.InvocationAssignment
    contract: rm.AgentContract
    duty: rm.DutyEntry
    instruction_rel: str
    instruction_bytes: bytes
    data: bytes
    prompt_path: Path
    meta_path: Path
    #: Fields optional on read that a publication needs (refused when absent).
    invocation_id: str
    duty_root: str
    reservation_root: str


def _assignment(manifest: rm.RunManifest, manifest_path: Path, assignment_ref: str) -> rm.InvocationAssignment:
    assignment = next((a for a in manifest.invocation_assignments if a.assignment_ref == assignment_ref), None)
    if assignment is None:
        raise WriteRefused(manifest_path, f"no invocation assignment {assignment_ref!r} in the run manifest")
    return assignment


def _agent_contract(manifest: rm.RunManifest, manifest_path: Path) -> rm.AgentContract:
    if manifest.agent_contract is None:
        raise WriteRefused(manifest_path, "run manifest has no agentContract")
    return manifest.agent_contract


def _needed(where: Path, value: str | None, what: str) -> str:
    """A field the publication needs; its absence refuses the write."""
    if value is None:
        raise WriteRefused(where, f"run manifest names no {what}")
    return value


def _require_authorised_prompt(project_root: Path, manifest: rm.RunManifest, prompt_path: Path) -> None:
    roots = (manifest.authorized_paths.prompt_roots or []) if manifest.authorized_paths else []
    if not any(prompt_path.parent == project_root / r for r in roots):
        raise WriteRefused(prompt_path, "prompt path is outside the manifest's authorised prompt roots")


def _duty(project_root: Path, contract: rm.AgentContract, duty_root: str, duty_id: str) -> rm.DutyEntry:
    """The duty *duty_id* of the run's duty catalog, once the catalog matches the manifest's digest."""
    catalog_path = project_root / duty_root / layout.DUTY_CATALOG_FILE
    catalog_bytes = reading.read_bytes(catalog_path, root=project_root)
    if isinstance(catalog_bytes, reading.LoadError):
        raise WriteRefused(catalog_bytes.path, catalog_bytes.reason)
    if sha256_bytes(catalog_bytes) != contract.catalog_digest:
        raise WriteRefused(catalog_path, "duty catalog drifted from the manifest's catalog digest")
    catalog_text = reading.text_of_bytes(catalog_path, catalog_bytes)
    catalog_value = (
        catalog_text if isinstance(catalog_text, reading.LoadError) else reading.parse_json(catalog_path, catalog_text)
    )
    if isinstance(catalog_value, reading.LoadError):
        raise WriteRefused(catalog_value.path, catalog_value.reason)
    catalog = validated(rm.DutyCatalog, catalog_value, catalog_path)
    duty = next((d for d in catalog.duties if d.duty_id == duty_id), None)
    if duty is None or duty.path is None:
        raise WriteRefused(catalog_path, f"no duty {duty_id!r} with a path in the duty catalog")
    return duty


def _refuse_conflicts(project_root: Path, pub: _Publication, reservation: Path, binding: bytes) -> None:
    """Refuse a different reservation, different prompt bytes or metadata of other bytes, before any write."""
    for path, want, why in (
        (reservation, binding, "invocation is reserved with a different identity"),
        (pub.prompt_path, pub.data, "exists with different bytes; a published prompt is never replaced"),
    ):
        current = reading.read_bytes(path, root=project_root) if os.path.lexists(path) else None
        if isinstance(current, reading.LoadError):
            raise WriteRefused(path, current.reason)
        if current is not None and current != want:
            raise WriteRefused(path, why)
    if os.path.lexists(pub.meta_path):
        published = reading.load_model(pub.meta_path, rm.PromptMeta, root=project_root)
        if isinstance(published, reading.LoadError):
            raise WriteRefused(pub.meta_path, published.reason)
        if published.digests is None or published.digests.prompt != sha256_bytes(pub.data):
            raise WriteRefused(pub.meta_path, "metadata already published for different prompt bytes")


_V2_IDENTITY = (
    ("participantRef", "participant_ref"),
    ("roleExecutionRef", "role_execution_ref"),
    ("invocationRef", "invocation_ref"),
    ("attempt", "attempt"),
    ("executionLabel", "execution_label"),
)


def _prompt_meta(pub: _Publication, source_paths: list[str] | None, clock: Clock) -> rm.PromptMeta:
    """The metadata (completion marker) of *pub*: back-references and the digest of every input."""
    assignment, contract = pub.assignment, pub.contract
    identity = {k: getattr(assignment, a) for k, a in _V2_IDENTITY} if assignment.is_v2 else {}
    runtime = rm.AUDIENCE_PREAMBLES.get(assignment.audience or "", rm.ERROR_CONTRACT_PATH)
    return rm.PromptMeta.model_validate(
        {
            "schemaVersion": pub.manifest.schema_version,
            "invocationId": assignment.invocation_id,
            "workerId": assignment.worker_id,
            "audience": assignment.audience,
            "dispatchKind": assignment.dispatch_kind,
            "assignmentRef": assignment.assignment_ref,
            "runManifestPath": pub.manifest_rel,
            "promptPath": assignment.prompt_path,
            "dutyId": pub.duty.duty_id,
            "dutyPath": f"{pub.duty_root}/{pub.duty.path}",
            "instructionPath": pub.instruction_rel,
            "sourcePaths": source_paths or [],
            "instructionProvenance": [
                {"kind": "project", "path": pub.instruction_rel},
                {"kind": "runtime", "path": runtime},
            ],
            "digests": {
                "catalog": contract.catalog_digest,
                "duty": pub.duty.sha256,
                **bound_digests(assignment, pub.data, pub.instruction_bytes),
            },
            "publishedAt": iso(clock.now()),
            "runDateTimeSegment": pub.manifest.run_date_time_segment,
            **identity,
        }
    )


def _checked_publication(
    project_root: Path, manifest_path: Path, assignment_ref: str, body: str, duty_id: str, instruction_rel: str
) -> _Publication:
    """Read and check every input of a publication, refusing before anything is written."""
    manifest = load_run_manifest(project_root, manifest_path)
    manifest_rel = layout.rel(manifest_path, project_root)
    assignment = _assignment(manifest, manifest_path, assignment_ref)
    contract = _agent_contract(manifest, manifest_path)
    where = f"invocation assignment {assignment_ref}"
    prompt_path = project_root / _needed(manifest_path, assignment.prompt_path, f"{where} promptPath")
    meta_path = project_root / _needed(manifest_path, assignment.meta_path, f"{where} metaPath")
    invocation_id = _needed(manifest_path, assignment.invocation_id, f"{where} invocationId")
    duty_root = _needed(manifest_path, contract.duty_root, "agentContract.dutyRoot")
    reservation_root = _needed(manifest_path, contract.reservation_root, "agentContract.reservationRoot")
    _require_authorised_prompt(project_root, manifest, prompt_path)
    duty = _duty(project_root, contract, duty_root, duty_id)
    instruction_bytes = reading.read_bytes(project_root / instruction_rel, root=project_root)
    if isinstance(instruction_bytes, reading.LoadError):
        raise WriteRefused(instruction_bytes.path, instruction_bytes.reason)
    return _Publication(
        manifest=manifest,
        manifest_rel=manifest_rel,
        assignment=assignment,
        contract=contract,
        duty=duty,
        instruction_rel=instruction_rel,
        instruction_bytes=instruction_bytes,
        data=body.encode("utf-8"),
        prompt_path=prompt_path,
        meta_path=meta_path,
        invocation_id=invocation_id,
        duty_root=duty_root,
        reservation_root=reservation_root,
    )


def publish_prompt(
    project_root: Path,
    manifest_path: Path,
    assignment_ref: str,
    body: str,
    *,
    duty_id: str,
    instruction_rel: str,
    clock: Clock = SYSTEM_CLOCK,
    source_paths: list[str] | None = None,
) -> Published:
    """Publish one run-backed prompt and its metadata in the contract's order."""
    pub = _checked_publication(project_root, manifest_path, assignment_ref, body, duty_id, instruction_rel)
    reservation = project_root / pub.reservation_root / f"{pub.invocation_id}.json"
    binding = pretty_json(reservation_binding(pub.assignment))
    writes.ensure_dir(project_root, reservation.parent)
    with writes.locked(reservation):
        # Everything that could refuse is checked before the first write, so a refusal leaves no trace.
        _refuse_conflicts(project_root, pub, reservation, binding)
        try:
            writes.create_only(project_root, reservation, binding)
        except WriteRefused:
            raise WriteRefused(reservation, "invocation is reserved with a different identity") from None
        existed = pub.prompt_path.exists()
        writes.create_only(project_root, pub.prompt_path, pub.data)  # refuses different orphan bytes
        meta = _prompt_meta(pub, source_paths, clock)
        meta_path = pub.meta_path
        existing_meta = reading.load_model(meta_path, rm.PromptMeta, root=project_root) if meta_path.exists() else None
        if isinstance(existing_meta, rm.PromptMeta):
            if (
                existing_meta.digests is None
                or meta.digests is None
                or existing_meta.digests.prompt != meta.digests.prompt
            ):
                raise WriteRefused(meta_path, "metadata already published for different prompt bytes")
            return Published(pub.prompt_path, meta_path, existed)
        writes.create_only_json(project_root, meta_path, meta.dump())
    return Published(pub.prompt_path, meta_path, existed)


def meta_problems(project_root: Path, meta_path: Path, meta: rm.PromptMeta) -> list[str]:
    """Why a published prompt's metadata does not hold (empty when it does).

    The metadata must refer back to an existing run manifest that holds its
    ``assignmentRef`` with the same prompt path, and each digest must match the
    bytes it names.
    """
    problems: list[str] = []
    if meta.run_manifest_path is None:
        return ["metadata names no runManifestPath"]
    manifest = reading.load_model(project_root / meta.run_manifest_path, rm.RunManifest, root=project_root)
    if isinstance(manifest, reading.LoadError):
        return [f"runManifestPath {meta.run_manifest_path}: {manifest.reason}"]
    digests = meta.digests or rm.PromptDigests()
    assignment = next((a for a in manifest.invocation_assignments if a.assignment_ref == meta.assignment_ref), None)
    if assignment is None:
        problems.append(f"assignmentRef {meta.assignment_ref!r} is not in {meta.run_manifest_path}")
    else:
        if assignment.prompt_path != meta.prompt_path:
            problems.append(
                f"assignment {meta.assignment_ref} names prompt {assignment.prompt_path}, not {meta.prompt_path}"
            )
        if assignment.invocation_id != meta.invocation_id or assignment.worker_id != meta.worker_id:
            problems.append("invocationId/workerId differ from the manifest's assignment")
        if digests.assignment is not None and assignment_digest(assignment) != digests.assignment:
            problems.append("assignment digest does not match the manifest's assignment")
    if meta.prompt_path is not None and meta_path.name != names.meta_name_for(Path(meta.prompt_path).name):
        problems.append(f"metadata is not adjacent to its prompt {meta.prompt_path}")
    contract = manifest.agent_contract
    if contract is not None and digests.catalog is not None and contract.catalog_digest != digests.catalog:
        problems.append("catalog digest differs from the run manifest's agentContract.catalogDigest")
    for label, relpath, digest in (
        ("prompt", meta.prompt_path, digests.prompt),
        ("duty", meta.duty_path, digests.duty),
        ("instruction", meta.instruction_path, digests.instruction),
    ):
        if relpath is None or digest is None:
            continue
        data = reading.read_bytes(project_root / relpath, root=project_root)
        if isinstance(data, reading.LoadError):
            problems.append(f"{label} {relpath}: {data.reason}")
        elif sha256_bytes(data) != digest:
            problems.append(f"{label} digest does not match {relpath}")
    return problems


def duty_snapshot_problems(project_root: Path, manifest: rm.RunManifest) -> list[str]:
    """The run-scoped duty snapshot against the manifest's catalog digest and each duty's digest."""
    contract = manifest.agent_contract
    if contract is None or contract.duty_root is None or contract.catalog_digest is None:
        return []
    folder = project_root / contract.duty_root
    data = reading.read_bytes(folder / layout.DUTY_CATALOG_FILE, root=project_root)
    if isinstance(data, reading.LoadError):
        return [f"duty catalog {contract.duty_root}/catalog.json: {data.reason}"]
    problems = []
    if sha256_bytes(data) != contract.catalog_digest:
        problems.append(f"duty catalog {contract.duty_root}/catalog.json drifted from catalogDigest")
    try:
        catalog = rm.DutyCatalog.model_validate_json(data)
    except Exception as exc:  # pydantic.ValidationError; the message is summarised
        return [*problems, f"duty catalog is invalid: {str(exc).splitlines()[0]}"]
    for duty in catalog.duties:
        if duty.path is None or duty.sha256 is None:
            continue
        body = reading.read_bytes(folder / duty.path, root=project_root)
        if isinstance(body, reading.LoadError):
            problems.append(f"duty {duty.duty_id}: {body.reason}")
        elif sha256_bytes(body) != duty.sha256:
            problems.append(f"duty {duty.duty_id} ({duty.path}) does not match its catalog digest")
    return problems


def manifest_immutables_changed(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Immutable run-manifest fields that differ between two versions."""
    return [f for f in rm.RUN_MANIFEST_IMMUTABLE if old.get(f) != new.get(f)]


def replace_run_manifest(
    project_root: Path, manifest_path: Path, mutate: Callable[[rm.RunManifest], rm.RunManifest]
) -> rm.RunManifest:
    """Change a published run manifest (*mutate* returns the new one); a change to an immutable field is refused."""

    def apply(current: rm.RunManifest | None) -> rm.RunManifest:
        if current is None:
            raise WriteRefused(manifest_path, "run manifest is not published")
        before = current.dump()
        new = mutate(current)
        changed = manifest_immutables_changed(before, new.dump())
        if changed:
            raise WriteRefused(
                manifest_path, f"immutable field(s) {', '.join(changed)} cannot change for the lifetime of the run"
            )
        return new

    result = update_json(project_root, manifest_path, rm.RunManifest, apply)
    assert result is not None
    return result


__all__ = ["Published", "duty_snapshot_problems", "layout", "meta_problems", "publish_prompt", "replace_run_manifest"]
