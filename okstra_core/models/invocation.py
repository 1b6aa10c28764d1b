"""Agent invocations outside a task run: metadata, result envelope, completion marker."""

from __future__ import annotations

from .base import Model, RelPath, Sha256, Slug, Timestamp


class InvocationMeta(Model):
    """``<id>.prompt.md.meta.json``."""

    schema_version: str
    purpose: Slug
    invocation_id: Slug
    instructions_path: RelPath
    prompt_path: RelPath
    instructions_sha256: Sha256
    prompt_sha256: Sha256
    created_at: Timestamp


class ResultEnvelope(Model):
    """``<id>.result.json``: binds purpose, id, metadata path and the returned body."""

    schema_version: str
    purpose: Slug
    invocation_id: Slug
    prompt_meta_path: RelPath
    returned_body: str
    returned_at: Timestamp


class CompletionMarker(Model):
    """``<id>.prompt.md.completion.json``: published last; binds the canonical envelope digest."""

    schema_version: str
    purpose: Slug
    invocation_id: Slug
    result_path: RelPath
    envelope_sha256: Sha256
    completed_at: Timestamp
