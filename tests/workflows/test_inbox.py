"""The decisions inbox: every kind, its details, and each decision leaving the list once made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from okstra_core import reading, sidecar
from okstra_core.store import Project
from okstra_core.workflows import design_prep, direction, inbox, user_response, user_response_export
from okstra_core.workflows.inbox import PendingDecision, pending_decisions
from okstra_core.workflows.reports import report_by_path

from .helpers import INDEX, REFUND, RETRY

RETRY_ROOT = ".okstra/tasks/payments/retry-policy"
OPT = f"{RETRY_ROOT}/runs/option-selection"
OPT_REPORT = f"{OPT}/reports/final-report-option-selection-001.data.json"
OPT_SIDECAR = f"{OPT}/user-responses/user-response-option-selection-001.md"
RETRY_SD = f"{RETRY_ROOT}/instruction-set/selected-direction.json"
PLAN = f"{RETRY_ROOT}/runs/implementation-planning"
PLAN_REPORT = f"{PLAN}/reports/final-report-implementation-planning-002.data.json"
INPUTS = f"{PLAN}/design-prep-inputs"
REFUND_ROOT = ".okstra/tasks/payments/refund-ledger"
REFUND_REPORT = f"{REFUND_ROOT}/runs/analysis/reports/final-report-analysis-001.data.json"
REFUND_SIDECAR = f"{REFUND_ROOT}/runs/analysis/user-responses/user-response-analysis-001.md"
REFUND_CLAR = f"{REFUND_ROOT}/instruction-set/clarification-response.md"


def _inbox(root: Path) -> list[PendingDecision]:
    """The inbox of the demo's payments and search tasks (the checkout group holds decisions left open on purpose)."""
    project = Project.open(root)
    assert isinstance(project, Project)
    return [d for d in pending_decisions(project) if ":checkout:" not in d.task]


def _of(root: Path, kind: str, task: str | None = None) -> list[PendingDecision]:
    return [d for d in _inbox(root) if d.kind == kind and (task is None or d.task == task)]


def _task(root: Path, key: str):  # type: ignore[no-untyped-def]
    task = Project(root).find_task(key)
    assert task is not None
    return task


def _inputs(root: Path, prep_id: str, *revs: str) -> list[Path]:
    """The input files of *prep_id* at each of *revs*; every revision asked for must be there."""
    found = sorted(
        p for p in (root / INPUTS).iterdir() if f"-{prep_id}-" in p.name and any(f"-{r}-" in p.name for r in revs)
    )
    missing = [r for r in revs if not any(f"-{r}-" in p.name for p in found)]
    assert not missing, f"the demo has no {prep_id} input at {missing}"
    return found


def _generated_at(root: Path, rel: str) -> str:
    value = json.loads((root / rel).read_text(encoding="utf-8"))["generatedAt"]
    assert isinstance(value, str)
    return value


# ------------------------------------------------------------- approval and the demo as it is


def test_demo_lists_the_approval_and_nothing_answered(demo_root: Path) -> None:
    found = _inbox(demo_root)
    approvals = [d for d in found if d.kind == "approval"]
    assert [d.task for d in approvals] == [REFUND]
    approval = approvals[0]
    assert approval.path == f"{REFUND_ROOT}/task-manifest.json" and approval.item is None
    assert approval.summary.startswith("approve") and "analysis" in approval.summary
    manifest = json.loads((demo_root / approval.path).read_text(encoding="utf-8"))
    assert approval.since == manifest["updatedAt"]  # the time the manifest records
    # Everything else in the demo's retry-policy and refund-ledger is decided already.
    assert not [d for d in found if d.kind != "approval" and d.task in (RETRY, REFUND)]
    # A markerless legacy plan has nothing to confirm.
    assert not [d for d in found if d.task == INDEX]


def test_approval_leaves_when_the_manifest_no_longer_awaits(fresh_demo: Path) -> None:
    path = fresh_demo / REFUND_ROOT / "task-manifest.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    value["workflow"]["awaitingApproval"] = False
    path.write_text(json.dumps(value), encoding="utf-8")
    assert _of(fresh_demo, "approval") == []


# ------------------------------------------------------------------ direction choice


