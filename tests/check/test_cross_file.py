"""Rules that hold one file against another: each breaks on a planted inconsistency and is silent once mended.

Every case plants one inconsistency between two files of a demo copy, checks
that its rule fires at the expected file with a message naming the other file
and both values, then mends the store (not always by undoing the edit) and
checks that the rule says nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from okstra_core.check.catalog import RULES_BY_ID

from .helpers import TASK, check, edit_json, findings_of, rel

RUNS = f"{TASK}/runs"
ANALYSIS = f"{RUNS}/analysis"
TIMELINE = f"{TASK}/history/timeline.json"
STALE = ".okstra/tasks/search/stale-cache"


@dataclass(frozen=True)
class Case:
    """Plant an inconsistency (returning the file the finding is on), then mend it."""

    plant: Callable[[Path], str]
    mend: Callable[[Path], None]
    #: Parts the message must hold: the other file's name and both values.
    says: tuple[str, ...]


def _segment(root: Path, manifest: str) -> str:
    value: str = json.loads((root / manifest).read_text(encoding="utf-8"))["runDateTimeSegment"]
    return value


def _replace_everywhere(root: Path, folder: str, old: str, new: str) -> None:
    for path in sorted((root / folder).rglob("*.json")):
        text = path.read_text(encoding="utf-8")
        if old in text:
            path.write_text(text.replace(old, new), encoding="utf-8")


# ------------------------------------------------------------------ OKS041


def _timeline_segment(root: Path) -> str:
    edit_json(root / TIMELINE, lambda d: d["entries"][0].update(runDateTimeSegment="2026-11-18T09:00:00Z"))
    return TIMELINE


def _timeline_segment_mend(root: Path) -> None:
    # The same moment spelled with an offset agrees.
    seg = _segment(root, f"{ANALYSIS}/manifests/run-manifest-analysis-001.json").replace("Z", "+00:00")
    edit_json(root / TIMELINE, lambda d: d["entries"][0].update(runDateTimeSegment=seg))


# ------------------------------------------------------------------ OKS042

_ORPHAN = f"{ANALYSIS}/state/active-run-context-analysis-002.json"


def _orphan_segment(root: Path) -> str:
    edit_json(root / _ORPHAN, lambda d: d["identity"].update(runDateTimeSegment="2026-11-20T14:00:00Z"))
    return _ORPHAN


def _orphan_segment_mend(root: Path) -> None:
    seg = _segment(root, f"{ANALYSIS}/manifests/run-manifest-analysis-002.json")
    edit_json(root / _ORPHAN, lambda d: d["identity"].update(runDateTimeSegment=seg))


# ------------------------------------------------------------------ OKS048

_STRAY = f"{ANALYSIS}/reports/final-report-analysis-003.data.json"
_STRAY_SEGMENT = "2026-11-20T14:00:00Z"


def _report_of_no_run(root: Path) -> str:
    """Report data at a seq of its own, stamped with a run that no run manifest or timeline entry records."""
    text = (root / ANALYSIS / "reports/final-report-analysis-002.data.json").read_text(encoding="utf-8")
    seg = _segment(root, f"{ANALYSIS}/manifests/run-manifest-analysis-002.json")
    (root / _STRAY).write_text(text.replace(seg, _STRAY_SEGMENT), encoding="utf-8")
    return _STRAY


def _report_of_no_run_mend(root: Path) -> None:
    # A run the timeline alone records (as a legacy run without a manifest) is a recorded run.
    entry = {"runDir": ANALYSIS, "runDateTimeSegment": _STRAY_SEGMENT, "taskType": "analysis", "status": "completed"}
    edit_json(root / TIMELINE, lambda d: d["entries"].insert(2, entry))


# ------------------------------------------------------------------ OKS043

_SECOND = f"{ANALYSIS}/manifests/run-manifest-analysis-002.json"


def _not_in_timeline(root: Path) -> str:
    edit_json(root / TIMELINE, lambda d: d["entries"].pop(1))
    return _SECOND


def _not_in_timeline_mend(root: Path) -> None:
    # An entry that names no manifest still covers the execution by its segment.
    seg = _segment(root, _SECOND)
    edit_json(root / TIMELINE, lambda d: d["entries"].insert(1, {"runDateTimeSegment": seg, "status": "completed"}))


# ------------------------------------------------------------------ OKS044

_CONTEXT = f"{ANALYSIS}/state/active-run-context-analysis-001.json"
_MOVED = f"{ANALYSIS}/state/active-run-context-analysis-003.json"


def _split_seq(root: Path) -> str:
    (root / _CONTEXT).rename(root / _MOVED)
    return _MOVED


def _split_seq_mend(root: Path) -> None:
    (root / _MOVED).rename(root / _CONTEXT)


# ------------------------------------------------------------------ OKS045

_ORDER: dict[str, str] = {}


def _seq_order(root: Path) -> str:
    seg = _segment(root, _SECOND)
    earlier = "2026-11-01" + seg[10:]
    _ORDER.update(seg=seg, earlier=earlier)
    _replace_everywhere(root, TASK, seg, earlier)
    return f"{ANALYSIS}/manifests/run-context-analysis-002.json"


def _seq_order_mend(root: Path) -> None:
    _replace_everywhere(root, TASK, _ORDER["earlier"], _ORDER["seg"])


# ------------------------------------------------------------------ OKS046

_TASK_MANIFEST = f"{TASK}/task-manifest.json"


def _latest_status(root: Path) -> str:
    edit_json(root / _TASK_MANIFEST, lambda d: d.update(latestRunStatus="failed"))
    return _TASK_MANIFEST


def _latest_status_mend(root: Path) -> None:
    edit_json(root / _TASK_MANIFEST, lambda d: d.update(latestRunStatus="completed"))


def _latest_path(root: Path) -> str:
    edit_json(root / _TASK_MANIFEST, lambda d: d.update(latestRunPath=ANALYSIS))
    return _TASK_MANIFEST


def _latest_path_mend(root: Path) -> None:
    # Naming the latest run's manifest instead of its run dir is as good.
    manifest = f"{RUNS}/final-verification/manifests/run-manifest-final-verification-001.json"
    edit_json(root / _TASK_MANIFEST, lambda d: d.update(latestRunPath=manifest))


def _current_status(root: Path) -> str:
    edit_json(root / _TASK_MANIFEST, lambda d: d.update(currentStatus="in-progress"))
    return _TASK_MANIFEST


def _current_status_mend(root: Path) -> None:
    # A task status that is no run status (the contract's vocabulary is open) is not held to the run's.
    edit_json(root / _TASK_MANIFEST, lambda d: d.update(currentStatus="ready-for-review"))


def _checkpoint(root: Path) -> str:
    first = f"{ANALYSIS}/manifests/run-manifest-analysis-001.json"
    edit_json(root / _TASK_MANIFEST, lambda d: d["workflow"].update(lastSafeCheckpoint=first))
    return _TASK_MANIFEST


def _checkpoint_mend(root: Path) -> None:
    # A checkpoint that names no run manifest (the contract leaves its shape open) is not held to it.
    edit_json(root / _TASK_MANIFEST, lambda d: d["workflow"].update(lastSafeCheckpoint="final-verification"))


# ------------------------------------------------------------------ OKS047

_CYCLE_MANIFEST = f"{STALE}/runs/final-verification/stage-1/manifests/run-manifest-final-verification-001.json"


def _unknown_cycle(root: Path) -> str:
    edit_json(root / _CYCLE_MANIFEST, lambda d: d.update(fixCycleId="fc-9"))
    return _CYCLE_MANIFEST


def _unknown_cycle_mend(root: Path) -> None:
    edit_json(root / _CYCLE_MANIFEST, lambda d: d.update(fixCycleId="fc-2"))


_CYCLE_TIMELINE = f"{STALE}/history/timeline.json"


def _unknown_cycle_in_timeline(root: Path) -> str:
    """Only the timeline entry names an unknown cycle; the run manifest still names fc-2."""
    edit_json(root / _CYCLE_TIMELINE, lambda d: d["entries"][0].update(fixCycleId="fc-9"))
    return _CYCLE_TIMELINE


def _unknown_cycle_in_timeline_mend(root: Path) -> None:
    edit_json(root / _CYCLE_TIMELINE, lambda d: d["entries"][0].update(fixCycleId="fc-1"))


# ------------------------------------------------------------------ OKS143, OKS144

_HOME = ".okstra-home/managers/release-train"
_PROJECTS = f"{_HOME}/projects.json"
_CHILDREN = f"{_HOME}/task-groups/q4-release/payments-hardening/children.json"


def _unregistered_child(root: Path) -> str:
    edit_json(root / _CHILDREN, lambda d: d["children"][1].update(projectId="payroll"))
    return _CHILDREN


def _unregistered_child_mend(root: Path) -> None:
    (root / "services/payroll").mkdir(parents=True)
    row = {"projectId": "payroll", "projectRoot": str(root / "services/payroll")}
    edit_json(root / _PROJECTS, lambda d: d["projects"].append(row))


def _registered_id(root: Path) -> str:
    # The copy's registration still names the original demo folder: point it at this copy first.
    edit_json(root / _PROJECTS, lambda d: d["projects"][0].update(projectRoot=str(root)))
    edit_json(root / ".okstra/project.json", lambda d: d.update(projectId="demo-store"))
    return _PROJECTS


def _registered_id_mend(root: Path) -> None:
    def rename(d: dict[str, list[dict[str, str]]]) -> None:
        d["projects"][0]["projectId"] = "demo-store"

    edit_json(root / _PROJECTS, rename)


# ------------------------------------------------------------------ OKS065, OKS114, OKS115

_LEDGER = f"{ANALYSIS}/state/team-state-analysis-001.json"
_FIRST = f"{ANALYSIS}/manifests/run-manifest-analysis-001.json"
_GROUPS = f"{ANALYSIS}/state/convergence-groups-analysis-001.json"
_FINAL = f"{ANALYSIS}/state/convergence-analysis-001.json"
_PLAN = f"{ANALYSIS}/state/convergence-round-1-plan-analysis-001.json"


def _unassigned(root: Path) -> str:
    edit_json(root / _LEDGER, lambda d: d["workerDispatches"][0].update(workerId="mystery-analyser"))
    return _LEDGER


def _unassigned_mend(root: Path) -> None:
    edit_json(root / _FIRST, lambda d: d["workerAssignments"].append({"workerId": "mystery-analyser"}))


def _final_group(root: Path) -> str:
    edit_json(root / _FINAL, lambda d: d["groups"][0].update(groupId="G-999"))
    return _FINAL


def _final_group_mend(root: Path) -> None:
    edit_json(root / _GROUPS, lambda d: d["groups"].append({"groupId": "G-999", "title": "added"}))


def _plan_roster(root: Path) -> str:
    edit_json(root / _PLAN, lambda d: d["dispatches"][0].update(analyserId="grok-analyser"))
    return _PLAN


def _plan_roster_mend(root: Path) -> None:
    edit_json(root / _GROUPS, lambda d: d["roster"].append("grok-analyser"))


def _plan_group(root: Path) -> str:
    edit_json(root / _PLAN, lambda d: d["dispatches"][0].update(groupIds=["G-001", "G-404"]))
    return _PLAN


def _plan_group_mend(root: Path) -> None:
    edit_json(root / _PLAN, lambda d: d["dispatches"][0].update(groupIds=["G-001"]))


# ------------------------------------------------------------------ OKS102, OKS103

_CONSUMERS = f"{RUNS}/implementation-planning/consumers.jsonl"
_STAGE2 = f"{RUNS}/implementation/stage-2/manifests/run-manifest-implementation-001.json"
_FV = f"{RUNS}/final-verification/manifests/run-manifest-final-verification-001.json"
_TARGET = f"{TASK}/instruction-set/task-brief.md"


def _edit_line(root: Path, rel_path: str, index: int, change: Callable[[dict[str, object]], None]) -> None:
    path = root / rel_path
    lines = path.read_text(encoding="utf-8").splitlines()
    value = json.loads(lines[index])
    change(value)
    lines[index] = json.dumps(value, separators=(",", ":"))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _consumer_dir(root: Path) -> str:
    _edit_line(root, _CONSUMERS, 1, lambda d: d.update(consumerRunDir=f"{RUNS}/implementation/stage-3"))
    return _CONSUMERS


def _consumer_dir_mend(root: Path) -> None:
    _edit_line(root, _CONSUMERS, 1, lambda d: d.update(consumerRunDir=f"{RUNS}/implementation/stage-2"))


def _consumer_stage(root: Path) -> str:
    edit_json(root / _STAGE2, lambda d: d.update(stage=3))
    return _CONSUMERS


def _consumer_stage_mend(root: Path) -> None:
    edit_json(root / _STAGE2, lambda d: d.update(stage=2))


def _target_digest(root: Path) -> str:
    edit_json(root / _FV, lambda d: d.update(verificationTargetPath=_TARGET, verificationTargetSha256="0" * 64))
    return _FV


def _target_digest_mend(root: Path) -> None:
    digest = hashlib.sha256((root / _TARGET).read_bytes()).hexdigest()
    edit_json(root / _FV, lambda d: d.update(verificationTargetSha256=digest))


# ------------------------------------------------------------------ OKS054 (the assignment digest)

_META = f"{ANALYSIS}/prompts/claude-analyser-worker-prompt-analysis-001.md.meta.json"


def _canonical_digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _assignment_row(root: Path) -> dict[str, object]:
    rows = json.loads((root / _FIRST).read_text(encoding="utf-8"))["invocationAssignments"]
    row: dict[str, object] = next(r for r in rows if r["assignmentRef"] == "assign-02-claude-analyser")
    return row


def _assignment_digest(root: Path) -> str:
    def change(d: dict[str, list[dict[str, object]]]) -> None:
        next(r for r in d["invocationAssignments"] if r["assignmentRef"] == "assign-02-claude-analyser").update(
            audience="analysis", note="edited after publication"
        )

    edit_json(root / _FIRST, change)
    return _META


def _assignment_digest_mend(root: Path) -> None:
    digest = _canonical_digest(_assignment_row(root))
    edit_json(root / _META, lambda d: d["digests"].update(assignment=digest))


CASES: dict[str, Case] = {
    "OKS041": Case(
        _timeline_segment,
        _timeline_segment_mend,
        ("timeline entry 1 records runDateTimeSegment 2026-11-18T09:00:00Z, but ", "run-manifest-analysis-001.json"),
    ),
    "OKS042": Case(
        _orphan_segment,
        _orphan_segment_mend,
        ("records runDateTimeSegment 2026-11-20T14:00:00Z", "no run manifest of", "runs/analysis/"),
    ),
    "OKS048": Case(
        _report_of_no_run,
        _report_of_no_run_mend,
        ("runDateTimeSegment 2026-11-20T14:00:00Z", "runs/analysis/ records 2 run(s)", "2026-11-05T17:05:17Z"),
    ),
    "OKS043": Case(_not_in_timeline, _not_in_timeline_mend, ("final-analysis-002.status", "history/timeline.json")),
    "OKS044": Case(_split_seq, _split_seq_mend, ("under 2 seqs (001: ", "003: active-run-context-analysis-003.json")),
    "OKS045": Case(_seq_order, _seq_order_mend, ("seq 002 records runDateTimeSegment 2026-11-01", "analysis-001.json")),
    "OKS046/status": Case(
        _latest_status,
        _latest_status_mend,
        ("latestRunStatus is 'failed'", "final-final-verification-001.status holds 'completed'"),
    ),
    "OKS046/path": Case(
        _latest_path, _latest_path_mend, ("latestRunPath ", "runs/analysis", "run-manifest-final-verification-001.json")
    ),
    "OKS046/current": Case(
        _current_status,
        _current_status_mend,
        ("currentStatus is 'in-progress'", "final-final-verification-001.status holds 'completed'"),
    ),
    "OKS046/checkpoint": Case(
        _checkpoint,
        _checkpoint_mend,
        ("lastSafeCheckpoint is ", "run-manifest-analysis-001.json", "run-manifest-final-verification-001.json"),
    ),
    "OKS143": Case(
        _unregistered_child,
        _unregistered_child_mend,
        ("children[1] belongs to project 'payroll'", "projects.json", "registers: billing, demo-shop"),
    ),
    "OKS144": Case(
        _registered_id,
        _registered_id_mend,
        ("projects[0] registers projectId 'demo-shop', but ", ".okstra/project.json records projectId 'demo-store'"),
    ),
    "OKS065": Case(
        _unassigned,
        _unassigned_mend,
        ("workerDispatches[0] dispatches worker 'mystery-analyser'", "run-manifest-analysis-001.json does not assign"),
    ),
    "OKS114": Case(
        _final_group, _final_group_mend, ("groups[0] holds group 'G-999'", "convergence-groups-analysis-001.json")
    ),
    "OKS115/analyser": Case(
        _plan_roster,
        _plan_roster_mend,
        ("analyser 'grok-analyser', outside the roster of convergence-groups-analysis-001.json", "claude-analyser"),
    ),
    "OKS115/group": Case(
        _plan_group, _plan_group_mend, ("plans group(s) G-404", "never wrote in convergence-groups-analysis-001.json")
    ),
    "OKS102/dir": Case(
        _consumer_dir,
        _consumer_dir_mend,
        ("stage 2 is linked to consumerRunDir", "implementation/stage-3", "implementation/stage-2'"),
    ),
    "OKS102/stage": Case(
        _consumer_stage,
        _consumer_stage_mend,
        ("stage 2 is linked to ", "run-manifest-implementation-001.json", "stage 3"),
    ),
    "OKS103": Case(
        _target_digest, _target_digest_mend, ("verificationTargetSha256 is 0000", "bytes of ", "task-brief.md hash to ")
    ),
    "OKS054/assignment": Case(
        _assignment_digest,
        _assignment_digest_mend,
        ("digests.assignment is ", "assignment 'assign-02-claude-analyser' of run-manifest-analysis-001.json"),
    ),
    "OKS047": Case(_unknown_cycle, _unknown_cycle_mend, ("fixCycleId 'fc-9'", "fix-cycles.jsonl opens fc-1, fc-2")),
    "OKS047/timeline": Case(
        _unknown_cycle_in_timeline,
        _unknown_cycle_in_timeline_mend,
        ("timeline entry 1 fixCycleId 'fc-9'", "fix-cycles.jsonl opens fc-1, fc-2"),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_breaks_then_mended_is_silent(name: str, fresh_demo: Path) -> None:
    rule = name.split("/")[0]
    case = CASES[name]
    assert not findings_of(check(fresh_demo), rule), "the demo itself must not show the rule"
    path = case.plant(fresh_demo)
    found = [f for f in findings_of(check(fresh_demo), rule) if f.path == path]
    assert found, (path, findings_of(check(fresh_demo), rule))
    assert any(all(part in f.message for part in case.says) for f in found), [f.message for f in found]
    assert all(f.severity == RULES_BY_ID[rule].severity for f in found)
    case.mend(fresh_demo)
    assert findings_of(check(fresh_demo), rule) == []


def test_every_cross_file_rule_has_a_case() -> None:
    rules = {
        "OKS041",
        "OKS042",
        "OKS043",
        "OKS044",
        "OKS045",
        "OKS046",
        "OKS047",
        "OKS048",
        "OKS054",
        "OKS065",
        "OKS102",
        "OKS103",
        "OKS114",
        "OKS115",
        "OKS143",
        "OKS144",
    }
    assert {name.split("/")[0] for name in CASES} == rules


def test_a_stamp_or_time_that_is_no_real_time_is_reported(fresh_demo: Path) -> None:
    """31 November in a file-name stamp makes no name (OKS011); in a time field, no schema match (OKS020)."""
    inputs = sorted(fresh_demo.glob(".okstra/tasks/*/*/runs/implementation-planning/design-prep-inputs/*.md"))
    assert inputs
    src = inputs[0]
    head, _, _ = src.name.rpartition("-")
    bad = src.with_name(f"{head}-20261131T101500000000Z.md")
    src.rename(bad)
    edit_json(fresh_demo / TIMELINE, lambda d: d["entries"][0].update(runTimestamp="2026-11-31T10:15:00Z"))
    report = check(fresh_demo)
    assert any(f.path == rel(fresh_demo, bad) for f in findings_of(report, "OKS011"))
    messages = [f.message for f in findings_of(report, "OKS020") if f.path == TIMELINE]
    assert any("'2026-11-31T10:15:00Z' is not a real time" in m for m in messages), messages


def test_revisions_are_told_apart_by_report_seq(fresh_demo: Path) -> None:
    """r1 under report seq 001 and r1 under 002 are two revisions: the later seq's is authoritative, no duplicate.

    The resolver, the checker (through it) and the wizard (through next_revision) read it the same way.
    """
    from okstra_core.store import Project
    from okstra_core.workflows.design_prep import next_revision, resolve

    inputs = fresh_demo / RUNS / "implementation-planning/design-prep-inputs"
    second = next(inputs.glob("design-prep-input-002-PREP-001-r2-*.md"))
    text = (
        second.read_text(encoding="utf-8")
        .replace("revision: 2\n", "revision: 1\n")
        .replace("PREP-001 r2", "PREP-001 r1")
    )
    renamed = second.with_name(second.name.replace("-r2-", "-r1-"))
    renamed.write_text(text, encoding="utf-8")
    second.unlink()
    task = Project(fresh_demo).find_task("demo-shop:payments:retry-policy")
    assert task is not None
    item = next(i for i in resolve(task).items if i.prep_id == "PREP-001")
    verdicts = {v.path.name: v.verdict for v in item.inputs}
    assert verdicts[renamed.name] == "authoritative", verdicts
    first = next(inputs.glob("design-prep-input-001-PREP-001-r1-*.md"))
    assert verdicts[first.name] == "superseded", verdicts
    assert next_revision(task, "PREP-001") == 2
    duplicates = [
        f
        for f in findings_of(check(fresh_demo), "OKS082")
        if f.message.startswith("PREP-001") and f.path.startswith(TASK)
    ]
    assert duplicates == []


def test_a_result_linked_to_a_dispatch_that_does_not_exist(fresh_demo: Path) -> None:
    """A worker result linked to a dispatch the ledger never recorded (OKS062); silent once the dispatch is recorded."""
    ledger = fresh_demo / _LEDGER
    edit_json(ledger, lambda d: d["agentResultLinks"][0].update(dispatchId="d-never-sent"))
    found = [f.message for f in findings_of(check(fresh_demo), "OKS062") if f.path == _LEDGER]
    assert any("names dispatch 'd-never-sent', which the ledger does not record" in m for m in found), found

    def record(d: dict[str, list[dict[str, object]]]) -> None:
        row = {k: v for k, v in d["workerDispatches"][0].items() if k != "dispatchId"}
        d["agentDispatches"].append({**row, "dispatchId": "d-never-sent"})

    edit_json(ledger, record)
    assert [f for f in findings_of(check(fresh_demo), "OKS062") if "d-never-sent" in f.message] == []


_REFUND = ".okstra/tasks/payments/refund-ledger"


def _run_of_an_unnamed_type(root: Path, segment: str) -> str:
    """A later run of a task type the contract does not name, beside the task's analysis run: its manifest and
    status copied from the analysis run's, under the type ``security-review``."""
    analysis = root / _REFUND / "runs/analysis"
    other = root / _REFUND / "runs/security-review"
    for category, name in (("manifests", "run-manifest-{}-001.json"), ("status", "final-{}-001.status")):
        text = (analysis / category / name.format("analysis")).read_text(encoding="utf-8")
        seg = _segment(root, f"{_REFUND}/runs/analysis/manifests/run-manifest-analysis-001.json")
        text = text.replace("runs/analysis", "runs/security-review").replace("-analysis-", "-security-review-")
        text = text.replace('"analysis"', '"security-review"').replace(seg, segment)
        (other / category).mkdir(parents=True, exist_ok=True)
        (other / category / name.format("security-review")).write_text(text, encoding="utf-8")
    return f"{_REFUND}/runs/security-review"


