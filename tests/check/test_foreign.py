"""Stores written by hand from the contract (``tests/fixtures/foreign/``) check clean."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.check import CheckReport, run_check

FOREIGN = Path(__file__).resolve().parents[1] / "fixtures" / "foreign"
VALID = sorted(p.name for p in (FOREIGN / "valid").iterdir() if p.is_dir())
PLACEHOLDER = "@ROOT@"


def materialise(group: str, name: str, tmp_path: Path) -> Path:
    """A copy of fixture *name* with ``@ROOT@`` replaced by the copy's absolute path."""
    root = tmp_path / name
    shutil.copytree(FOREIGN / group / name, root, symlinks=True)
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md"):
            text = path.read_text(encoding="utf-8")
            if PLACEHOLDER in text:
                path.write_text(text.replace(PLACEHOLDER, str(root)), encoding="utf-8")
    return root


def check_fixture(root: Path, tmp_path: Path) -> CheckReport:
    home = root / "okstra-home"
    return run_check(root, home=home if home.is_dir() else tmp_path / "no-home", jobs=1)


def errors(report: CheckReport) -> list[str]:
    return [f"{f.rule} {f.path}: {f.message}" for f in report.findings if f.severity == "error"]


def test_there_are_enough_foreign_stores() -> None:
    assert len(VALID) >= 8


@pytest.mark.parametrize("name", VALID)
def test_foreign_store_checks_without_errors(name: str, tmp_path: Path) -> None:
    root = materialise("valid", name, tmp_path)
    report = check_fixture(root, tmp_path)
    assert errors(report) == []


# ------------------------------------------------ one planted violation per gap, on the hand-written stores


def findings(report: CheckReport, rule: str) -> list[str]:
    return [f"{f.path}: {f.message}" for f in report.findings if f.rule == rule]


def _edit_json(path: Path, change: Callable[[Any], None]) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


ANALYSIS_RUN = ".okstra/tasks/checkout/slow-cart/runs/analysis"


@pytest.mark.parametrize(
    ("field", "value"),
    [("expectedReportPath", "/etc/passwd"), ("taskBriefPath", ".okstra/../../elsewhere/brief.md")],
)
def test_run_manifest_path_leaving_the_project_names_the_field(field: str, value: str, tmp_path: Path) -> None:
    root = materialise("valid", "analysis", tmp_path)
    manifest = root / ANALYSIS_RUN / "manifests/run-manifest-analysis-001.json"
    _edit_json(manifest, lambda v: v.update({field: value}))
    found = findings(check_fixture(root, tmp_path), "OKS035")
    assert len(found) == 1 and field in found[0] and value in found[0]


def test_report_under_an_unknown_task_type_is_info_like_its_run_dir(tmp_path: Path) -> None:
    root = materialise("valid", "analysis", tmp_path)
    source = root / ANALYSIS_RUN / "reports/final-report-analysis-001.data.json"
    target = root / ".okstra/tasks/checkout/slow-cart/runs/security-review/reports"
    target.mkdir(parents=True)
    value = json.loads(source.read_text(encoding="utf-8"))
    value.pop("taskType")
    value.pop("analysisFindings")
    value["securityFindings"] = [{"id": "S-1"}]
    (target / "final-report-security-review-001.data.json").write_text(json.dumps(value), encoding="utf-8")
    report = check_fixture(root, tmp_path)
    assert errors(report) == []
    assert any("security-review" in m for m in findings(report, "OKS019"))


def test_a_wrong_task_key_in_the_task_manifest_is_one_finding(tmp_path: Path) -> None:
    root = materialise("valid", "analysis", tmp_path)
    manifest = root / ".okstra/tasks/checkout/slow-cart/task-manifest.json"
    _edit_json(manifest, lambda v: v.update(taskKey="acme-web:checkout:slow-carts"))
    report = check_fixture(root, tmp_path)
    assert [e.split(" ")[0] for e in errors(report)] == ["OKS031"]


def test_a_group_folder_that_breaks_the_slug_rule_is_one_finding(tmp_path: Path) -> None:
    root = materialise("valid", "option-selection", tmp_path)
    tasks = root / ".okstra/tasks"
    (tasks / "billing").rename(tasks / "Billing")
    report = check_fixture(root, tmp_path)
    assert [e.split(" ")[0] for e in errors(report)] == ["OKS018"]
    from okstra_core.store import Project

    listed = Project(root).task_refs
    assert [ref.root.relative_to(tasks).as_posix() for ref in listed] == ["Billing/invoice-rounding"]


def test_stage_mismatch_says_expected_and_found(tmp_path: Path) -> None:
    root = materialise("valid", "implementation-stages", tmp_path)
    manifest = root / ".okstra/tasks/mobile/offline-sync/runs/implementation/stage-2/manifests"
    _edit_json(manifest / "run-manifest-implementation-001.json", lambda v: v.pop("stage"))
    found = findings(check_fixture(root, tmp_path), "OKS024")
    assert len(found) == 1 and "expected stage 2" in found[0] and "None" not in found[0]


