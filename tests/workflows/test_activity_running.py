"""Activity and now-running: derived from the store, with the caller's clock."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from okstra_core import layout
from okstra_core.store import Project
from okstra_core.workflows.activity import activity
from okstra_core.workflows.running import running_runs

CI = "demo-shop:platform:ci-speedup"
STAGE = ".okstra/tasks/platform/ci-speedup/runs/implementation/stage-1"


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


def test_the_demos_running_stage_and_its_workers(fresh_demo: Path) -> None:
    (run,) = running_runs(Project(fresh_demo))
    assert (run.task, run.task_type, run.stage, run.status) == (CI, "implementation", 1, "prepared")
    assert run.run_dir == fresh_demo / STAGE
    assert run.started == _utc("2026-11-02T15:50:17")
    assert run.last_write == _utc("2026-11-02T17:15:57")  # the demo dates the stage's files by its clock
    assert [(w.worker_id, w.last_event) for w in run.workers] == [
        ("claude-verifier", "transcript written"),
        ("codex-executor", "transcript written"),
        ("probe", "dispatched (not-run)"),
    ]


def test_stalled_follows_the_clock_and_the_threshold(fresh_demo: Path) -> None:
    (run,) = running_runs(Project(fresh_demo))
    last = run.last_write
    assert last is not None
    assert not run.stalled(last + dt.timedelta(minutes=14, seconds=59))
    assert run.stalled(last + dt.timedelta(minutes=15))
    assert not run.stalled(last + dt.timedelta(minutes=20), after=dt.timedelta(minutes=30))
    assert run.running_for(_utc("2026-11-02T16:50:17")) == dt.timedelta(hours=1)
    # A transcript that grows moves the run: no longer stalled at the same clock.
    log = next((fresh_demo / STAGE / "prompts").glob("codex-executor-worker-prompt-*.log"))
    later = last + dt.timedelta(minutes=20)
    os.utime(log, (later.timestamp(), later.timestamp()))
    (moved,) = running_runs(Project(fresh_demo))
    assert moved.last_write == later and not moved.stalled(later + dt.timedelta(minutes=1))
    assert next(w for w in moved.workers if w.worker_id == "codex-executor").last_at == later


def test_a_run_that_ends_leaves_now_running(fresh_demo: Path) -> None:
    path = fresh_demo / ".okstra/tasks/platform/ci-speedup/task-manifest.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    value["latestRunStatus"] = "completed"
    path.write_text(json.dumps(value), encoding="utf-8")
    assert running_runs(Project(fresh_demo)) == []


def test_activity_is_newest_first_and_names_each_kind(fresh_demo: Path) -> None:
    events = activity(Project(fresh_demo))
    assert events == sorted(events, key=lambda e: e.at, reverse=True)
    kinds = {e.kind for e in events}
    assert {"run-started", "run-completed", "run-failed", "decision-waiting", "decision-made"} <= kinds
    assert "design-confirmed" in kinds
    failed = [e for e in events if e.kind == "run-failed"]
    assert [(e.task, e.text) for e in failed] == [("demo-shop:platform:observability", "analysis (error)")] * 2
    confirmed = [e for e in events if e.kind == "design-confirmed" and e.task.endswith(":retry-policy")]
    assert confirmed and all(e.path is not None and e.path.is_file() for e in confirmed)


def test_activity_window_and_a_fix_cycle(fresh_demo: Path) -> None:
    root = fresh_demo / ".okstra/tasks/payments/retry-policy"
    record = {
        "event": "opened",
        "cycleId": "fc-9",
        "cycle": 9,
        "symptom": "flaky \x1b[31mretry",
        "at": "2026-11-29T08:00:00Z",
    }
    with open(layout.fix_cycles_path(root), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    recent = activity(Project(fresh_demo), since=_utc("2026-11-20T00:00:00"))
    assert [(e.kind, e.text) for e in recent] == [("fix-cycle-opened", "cycle 9 opened: flaky \u241b[31mretry")]
    assert recent[0].path == layout.fix_cycles_path(root)


def test_unreadable_files_give_no_event_and_no_error(fresh_demo: Path) -> None:
    timeline = fresh_demo / ".okstra/tasks/checkout/tax-export/history/timeline.json"
    timeline.write_text("{not json", encoding="utf-8")
    events = activity(Project(fresh_demo))
    assert not any(e.task.endswith(":tax-export") and e.kind.startswith("run-") for e in events)
    assert any(e.task.endswith(":tax-export") and e.kind == "decision-waiting" for e in events)


def test_closed_runs_of_a_task_in_progress_are_not_running(fresh_demo: Path) -> None:
    # retry-policy's stages were closed through their status files; its run manifests still say "prepared"
    path = fresh_demo / ".okstra/tasks/payments/retry-policy/task-manifest.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    value["latestRunStatus"] = "in-progress"
    path.write_text(json.dumps(value), encoding="utf-8")
    assert [r.task for r in running_runs(Project(fresh_demo))] == [CI]