def test_direction_choice_then_planning_prepare_then_gone(fresh_demo: Path) -> None:
    (fresh_demo / RETRY_SD).unlink()
    (fresh_demo / OPT_SIDECAR).unlink()
    (choice,) = _of(fresh_demo, "direction-choice")
    assert (choice.task, choice.path, choice.item, choice.detail) == (RETRY, OPT_REPORT, None, None)
    assert choice.item_ids == ("IO-001", "IO-002", "IO-003")
    assert choice.report_path == fresh_demo / OPT_REPORT
    assert "IO-001 recommended" in choice.summary
    assert choice.since == _generated_at(fresh_demo, OPT_REPORT)
    assert _of(fresh_demo, "planning-prepare") == []

    direction.select_direction(fresh_demo, _task(fresh_demo, RETRY), "IO-002")
    assert _of(fresh_demo, "direction-choice") == []
    (prepare,) = _of(fresh_demo, "planning-prepare")
    assert (prepare.task, prepare.path, prepare.item) == (RETRY, OPT_SIDECAR, "IO-002")
    assert prepare.report_path == fresh_demo / OPT_REPORT

    direction.planning_prepare(fresh_demo, _task(fresh_demo, RETRY))
    assert _of(fresh_demo, "planning-prepare") == [] and _of(fresh_demo, "direction-choice") == []


def test_exported_file_dropped_in_place_makes_the_choice(fresh_demo: Path) -> None:
    """The HTML page's export, saved under the sidecar's name, counts like the verb."""
    (fresh_demo / RETRY_SD).unlink()
    (fresh_demo / OPT_SIDECAR).unlink()
    report = report_by_path(_task(fresh_demo, RETRY), fresh_demo / OPT_REPORT)
    inp = user_response.ExportInput(report.model, report.rel(), report.stem, report.sha256)
    (fresh_demo / OPT_SIDECAR).write_text(user_response.render_sidecar(inp, {}, "IO-003"), encoding="utf-8")
    assert _of(fresh_demo, "direction-choice") == []
    assert [d.item for d in _of(fresh_demo, "planning-prepare")] == ["IO-003"]


def test_a_choice_that_no_longer_fits_the_report_is_asked_again(fresh_demo: Path) -> None:
    (fresh_demo / RETRY_SD).unlink()
    path = fresh_demo / OPT_SIDECAR
    text = path.read_text(encoding="utf-8")
    digest = str(sidecar.parse(text).header["source-data-sha256"])
    path.write_text(text.replace(digest, "0" * 64), encoding="utf-8")
    (stale,) = _of(fresh_demo, "direction-choice")
    assert stale.detail == "sidecar-stale" and "again" in stale.summary
    assert _of(fresh_demo, "planning-prepare") == []
    path.write_text("no header at all\n", encoding="utf-8")
    (invalid,) = _of(fresh_demo, "direction-choice")
    assert invalid.detail == "sidecar-invalid"


def test_preselected_validation_needs_no_choice(demo_root: Path) -> None:
    assert not [d for d in _inbox(demo_root) if d.task == "demo-shop:payments:currency-rounding"]


# --------------------------------------------------------------------- clarification


def test_clarification_unanswered_then_attach_pending_then_gone(fresh_demo: Path) -> None:
    (fresh_demo / REFUND_SIDECAR).unlink()
    (fresh_demo / REFUND_CLAR).unlink()
    (open_,) = _of(fresh_demo, "clarification")
    assert (open_.task, open_.path, open_.item, open_.detail) == (REFUND, REFUND_REPORT, None, None)
    assert open_.item_ids == ("CQ-001", "CQ-002")
    assert open_.summary.startswith("answer 2 questions") and "\n" not in open_.summary
    assert open_.since == _generated_at(fresh_demo, REFUND_REPORT)

    task = _task(fresh_demo, REFUND)
    user_response_export.export(fresh_demo, task, fresh_demo / REFUND_REPORT, {"CQ-002": "gateway"})
    (attach,) = _of(fresh_demo, "clarification")
    assert (attach.path, attach.detail) == (REFUND_SIDECAR, "attach-pending")
    assert attach.report_path == fresh_demo / REFUND_REPORT

    user_response_export.attach_clarification(fresh_demo, _task(fresh_demo, REFUND))
    assert _of(fresh_demo, "clarification") == []


def test_a_new_export_must_be_attached_again(fresh_demo: Path) -> None:
    """Attached means attached with the sidecar's current bytes."""
    assert _of(fresh_demo, "clarification") == []
    user_response_export.export(fresh_demo, _task(fresh_demo, REFUND), fresh_demo / REFUND_REPORT, {"CQ-001": "Yes."})
    assert [d.detail for d in _of(fresh_demo, "clarification")] == ["attach-pending"]


# ------------------------------------------------------------------------ design-prep