def test_child_context_under_an_invalid_children_file_is_reported_once(tmp_path: Path) -> None:
    root = materialise("valid", "manager", tmp_path)
    children = root / "okstra-home/managers/q4-launch/task-groups/launch/checkout-v2/children.json"
    children.write_text('{"children": "web"}\n', encoding="utf-8")
    report = check_fixture(root, tmp_path)
    assert [e.split(" ")[0] for e in errors(report)] == ["OKS020"]


def test_a_sidecar_with_one_bad_header_line_still_has_its_digest_checked(tmp_path: Path) -> None:
    root = materialise("valid", "option-selection", tmp_path)
    sidecar = root / ".okstra/tasks/billing/invoice-rounding/runs/option-selection/user-responses"
    path = sidecar / "user-response-option-selection-1000.md"
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"source-data-sha256: [0-9a-f]+", "this line is broken\nsource-data-sha256: " + "0" * 64, text)
    path.write_text(text, encoding="utf-8")
    report = check_fixture(root, tmp_path)
    assert findings(report, "OKS023") and findings(report, "OKS070")


def test_a_team_state_with_one_bad_row_still_has_its_links_checked(tmp_path: Path) -> None:
    root = materialise("valid", "implementation-stages", tmp_path)
    state = (
        root / ".okstra/tasks/mobile/offline-sync/runs/implementation/stage-1/state/team-state-implementation-001.json"
    )

    def plant(v: Any) -> None:
        v["agentDispatches"].append({"dispatchId": ["not", "a", "string"]})
        v["agentResultLinks"].append({"dispatchId": "hn-9", "resultPath": "/tmp/elsewhere.md"})

    _edit_json(state, plant)
    report = check_fixture(root, tmp_path)
    assert findings(report, "OKS020")
    assert any("hn-9" in m for m in findings(report, "OKS062"))


def test_a_design_prep_request_edited_after_materialization_is_detected(fresh_demo: Path) -> None:
    from .helpers import TASK, check, edit_text

    requests = sorted((fresh_demo / TASK / "runs/implementation-planning/design-prep-requests").iterdir())
    edit_text(requests[0], "## How to answer", "## How to answer (edited)")
    found = findings(check(fresh_demo), "OKS080")
    assert any(requests[0].name in f and "edited after materialization" in f for f in found)


def test_a_request_of_another_template_version_is_a_warning_naming_it(tmp_path: Path) -> None:
    root = materialise("valid", "planning", tmp_path)
    found = findings(check_fixture(root, tmp_path), "OKS085")
    assert len(found) == 1 and "version 4" in found[0]


# ------------------------------------------------------------------------------------------- read side


@pytest.mark.parametrize("name", VALID)
def test_the_read_side_reads_every_foreign_document(name: str, tmp_path: Path) -> None:
    from okstra_core.errors import LoadError
    from okstra_core.manager_home import list_managers
    from okstra_core.store import Project

    root = materialise("valid", name, tmp_path)
    project = Project(root)
    loaded: dict[Path, object] = {
        layout.task_catalog_path(root): project.catalog,
        layout.latest_task_path(root): project.latest_task,
    }
    assert not isinstance(project.catalog_listing(), LoadError)
    for ref in project.task_refs:
        task = ref.open()
        loaded[layout.task_manifest_path(task.root)] = task.manifest
        for rd in task.run_dirs:
            assert rd.unrecognised() == []
            for art in rd.artifacts():
                loaded[art.path] = art.load()
    for inv in project.invocations():
        loaded[inv.paths.meta] = inv.meta()
        loaded[inv.paths.result] = inv.result()
        loaded[inv.paths.completion] = inv.completion()
    for manager in list_managers(root / "okstra-home"):
        loaded[manager.folder / layout.MANAGER_INFO] = manager.info()
        loaded[manager.folder / layout.MANAGER_PROJECTS] = manager.projects()
        for mtask in manager.tasks():
            loaded[mtask.folder / layout.MANAGER_TASK_MANIFEST] = mtask.manifest()
            loaded[mtask.folder / layout.MANAGER_CHILDREN] = mtask.children()
            loaded[mtask.folder / layout.MANAGER_SNAPSHOTS] = mtask.snapshots()
            for path, doc in (
                (mtask.folder / layout.MANAGER_EVENTS, mtask.events()),
                (mtask.folder / layout.MANAGER_DIRECTIVES, mtask.directives()),
            ):
                assert isinstance(doc, LoadError) or doc.errors == [], doc.errors
                loaded[path] = doc
            for path in mtask.child_contexts():
                loaded[path] = mtask.read_child_context(path)
    problems = [value for value in loaded.values() if isinstance(value, LoadError)]
    assert problems == []
    assert len(loaded) > 2, "each fixture has documents beyond its catalog"
    # The stores without tasks: every invocation and manager document was read through the read side.
    others = [layout.agent_invocations_dir(root), root / "okstra-home"]
    documents = {p for folder in others for p in folder.rglob("*.json*") if ".tmp" not in p.parent.name}
    assert documents - set(loaded) == set()
    assert name not in ("agent-invocations", "manager") or documents


