"""OKS048: every seq'd artifact of a run dir belongs to a run the task records (a run manifest, flat or not, or a
timeline entry naming the run dir), whether its execution is told by a segment or only by the folder's seqs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .helpers import TASK, check, edit_json, findings_of

ANALYSIS = f"{TASK}/runs/analysis"
OPTION = f"{TASK}/runs/option-selection"
TIMELINE = f"{TASK}/history/timeline.json"


def _entries_of(root: Path, run_dir: str) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = json.loads((root / TIMELINE).read_text(encoding="utf-8"))["entries"]
    return [e for e in entries if e.get("runDir") == run_dir]


def test_a_status_file_past_the_recorded_runs_is_reported_until_the_timeline_records_its_run(
    fresh_demo: Path,
) -> None:
    """A status file records no segment: its folder's third seq needs a third recorded run."""
    status = f"{ANALYSIS}/status/final-analysis-003.status"
    (fresh_demo / status).write_text("completed\n", encoding="utf-8")
    found = [f for f in findings_of(check(fresh_demo), "OKS048") if f.path == status]
    assert [f.severity for f in found] == ["warning"], found
    assert "is of status/ seq 003, the 3rd seq there, and records no segment" in found[0].message, found[0].message
    assert "records 2 run(s) (2 run manifest(s), 0 timeline.json entr(ies) besides)" in found[0].message
    entry = {"runDir": ANALYSIS, "taskType": "analysis", "status": "completed"}  # a legacy entry: no segment
    edit_json(fresh_demo / TIMELINE, lambda d: d["entries"].insert(2, entry))
    assert findings_of(check(fresh_demo), "OKS048") == []


def test_a_legacy_run_known_only_to_the_timeline_passes_and_an_unrecorded_one_does_not(fresh_demo: Path) -> None:
    """Without its run manifest, a run its timeline entry records (by run dir and segment) keeps its files; with
    the entry gone too, every seq of every folder of the run dir belongs to no recorded run."""
    shutil.rmtree(fresh_demo / OPTION / "manifests")
    (entry,) = _entries_of(fresh_demo, OPTION)
    edit_json(
        fresh_demo / TIMELINE,
        lambda d: next(e for e in d["entries"] if e.get("runDir") == OPTION).pop("runManifestPath"),
    )
    assert entry["runDateTimeSegment"]
    report = check(fresh_demo)
    assert findings_of(report, "OKS048") == []
    assert findings_of(report, "OKS042") == [], "no run manifest at all: nothing to hold the state files to"

    edit_json(fresh_demo / TIMELINE, lambda d: d.update(entries=[e for e in d["entries"] if e.get("runDir") != OPTION]))
    found = findings_of(check(fresh_demo), "OKS048")
    folders = {f.path.split("/")[-2] for f in found}
    assert {"reports", "state", "status", "prompts"} <= folders, found
    assert all(f.path.startswith(OPTION + "/") for f in found), found
    assert all("no run of " in f.message and "is recorded" in f.message for f in found), found
    assert len(folders) == len(found), "one finding per seq of a folder (each folder holds one seq here)"


def test_an_artifact_held_to_its_run_manifest_is_reported_once(fresh_demo: Path) -> None:
    """A state file stamped with a run no manifest records is OKS042's; OKS048 does not say it again, but still
    says it of report data stamped the same way, which no rule ties to a manifest."""
    stray = "2026-11-20T14:00:00Z"
    context = f"{ANALYSIS}/state/active-run-context-analysis-003.json"
    shutil.copy(fresh_demo / ANALYSIS / "state/active-run-context-analysis-002.json", fresh_demo / context)
    edit_json(fresh_demo / context, lambda d: d["identity"].update(runDateTimeSegment=stray))
    report = check(fresh_demo)
    assert [f.path for f in findings_of(report, "OKS042")] == [context]
    assert findings_of(report, "OKS048") == []
    data = f"{ANALYSIS}/reports/final-report-analysis-003.data.json"
    shutil.copy(fresh_demo / ANALYSIS / "reports/final-report-analysis-002.data.json", fresh_demo / data)
    edit_json(fresh_demo / data, lambda d: d.update(runDateTimeSegment=stray))
    assert [f.path for f in findings_of(check(fresh_demo), "OKS048")] == [data]