def test_design_prep_open_item_then_confirmed(fresh_demo: Path) -> None:
    for path in _inputs(fresh_demo, "PREP-001", "r1", "r2"):
        path.unlink()
    (item,) = _of(fresh_demo, "design-prep")
    assert (item.task, item.item, item.detail) == (RETRY, "PREP-001", None)
    assert item.path == f"{PLAN}/design-prep-requests/design-prep-request-002-PREP-001.md"
    assert item.request_path == fresh_demo / item.path
    assert item.report_path == fresh_demo / PLAN_REPORT
    assert "[provisional]" in item.summary
    assert item.since == _generated_at(fresh_demo, PLAN_REPORT)

    design_prep.confirm(fresh_demo, _task(fresh_demo, RETRY), "PREP-001", "## format\n\nULID\n\n## rationale\n\nok\n")
    assert _of(fresh_demo, "design-prep") == []


def test_design_prep_says_when_the_last_revision_was_a_duplicate_or_stale(fresh_demo: Path) -> None:
    for path in _inputs(fresh_demo, "PREP-002", "r3"):
        path.unlink()
    (dup,) = _of(fresh_demo, "design-prep")
    assert (dup.item, dup.detail) == ("PREP-002", "duplicate-revision")
    assert "[blocked]" in dup.summary and "r2" in dup.summary
    for path in _inputs(fresh_demo, "PREP-002", "r2"):
        path.unlink()
    (stale,) = _of(fresh_demo, "design-prep")
    assert (stale.item, stale.detail) == ("PREP-002", "stale-fingerprint")
    design_prep.confirm(fresh_demo, _task(fresh_demo, RETRY), "PREP-002", "## store\n\nRedis\n\n## ttl\n\n1h\n")
    assert _of(fresh_demo, "design-prep") == []


def test_design_prep_without_requests_points_at_the_snapshot(fresh_demo: Path) -> None:
    for path in _inputs(fresh_demo, "PREP-001", "r1", "r2"):
        path.unlink()
    for path in (fresh_demo / PLAN / "design-prep-requests").iterdir():
        path.unlink()
    (item,) = _of(fresh_demo, "design-prep")
    assert item.path == PLAN_REPORT and item.request_path is None
    design_prep.materialize(fresh_demo, _task(fresh_demo, RETRY))
    (item,) = _of(fresh_demo, "design-prep")
    assert item.request_path is not None and item.request_path.exists()


# --------------------------------------------------------------------- the list itself


def test_newest_first_and_json_shape(fresh_demo: Path) -> None:
    (fresh_demo / RETRY_SD).unlink()
    (fresh_demo / OPT_SIDECAR).unlink()
    (fresh_demo / REFUND_SIDECAR).unlink()
    for path in _inputs(fresh_demo, "PREP-001", "r1", "r2"):
        path.unlink()
    found = _inbox(fresh_demo)
    assert {d.kind for d in found} == {"direction-choice", "clarification", "design-prep", "approval"}
    assert [d.since for d in found] == sorted((d.since for d in found), reverse=True)
    for d in found:
        value = d.to_json()
        assert list(value) == ["kind", "task", "path", "item", "summary", "since"]
        assert not Path(d.path).is_absolute() and (fresh_demo / d.path).exists()
        assert d.since.endswith("Z") and len(d.since) == 20


def test_unreadable_files_leave_their_decision_out(fresh_demo: Path) -> None:
    def everything() -> inbox.Inbox:
        project = Project.open(fresh_demo)
        assert isinstance(project, Project)
        return inbox.read_inbox(project)

    before = everything()
    assert before.unreadable == []
    (fresh_demo / RETRY_SD).unlink()
    (fresh_demo / OPT_SIDECAR).unlink()
    (fresh_demo / OPT_REPORT).write_text("{not json", encoding="utf-8")
    manifest = f"{REFUND_ROOT}/task-manifest.json"
    (fresh_demo / manifest).write_bytes(b"\xff\xfe")
    after = everything()
    # The choice the broken report would ask for and the approval of the broken manifest are left out ...
    assert not [d for d in after.items if d.kind in ("direction-choice", "approval") and ":payments:" in d.task]
    assert sorted(after.unreadable) == sorted([manifest, OPT_REPORT])
    # ... and only those: every other decision of the store is still there, unchanged.
    dropped = [d for d in before.items if d.path == manifest]
    assert len(dropped) == 1 and dropped[0].kind == "approval"
    assert after.items == [d for d in before.items if d not in dropped]
    assert len(after.items) >= 5


