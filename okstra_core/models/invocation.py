"""Agent invocations outside a task run: metadata, result envelope, completion marker.

The contract spells one field of these documents, ``returnedBody``; the rest is
described in prose ("binds purpose, invocation ID, prompt metadata path") and is
checked when present.
"""

from __future__ import annotations

from typing import Annotated

from .base import ADDED, Model, RelPath, Sha256, Slug, Timestamp


class InvocationMeta(Model):
    """``<id>.prompt.md.meta.json``."""

    schema_version: Annotated[str | None, ADDED] = None
    purpose: Annotated[Slug | None, ADDED] = None
    invocation_id: Annotated[Slug | None, ADDED] = None
    instructions_path: Annotated[RelPath | None, ADDED] = None
    prompt_path: Annotated[RelPath | None, ADDED] = None
    instructions_sha256: Annotated[Sha256 | None, ADDED] = None
    prompt_sha256: Annotated[Sha256 | None, ADDED] = None
    created_at: Annotated[Timestamp | None, ADDED] = None


class ResultEnvelope(Model):
    """``<id>.result.json``: binds purpose, id, metadata path and the returned body."""

    schema_version: Annotated[str | None, ADDED] = None
    purpose: Annotated[Slug | None, ADDED] = None
    invocation_id: Annotated[Slug | None, ADDED] = None
    prompt_meta_path: Annotated[RelPath | None, ADDED] = None
    returned_body: str
    returned_at: Annotated[Timestamp | None, ADDED] = None


class CompletionMarker(Model):
    """``<id>.prompt.md.completion.json``: published last; binds the canonical envelope digest."""

    schema_version: Annotated[str | None, ADDED] = None
    purpose: Annotated[Slug | None, ADDED] = None
    invocation_id: Annotated[Slug | None, ADDED] = None
    result_path: Annotated[RelPath | None, ADDED] = None
    envelope_sha256: Annotated[Sha256 | None, ADDED] = None
    completed_at: Annotated[Timestamp | None, ADDED] = None
