"""Pydantic models of every JSON and JSONL artifact, and the registry tying them to schemas.

The JSON Schemas in ``schemas/`` are generated from these models
(``python -m okstra_core.models.schemas``); a test fails when they disagree.

Importing this package builds no model: each model module is imported when
it is named (``from okstra_core.models import report``), and the registry
(:mod:`.registry`) when ``DOC_KINDS``, ``DOC_KINDS_BY_NAME`` or ``DocKind`` is
first used. A command that validates a few kinds of document pays only for
their models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .registry import DOC_KINDS, DOC_KINDS_BY_NAME, DocKind

__all__ = ["DOC_KINDS", "DOC_KINDS_BY_NAME", "FINAL_REPORT_VERSIONS", "DocKind"]

#: Final-report data: schemaVersion -> document kind.
FINAL_REPORT_VERSIONS: Final = {"3.0": "final-report-v3.0", "2.0": "final-report-v2.0"}


def __getattr__(name: str) -> Any:
    if name in ("DOC_KINDS", "DOC_KINDS_BY_NAME", "DocKind"):
        from . import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
