"""The whole demo tree: every JSON and JSONL artifact (and sidecar header) loads through its
model and validates against its committed JSON Schema, and the demo holds every shape the
contract names."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
from conftest import classify_documents, document_values

from okstra_core import reading, resources
from okstra_core.layout import demo_home
from okstra_core.manager_home import list_managers
from okstra_core.models import DOC_KINDS_BY_NAME
from okstra_core.store import Project
from okstra_core.workflows import design_prep, direction


def _validator(kind: str) -> jsonschema.protocols.Validator:
    schema = json.loads(resources.read_schema_text(DOC_KINDS_BY_NAME[kind].schema_file))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _json_files(*folders: Path) -> set[Path]:
    found = set()
    for folder in folders:
        for dirpath, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if not d.startswith(".") or d in (".okstra", ".okstra-home")]
            for name in files:
                if name.endswith((".json", ".jsonl")) and not name.startswith("."):
                    found.add(Path(dirpath) / name)
    return found


def test_every_document_validates_against_model_and_schema(demo_root: Path) -> None:
    project = Project.open(demo_root)
    assert isinstance(project, Project)
    home = demo_home(demo_root)
    docs = classify_documents(project, home)
    # Nothing escapes classification: every JSON/JSONL file in the store is one of the documents above.
    assert _json_files(demo_root / ".okstra", home) - set(docs) == set()
    validators: dict[str, Any] = {}
    checked = 0
    for path, doc_kind, value in document_values(docs):
        DOC_KINDS_BY_NAME[doc_kind].model.model_validate(value)
        if doc_kind not in validators:  # checking a schema takes a while: once per kind
            validators[doc_kind] = _validator(doc_kind)
        validator = validators[doc_kind]
        errors = list(validator.iter_errors(value))
        assert not errors, f"{path}: {errors[0].message}"
        checked += 1
    assert checked > 150


def test_loaders_return_models_for_the_whole_demo(demo_root: Path) -> None:
    project = Project.open(demo_root)
    assert isinstance(project, Project)
    for ref in project.task_refs:
        task = ref.open()
        assert not isinstance(task.manifest, reading.LoadError), task.manifest
        for rd in task.run_dirs:
            for art in rd.artifacts():
                loaded = art.load()
                assert not isinstance(loaded, reading.LoadError), loaded
                if isinstance(loaded, reading.JsonlDoc):
                    assert not loaded.errors


def test_demo_holds_every_shape(demo_root: Path) -> None:
    project = Project.open(demo_root)
    assert isinstance(project, Project)
    refs = project.task_refs
    assert len(refs) == 13 and all(r.catalogued for r in refs)
    assert len({r.task_group for r in refs}) == 4
    tasks = {r.task_id: r.open() for r in refs}
    types = {rd.task_type for t in tasks.values() for rd in t.run_dirs}
    assert types == {"analysis", "option-selection", "implementation-planning", "implementation", "final-verification"}
    retry = tasks["retry-policy"]
    analysis = retry.run_dir("analysis")
    assert analysis is not None
    for category in ("manifests", "state", "prompts", "reports", "status"):
        assert {a.seq for a in analysis.artifacts(category)} >= {1, 2}, category  # a rerun in several categories
    assert [rd.stage for rd in retry.run_dirs if rd.task_type == "implementation"] == [1, 2, 3]
    assert len(retry.carry()) == 3
    consumers = retry.consumers()
    assert isinstance(consumers, reading.JsonlDoc) and len(consumers.records) == 3
    assert (
        len(analysis.of_kind("convergence-round-plan")) == 2 and len(analysis.of_kind("convergence-round-results")) == 2
    )
    assert analysis.of_kind("convergence-final") and analysis.of_kind("convergence-groups")
    resolution = design_prep.resolve(retry)
    verdicts = {v.verdict for item in resolution.items for v in item.inputs}
    assert {"authoritative", "duplicate-revision", "stale-fingerprint", "superseded"} <= verdicts
    assert {i.status for i in resolution.items} >= {"provisional", "blocked"}
    assert all(i.request is not None for i in resolution.items if i.status in ("provisional", "blocked"))
    assert design_prep.resolve(tasks["index-rebuild"]).legacy_unassessed
    chain = direction.check_chain(retry)
    assert chain and all(c.ok for c in chain), [c for c in chain if not c.ok]
    assert (retry.root / "instruction-set" / "selected-direction.json").exists()
    refund = tasks["refund-ledger"]
    assert (refund.root / "instruction-set" / "clarification-response.md").exists()
    state = analysis.load_latest("team-state")
    first = analysis.of_kind("team-state")[0].load()
    rows = first.worker_dispatches
    assert any(r.dispatch_id is None for r in rows) and first.agent_dispatches and first.agent_result_links
    assert len({r.dispatch_id for r in rows if r.dispatch_id}) == len([r for r in rows if r.dispatch_id])
    assert state is not None
    prompts = analysis.artifacts("prompts")
    assert {a.kind for a in prompts} >= {
        "lead-prompt",
        "lead-prompt-meta",
        "lead-prompt-log",
        "worker-prompt-meta",
        "reverify-prompt",
    }
    assert {inv.purpose for inv in project.invocations()} == {"code-review", "schedule-verification"}
    legacy = tasks["query-latency"].run_dir("analysis")
    assert legacy is not None and legacy.flat_legacy()
    managers = list_managers(demo_home(demo_root))
    assert len(managers) == 1
    projects = managers[0].projects()
    assert not isinstance(projects, reading.LoadError) and len(projects.projects) == 2
    latest = project.latest_task
    assert latest is not None and not isinstance(latest, reading.LoadError)


def test_demo_is_reproducible(tmp_path: Path, demo_root: Path) -> None:
    """Two demos hold the same files with the same bytes, apart from their absolute root path."""
    from okstra_core.demo import generate

    other = generate(tmp_path / "again")

    def tree(root: Path) -> dict[str, bytes]:
        out = {}
        for dirpath, _dirs, files in os.walk(root / ".okstra"):
            for name in files:
                if name.endswith(".lock"):
                    continue  # lock files are left by whichever writer ran last; they hold nothing
                full = Path(dirpath) / name
                out[full.relative_to(root).as_posix()] = full.read_bytes().replace(str(root).encode(), b"<root>")
        return out

    first, second = tree(demo_root), tree(other)
    assert first.keys() == second.keys()
    differing = [name for name in first if first[name] != second[name]]
    assert differing == []