def test_executions_group_by_segment_without_run_contexts(tmp_path: Path) -> None:
    from okstra_core.store import Project

    root = materialise("valid", "analysis", tmp_path)
    task = Project(root).task_refs[0].open()
    rd = task.run_dir("analysis")
    assert rd is not None and not rd.of_kind("run-context")
    (execution,) = rd.executions()
    assert execution.segment == "2026-10-05T08:30:00Z"
    assert {a.name.filename for a in execution.artifacts} >= {
        "run-manifest-analysis-001.json",
        "team-state-analysis-001.json",
        "lead-execution-prompt-analysis-001.md",
        "final-report-analysis-001.data.json",
    }


def test_migration_archives_are_recognised_by_the_reader_and_the_workbench(tmp_path: Path) -> None:
    from okstra_core.store import Project
    from okstra_tui.data.runs import list_runs

    root = materialise("valid", "convergence-restart", tmp_path)
    task = Project(root).task_refs[0].open()
    rd = task.run_dir("analysis")
    assert rd is not None
    assert rd.unrecognised() == []
    assert [p.name for p in rd.migrations()] == ["convergence-work-analysis-001.json.20261127T105900Z.orig"]
    (listing,) = list_runs(task).run_dirs
    assert listing.unknown == [] and listing.migrations == rd.migrations()


#: Documents of the hand-written stores and project-added fields each lacks (a sample per document kind).
ABSENT_ADDED: dict[str, dict[str, tuple[str, ...]]] = {
    "analysis": {
        ".okstra/discovery/task-catalog.json": ("tasks[].title", "tasks[].currentStatus"),
        ".okstra/discovery/latest-task.json": ("taskManifestPath",),
        ".okstra/tasks/checkout/slow-cart/task-manifest.json": ("title", "createdAt"),
        ".okstra/tasks/checkout/slow-cart/history/timeline.json": ("entries[].reportPath",),
    },
    "implementation-stages": {
        ".okstra/tasks/mobile/offline-sync/runs/implementation/carry/stage-1.json": ("runManifestPath", "recordedAt"),
        ".okstra/tasks/mobile/offline-sync/history/fix-cycles.jsonl": ("symptom",),
    },
    "planning": {
        ".okstra/tasks/search/reindex/runs/implementation-planning/consumers.jsonl": ("consumedAt",),
        ".okstra/tasks/search/reindex/runs/implementation-planning/design-prep-requests/"
        "design-prep-request-001-PREP-002.md": ("item-status",),
    },
    "option-selection": {
        ".okstra/tasks/billing/invoice-rounding/instruction-set/selected-direction.json": ("selectedAt",),
        ".okstra/tasks/billing/invoice-rounding/runs/option-selection/user-responses/"
        "user-response-option-selection-1000.md": ("format-version",),
    },
    "convergence-restart": {
        ".okstra/tasks/auth/token-expiry/runs/analysis/state/convergence-analysis-001.json": ("terminalState",),
    },
    "agent-invocations": {
        ".okstra/agent-invocations/code-review/review-feature-login-01.result.json": ("returnedAt",),
    },
    "manager": {
        "okstra-home/managers/q4-launch/manager.json": ("title", "createdAt"),
        "okstra-home/managers/q4-launch/task-groups/launch/checkout-v2/children.json": ("children[].status",),
        "okstra-home/managers/q4-launch/task-groups/launch/checkout-v2/events.jsonl": ("at",),
    },
}


@pytest.mark.parametrize("name", VALID)
def test_absent_project_added_fields_are_one_info_per_document(name: str, tmp_path: Path) -> None:
    root = materialise("valid", name, tmp_path)
    report = check_fixture(root, tmp_path)
    found = [f for f in report.findings if f.rule == "OKS026"]
    assert found, "a store written from the contract alone lacks some fields this project adds"
    assert all(f.severity == "info" for f in found)
    paths = [f.path.replace("$OKSTRA_HOME/", "okstra-home/") for f in found]
    assert len(paths) == len(set(paths)), "one finding per document"
    messages = dict(zip(paths, (f.message for f in found), strict=True))
    for path, fields in ABSENT_ADDED.get(name, {}).items():
        assert path in messages, (path, sorted(messages))
        named = messages[path].split(": ", 1)[1].split(", ")
        assert all(field in named for field in fields), (path, fields, messages[path])
    # Info only: a clean run stays clean, and the documents still feed every other rule.
    assert [f for f in report.findings if f.severity == "error"] == []