def test_a_later_run_of_an_unnamed_task_type_is_never_the_tasks_latest_run(fresh_demo: Path) -> None:
    """Reported as an unknown type (info), never as an error about the task's own workflow pointers."""
    other = _run_of_an_unnamed_type(fresh_demo, "2026-11-30T10:00:00Z")
    report = check(fresh_demo)
    assert findings_of(report, "OKS046") == []
    assert [f.path for f in findings_of(report, "OKS019")] == [other]
    # Pointers that follow the run of the unnamed type are not held to the named ones either.
    manifest = f"{other}/manifests/run-manifest-security-review-001.json"
    edit_json(
        fresh_demo / _REFUND / "task-manifest.json",
        lambda d: (d.update(latestRunPath=other), d["workflow"].update(lastSafeCheckpoint=manifest)),
    )
    assert findings_of(check(fresh_demo), "OKS046") == []
    # Pointers that name neither are still held to the latest run of a named type.
    first = f"{_REFUND}/runs/analysis/manifests/run-manifest-analysis-001.json"
    edit_json(
        fresh_demo / _REFUND / "task-manifest.json",
        lambda d: (d.update(latestRunPath=f"{_REFUND}/runs/x"), d["workflow"].update(lastSafeCheckpoint=first)),
    )
    assert [f.path for f in findings_of(check(fresh_demo), "OKS046")] == [f"{_REFUND}/task-manifest.json"]


def test_the_target_digest_is_held_on_the_latest_final_verification_run_only(fresh_demo: Path) -> None:
    """Of two final-verification runs, the earlier one's digest is history: only the latest's is held (OKS103)."""
    digest = hashlib.sha256((fresh_demo / _TARGET).read_bytes()).hexdigest()
    later = _FV.replace("-001.json", "-002.json")
    value = json.loads((fresh_demo / _FV).read_text(encoding="utf-8"))
    value.update(
        verificationTargetPath=_TARGET, verificationTargetSha256=digest, runDateTimeSegment="2026-11-30T10:00:00Z"
    )
    (fresh_demo / later).write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    edit_json(fresh_demo / _FV, lambda d: d.update(verificationTargetPath=_TARGET, verificationTargetSha256="0" * 64))
    assert findings_of(check(fresh_demo), "OKS103") == []
    edit_json(fresh_demo / later, lambda d: d.update(verificationTargetSha256="1" * 64))
    assert [f.path for f in findings_of(check(fresh_demo), "OKS103")] == [later]
