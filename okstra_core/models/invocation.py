"""Agent invocations outside a task run: metadata, result envelope, completion marker.

The contract spells one field of these documents, ``returnedBody``; the rest is
described in prose ("binds purpose, invocation ID, prompt metadata path") and is
checked when present.
"""

from __future__ import annotations

from .base import Model, RelPath, Sha256, Slug, Timestamp


class InvocationMeta(Model):
    """``<id>.prompt.md.meta.json``."""

    schema_version: str | None = None
    purpose: Slug | None = None
    invocation_id: Slug | None = None
    instructions_path: RelPath | None = None
    prompt_path: RelPath | None = None
    instructions_sha256: Sha256 | None = None
    prompt_sha256: Sha256 | None = None
    created_at: Timestamp | None = None


class ResultEnvelope(Model):
    """``<id>.result.json``: binds purpose, id, metadata path and the returned body."""

    schema_version: str | None = None
    purpose: Slug | None = None
    invocation_id: Slug | None = None
    prompt_meta_path: RelPath | None = None
    returned_body: str
    returned_at: Timestamp | None = None


class CompletionMarker(Model):
    """``<id>.prompt.md.completion.json``: published last; binds the canonical envelope digest."""

    schema_version: str | None = None
    purpose: Slug | None = None
    invocation_id: Slug | None = None
    result_path: RelPath | None = None
    envelope_sha256: Sha256 | None = None
    completed_at: Timestamp | None = None