def test_control_characters_and_long_text_stay_on_one_line(fresh_demo: Path) -> None:
    (fresh_demo / REFUND_SIDECAR).unlink()
    (fresh_demo / REFUND_CLAR).unlink()
    path = fresh_demo / REFUND_REPORT
    value = json.loads(path.read_text(encoding="utf-8"))
    value["title"] = "line one\nline two\t\x1b[2J\u202e" + "x" * 500
    path.write_text(json.dumps(value), encoding="utf-8")
    (item,) = _of(fresh_demo, "clarification")
    assert "\n" not in item.summary and "\t" not in item.summary
    assert "line one line two \u241b[2J\\u202e" in item.summary  # as okstra_core.text.visible shows them
    assert not any(c in item.summary for c in "\x1b\u202e")
    assert len(item.summary) <= inbox.SUMMARY_MAX


def test_reads_only_what_the_kinds_need(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports, sidecars, manifests, selected-direction.json, clarification-response.md, design-prep folders."""
    read: list[Path] = []
    original = reading.read_bytes

    def spy(path: Path, **kwargs: object) -> bytes | reading.LoadError:
        read.append(Path(path))
        return original(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "read_bytes", spy)
    _inbox(demo_root)
    allowed_folders = {"reports", "user-responses", "design-prep-requests", "design-prep-inputs"}
    allowed_names = {"task-manifest.json", "selected-direction.json", "clarification-response.md", "task-catalog.json"}
    stray = [
        p
        for p in read
        if p.parent.name not in allowed_folders and p.name not in allowed_names and demo_root in p.parents
    ]
    assert stray == []
    assert any(p.parent.name == "reports" for p in read) and any(p.parent.name == "design-prep-inputs" for p in read)
    assert not [p for p in read if p.name.endswith((".md", ".html")) and p.parent.name == "reports"]


def test_since_falls_back_to_the_file_time(fresh_demo: Path) -> None:
    """No usable recorded time: the modification time of the file that made the decision pending."""
    import os

    (fresh_demo / RETRY_SD).unlink()
    (fresh_demo / OPT_SIDECAR).unlink()
    path = fresh_demo / OPT_REPORT
    value = json.loads(path.read_text(encoding="utf-8"))
    value.pop("generatedAt")  # "last tuesday" is no time: the report would not be read at all
    path.write_text(json.dumps(value), encoding="utf-8")
    moment = 1_800_000_000  # 2027-01-15T08:00:00Z
    os.utime(path, (moment, moment))
    (choice,) = _of(fresh_demo, "direction-choice")
    assert choice.since == "2027-01-15T08:00:00Z"
    value["generatedAt"] = "2026-11-30T10:00:00+02:00"  # recorded with an offset: shown in UTC
    path.write_text(json.dumps(value), encoding="utf-8")
    (choice,) = _of(fresh_demo, "direction-choice")
    assert choice.since == "2026-11-30T08:00:00Z"
    value["generatedAt"] = "0001-01-01T00:00:00+01:00"  # valid, but out of range once in UTC
    path.write_text(json.dumps(value), encoding="utf-8")
    os.utime(path, (moment, moment))
    (choice,) = _of(fresh_demo, "direction-choice")
    assert choice.since == "2027-01-15T08:00:00Z"


def test_files_reached_through_a_symlink_out_of_the_store_count_for_nothing(fresh_demo: Path, tmp_path: Path) -> None:
    """A sidecar or clarification-response.md pointing outside the project is not read."""
    (fresh_demo / RETRY_SD).unlink()
    outside = tmp_path / "outside.md"
    outside.write_bytes((fresh_demo / OPT_SIDECAR).read_bytes())
    (fresh_demo / OPT_SIDECAR).unlink()
    (fresh_demo / OPT_SIDECAR).symlink_to(outside)
    (choice,) = _of(fresh_demo, "direction-choice")
    assert choice.detail == "sidecar-invalid"
    assert _of(fresh_demo, "planning-prepare") == []

    clar = fresh_demo / REFUND_CLAR
    outside_clar = tmp_path / "clarification-response.md"
    outside_clar.write_bytes(clar.read_bytes())
    clar.unlink()
    clar.symlink_to(outside_clar)
    assert [d.detail for d in _of(fresh_demo, "clarification")] == ["attach-pending"]


def test_every_kind_has_its_words_for_notices_and_the_activity_feed() -> None:
    assert list(inbox.DECISION_WORDS) == list(inbox.KINDS)
