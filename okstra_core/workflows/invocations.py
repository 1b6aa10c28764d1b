"""Agent invocations outside a task run: ``.okstra/agent-invocations/<purpose>/<id>.*``.

Written in the contract's order: instructions, prompt, metadata, result
envelope, and the completion marker last, which binds the canonical digest of
the envelope. Consumers read only the ``returnedBody`` that
:func:`verify_completion` hands out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import layout, reading, writes
from ..digests import sha256_bytes, sha256_json
from ..errors import WriteRefused
from ..models.invocation import CompletionMarker, InvocationMeta, ResultEnvelope
from ..store import Invocation, Project
from ..times import iso
from .common import SYSTEM_CLOCK, Clock

SCHEMA = "1.0"


def start(
    project_root: Path, purpose: str, invocation_id: str, instructions: str, prompt: str, clock: Clock = SYSTEM_CLOCK
) -> layout.InvocationPaths:
    """Write instructions, prompt and metadata (create-only; a retry with the same bytes succeeds)."""
    paths = layout.invocation_paths(project_root, purpose, invocation_id)
    ibytes, pbytes = instructions.encode(), prompt.encode()
    # Compare what is there before writing anything, so a refusal leaves no new file behind.
    for path, data in ((paths.instructions, ibytes), (paths.prompt, pbytes)):
        current = reading.read_bytes(path, root=project_root) if os.path.lexists(path) else None
        if isinstance(current, reading.LoadError):
            raise WriteRefused(path, current.reason)
        if current is not None and current != data:
            raise WriteRefused(path, "exists with different content; invocation files are immutable")
    if os.path.lexists(paths.meta):
        existing = reading.load_model(paths.meta, InvocationMeta, root=project_root)
        if isinstance(existing, reading.LoadError):
            raise WriteRefused(paths.meta, existing.reason)
        if (existing.instructions_sha256, existing.prompt_sha256) != (sha256_bytes(ibytes), sha256_bytes(pbytes)):
            raise WriteRefused(paths.meta, "metadata exists for a different prompt")
    writes.create_only(project_root, paths.instructions, ibytes)
    writes.create_only(project_root, paths.prompt, pbytes)
    meta_path = paths.meta
    if not meta_path.exists():
        meta = InvocationMeta(
            schema_version=SCHEMA,
            purpose=purpose,
            invocation_id=invocation_id,
            instructions_path=layout.rel(paths.instructions, project_root),
            prompt_path=layout.rel(paths.prompt, project_root),
            instructions_sha256=sha256_bytes(ibytes),
            prompt_sha256=sha256_bytes(pbytes),
            created_at=iso(clock.now()),
        )
        writes.create_only_json(project_root, meta_path, meta.dump())
    else:
        existing = reading.load_model(meta_path, InvocationMeta, root=project_root)
        if isinstance(existing, reading.LoadError) or existing.prompt_sha256 != sha256_bytes(pbytes):
            raise WriteRefused(meta_path, "metadata exists for a different prompt")
    return paths


def complete(
    project_root: Path, purpose: str, invocation_id: str, returned_body: str, clock: Clock = SYSTEM_CLOCK
) -> Path:
    """Publish the result envelope, then the completion marker binding its canonical digest."""
    paths = layout.invocation_paths(project_root, purpose, invocation_id)
    if not paths.meta.exists():
        raise WriteRefused(paths.meta, "invocation has no published prompt metadata")
    if paths.result.exists():
        recorded = reading.load_model(paths.result, ResultEnvelope, root=project_root)
        if isinstance(recorded, reading.LoadError):
            raise WriteRefused(recorded.path, recorded.reason)
        if recorded.returned_body != returned_body:
            raise WriteRefused(paths.result, "a different result is already recorded for this invocation")
    else:
        envelope = ResultEnvelope(
            schema_version=SCHEMA,
            purpose=purpose,
            invocation_id=invocation_id,
            prompt_meta_path=layout.rel(paths.meta, project_root),
            returned_body=returned_body,
            returned_at=iso(clock.now()),
        )
        writes.create_only_json(project_root, paths.result, envelope.dump())
    loaded = reading.load_model(paths.result, ResultEnvelope, root=project_root)
    if isinstance(loaded, reading.LoadError):
        raise WriteRefused(loaded.path, loaded.reason)
    if loaded.returned_body != returned_body:
        raise WriteRefused(paths.result, "a different result is already recorded for this invocation")
    marker = CompletionMarker(
        schema_version=SCHEMA,
        purpose=purpose,
        invocation_id=invocation_id,
        result_path=layout.rel(paths.result, project_root),
        envelope_sha256=sha256_json(loaded.dump()),
        completed_at=iso(clock.now()),
    )
    if not paths.completion.exists():
        writes.create_only_json(project_root, paths.completion, marker.dump())
    return paths.completion


def invocation_problems(inv: Invocation, *, require_digest: bool = False) -> list[str]:
    """Why an invocation's chain does not hold (empty when it does). Never raises.

    A binding field that is not recorded is not compared (the contract does not
    spell these fields); *require_digest* makes a completion marker without an
    envelope digest a problem, for consumers that must see the binding.
    """
    root = inv.project.root
    paths = inv.paths
    problems: list[str] = []
    meta = inv.meta()
    if isinstance(meta, reading.LoadError):
        return [f"metadata: {meta.reason}"]
    if (meta.purpose or inv.purpose, meta.invocation_id or inv.invocation_id) != (inv.purpose, inv.invocation_id):
        problems.append(f"metadata names {meta.purpose}/{meta.invocation_id}, not {inv.purpose}/{inv.invocation_id}")
    for label, rel, digest in (
        ("instructions", meta.instructions_path, meta.instructions_sha256),
        ("prompt", meta.prompt_path, meta.prompt_sha256),
    ):
        if rel is None or digest is None:
            continue  # not recorded: nothing to compare
        data = reading.read_bytes(root / rel, root=root)
        if isinstance(data, reading.LoadError):
            problems.append(f"{label}: {data.reason}")
        elif sha256_bytes(data) != digest:
            problems.append(f"{label} digest does not match {rel}")
    if not paths.result.exists() and not paths.completion.exists():
        return problems  # still running
    envelope = inv.result()
    if isinstance(envelope, reading.LoadError):
        return [*problems, f"result envelope: {envelope.reason}"]
    if envelope.purpose not in (None, inv.purpose) or envelope.invocation_id not in (None, inv.invocation_id):
        problems.append(f"cross-invocation link: envelope names {envelope.purpose}/{envelope.invocation_id}")
    if envelope.prompt_meta_path not in (None, layout.rel(paths.meta, root)):
        problems.append(f"cross-invocation link: envelope points at metadata {envelope.prompt_meta_path}")
    if not paths.completion.exists():
        return [*problems, "completion marker is missing (result not published)"]
    marker = inv.completion()
    if isinstance(marker, reading.LoadError):
        return [*problems, f"completion marker: {marker.reason}"]
    if (
        marker.purpose not in (None, inv.purpose)
        or marker.invocation_id not in (None, inv.invocation_id)
        or marker.result_path not in (None, layout.rel(paths.result, root))
    ):
        problems.append("cross-invocation link: completion marker names another invocation's result")
    raw = reading.load_json(paths.result, root=root)
    if marker.envelope_sha256 is None:
        if require_digest:
            problems.append("completion marker records no envelope digest, so it binds no envelope")
    elif not isinstance(raw, reading.LoadError) and marker.envelope_sha256 != sha256_json(raw):
        problems.append("completion marker digest does not match the canonical envelope digest")
    return problems


def verify_completion(project_root: Path, purpose: str, invocation_id: str) -> str:
    """The ``returnedBody`` when the whole chain holds; a refusal otherwise."""
    paths = layout.invocation_paths(project_root, purpose, invocation_id)
    if not paths.completion.exists():
        raise WriteRefused(paths.completion, "completion marker is missing")
    project = Project(project_root)
    problems = invocation_problems(Invocation(project, paths, purpose), require_digest=True)
    if problems:
        raise WriteRefused(paths.completion, problems[0])
    envelope = reading.load_model(paths.result, ResultEnvelope, root=project_root)
    assert not isinstance(envelope, reading.LoadError)
    return envelope.returned_body


__all__ = ["complete", "invocation_problems", "json", "start", "verify_completion"]
