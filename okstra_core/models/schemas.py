"""Generate the JSON Schemas in ``schemas/`` from the models.

``python -m okstra_core.models.schemas [DIR]`` rewrites them; the test suite
compares the committed files with a fresh generation.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from . import DOC_KINDS, DocKind
from .base import bare_list_schema

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_for(kind: DocKind) -> dict[str, Any]:
    """The JSON Schema document of one kind (one line's schema for JSONL kinds)."""
    body = kind.model.model_json_schema(by_alias=True, mode="validation")
    item = getattr(kind.model, "BARE_LIST_ITEM", None)
    if isinstance(item, str):
        bare_list_schema(body, item)
    doc: dict[str, Any] = {"$schema": SCHEMA_DIALECT, "$id": f"okstra:{kind.schema_file}"}
    if kind.jsonl:
        body.setdefault("description", "")
        body["description"] = (body["description"] + "\n\nSchema of one JSONL line.").strip()
    doc.update(body)
    return doc


def schema_text(kind: DocKind) -> str:
    return json.dumps(schema_for(kind), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_all(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for kind in DOC_KINDS:
        path = folder / kind.schema_file
        path.write_text(schema_text(kind), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - developer tool
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "schemas"
    for p in write_all(target):
        print(p)
