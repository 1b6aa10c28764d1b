"""The one registry of artifact kinds: every kind declares its reader and document kind once, in ``names``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from okstra_core import names
from okstra_core.models import DOC_KINDS, DOC_KINDS_BY_NAME, FINAL_REPORT_VERSIONS
from okstra_core.models.base import Model
from okstra_core.store import Project

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"
SOURCES = [p for pkg in ("okstra_core", "okstra_tui") for p in sorted((REPO / pkg).rglob("*.py"))]


@pytest.mark.parametrize("kind", names.KINDS, ids=lambda k: k.name)
def test_every_kind_with_a_document_has_a_model_schema_and_reader(kind: names.Kind) -> None:
    if kind.doc is None:
        assert kind.reader in ("text", "report"), f"{kind.name}: a {kind.reader} reader needs a document kind"
        return
    assert kind.reader in ("json", "jsonl", "sidecar", "folder")
    registered = DOC_KINDS_BY_NAME[kind.doc]
    assert kind.model is registered.model
    assert (SCHEMAS / registered.schema_file).is_file()
    assert registered.jsonl == (kind.reader == "jsonl")


def test_report_data_reads_by_its_declared_version() -> None:
    (report,) = [k for k in names.KINDS if k.reader == "report"]
    assert report.name == "final-report-data"
    for doc in FINAL_REPORT_VERSIONS.values():
        assert (SCHEMAS / DOC_KINDS_BY_NAME[doc].schema_file).is_file()


def test_json_kinds_are_json_files_and_text_kinds_are_not() -> None:
    for kind in names.KINDS:
        if kind.reader in ("json", "report"):
            assert kind.fmt == "json", kind.name
        if kind.reader == "jsonl":
            assert kind.fmt == "jsonl", kind.name
        if kind.reader == "folder":
            assert kind.fmt == "dir", kind.name
        if kind.fmt == "json":
            assert kind.reader in ("json", "report"), f"{kind.name} is JSON but is read as {kind.reader}"


def _model_names() -> set[str]:
    found = {d.model.__name__ for d in DOC_KINDS}
    stack: list[type] = [Model]
    while stack:
        cls = stack.pop()
        found.add(cls.__name__)
        stack.extend(cls.__subclasses__())
    return found


def kind_to_model_maps(source: str, filename: str) -> list[str]:
    """Dict literals in *source* mapping two or more artifact kind names to model classes."""
    kinds = {k.name for k in names.KINDS}
    models = _model_names()
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Dict):
            continue
        pairs = [
            (k.value, v)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and k.value in kinds
        ]
        to_models = [
            key
            for key, v in pairs
            if (isinstance(v, ast.Name) and v.id in models) or (isinstance(v, ast.Attribute) and v.attr in models)
        ]
        if len(to_models) >= 2:
            found.append(f"{filename}:{node.lineno}: {', '.join(to_models)}")
    return found


def test_the_map_finder_finds_a_planted_map() -> None:
    planted = "import x\nMODELS = {'run-manifest': x.RunManifest, 'team-state': TeamState}\n"
    assert kind_to_model_maps(planted, "planted.py") == ["planted.py:2: run-manifest, team-state"]


def test_no_module_keeps_its_own_kind_to_model_map() -> None:
    found = [hit for path in SOURCES for hit in kind_to_model_maps(path.read_text("utf-8"), str(path))]
    assert found == []


def test_load_returns_what_each_reader_declares(demo_root: Path) -> None:
    from pydantic import BaseModel

    from okstra_core.reading import JsonlDoc, LoadedSidecar

    seen: set[str] = set()
    for ref in Project(demo_root).task_refs:
        for rd in ref.open().run_dirs:
            for art in rd.artifacts():
                loaded = art.load()
                reader = art.spec.reader
                seen.add(reader)
                expected: type | tuple[type, ...] = {
                    "json": BaseModel,
                    "report": BaseModel,
                    "folder": BaseModel,
                    "jsonl": JsonlDoc,
                    "sidecar": LoadedSidecar,
                    "text": str,
                }[reader]
                assert isinstance(loaded, expected), f"{art.path}: {loaded!r}"
                if art.spec.model is not None and reader in ("json", "folder"):
                    assert isinstance(loaded, art.spec.model)
    assert seen == {"json", "report", "folder", "jsonl", "sidecar", "text"}
