"""``okstra_core.stats`` and ``okstra stats``: every number against a value worked out by hand.

The store is built here, file by file, so each time and count below is visible:

* alpha (p:g:alpha): analysis 10:00-10:10 on 11-01 (600 s), analysis 09:00-09:20 on 11-02 (1200 s), then
  option-selection 12:00 on 11-02 ended by the manifest's updatedAt 12:30 (1800 s); next phase blocked;
  two fix cycles; a convergence that agreed after 3 rounds; a lead prompt (100 B, transcript 1000 B) and a
  claude-analyser prompt (50 B, transcript 500 B).
* beta (p:g:beta): analysis 08:00-08:30 on 11-02 (1800 s), then analysis on 11-03 at 08:00 that errored and
  whose only end time (updatedAt 07:00) comes before its start: clock skew; a convergence stopped at max-rounds.
* gamma (p:g:gamma): an analysis whose start and report time are malformed, then an option-selection
  prepared on 11-03 at 10:00 and still in progress.
* delta (p:h:delta): no run yet, awaiting approval.

Analysis durations 600, 1200, 1800: median 1200, quartiles (inclusive) 900 and 1500.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from okstra_core import cli, layout, times
from okstra_core.search.query import parse
from okstra_core.stats import Filters, compute, parse_time, spread
from okstra_core.store import Project
from okstra_core.text import visible


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))


def _task(
    root: Path,
    group: str,
    task_id: str,
    runs: list[dict[str, Any]],
    *,
    workflow: dict[str, Any],
    updated: str = "2026-11-01T00:00:00Z",
) -> Path:
    troot = layout.task_root(root, group, task_id)
    key = f"p:{group}:{task_id}"
    _write(
        layout.task_manifest_path(troot),
        {"taskKey": key, "taskType": "analysis", "workflow": workflow, "updatedAt": updated},
    )
    entries = []
    for run in runs:
        entry = {k: v for k, v in run.items() if k != "generatedAt"}
        task_type = run["taskType"]
        reports = layout.rel(layout.run_dir(troot, task_type), root) + "/reports"
        report = f"{reports}/final-report-{task_type}-00{len(entries) + 1}.data.json"
        entry["reportPath"] = report
        if "generatedAt" in run:
            _write(root / report, {"schemaVersion": "3.0", "generatedAt": run["generatedAt"]})
        entries.append(entry)
    _write(layout.timeline_path(troot), {"schemaVersion": "1.0", "taskKey": key, "entries": entries})
    return troot


def _convergence(troot: Path, state: str, rounds: int) -> None:
    _write(
        layout.run_dir(troot, "analysis") / "state" / "convergence-analysis-001.json",
        {
            "schemaVersion": "1.2",
            "runDateTimeSegment": "2026-11-02T08:00:00Z",
            "terminalState": state,
            "rounds": rounds,
        },
    )


def _fixture(root: Path) -> Path:
    alpha = _task(
        root,
        "g",
        "alpha",
        [
            {
                "runDateTimeSegment": "2026-11-01T10:00:00Z",
                "taskType": "analysis",
                "status": "completed",
                "generatedAt": "2026-11-01T10:10:00Z",
            },
            {
                "runDateTimeSegment": "2026-11-02T09:00:00Z",
                "taskType": "analysis",
                "status": "completed",
                "generatedAt": "2026-11-02T09:20:00+00:00",
                "fixCycleId": "fc-1",
            },
            {"runDateTimeSegment": "2026-11-02T12:00:00Z", "taskType": "option-selection", "status": "completed"},
        ],
        workflow={"nextRecommendedPhase": {"status": "blocked", "rationale": "needs a decision elsewhere"}},
        updated="2026-11-02T12:30:00Z",
    )
    events = [
        {"event": "opened", "cycleId": "fc-1", "cycle": 1, "symptom": "flaky", "at": "2026-11-02T08:50:00Z"},
        {"event": "closed", "cycleId": "fc-1", "cycle": 1, "at": "2026-11-02T09:30:00Z"},
        {"event": "opened", "cycleId": "fc-2", "cycle": 2, "symptom": "again", "at": "2026-11-02T11:00:00Z"},
    ]
    _write(layout.fix_cycles_path(alpha), "".join(json.dumps(e) + "\n" for e in events))
    _convergence(alpha, "converged", 3)
    prompts = layout.run_dir(alpha, "analysis") / "prompts"
    _write(prompts / "lead-execution-prompt-analysis-001.md", "x" * 100)
    _write(prompts / "lead-execution-prompt-analysis-001.log", "y" * 1000)
    _write(prompts / "claude-analyser-worker-prompt-analysis-001.md", "x" * 50)
    _write(prompts / "claude-analyser-worker-prompt-analysis-001.log", "y" * 500)
    beta = _task(
        root,
        "g",
        "beta",
        [
            {
                "runDateTimeSegment": "2026-11-02T08:00:00Z",
                "taskType": "analysis",
                "status": "completed",
                "generatedAt": "2026-11-02T08:30:00Z",
            },
            {"runDateTimeSegment": "2026-11-03T08:00:00Z", "taskType": "analysis", "status": "error"},
        ],
        workflow={"nextRecommendedPhase": {"status": "pending"}},
        updated="2026-11-03T07:00:00Z",
    )
    _convergence(beta, "max-rounds", 5)
    _task(
        root,
        "g",
        "gamma",
        [
            {"runDateTimeSegment": "not-a-time", "taskType": "analysis", "status": "completed", "generatedAt": "soon"},
            {"runDateTimeSegment": "2026-11-03T10:00:00Z", "taskType": "option-selection", "status": "prepared"},
        ],
        workflow={"nextRecommendedPhase": {"status": "pending"}},
    )
    _task(root, "h", "delta", [], workflow={"awaitingApproval": True})
    catalog = [
        {"taskKey": f"p:{g}:{t}", "taskGroup": g, "taskId": t}
        for g, t in (("g", "alpha"), ("g", "beta"), ("g", "gamma"), ("h", "delta"))
    ]
    _write(layout.task_catalog_path(root), {"schemaVersion": "1.0", "tasks": catalog})
    return root


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return _fixture(tmp_path / "project")


def _stats(root: Path, filters: Filters | None = None) -> Any:
    return compute(Project(root), filters)


def test_runs_per_day_by_outcome(store: Path) -> None:
    stats = _stats(store)
    assert len(stats.runs) == 7 and len(stats.tasks) == 4
    assert stats.runs_per_day == {
        "2026-11-01": {"completed": 1},
        "2026-11-02": {"completed": 3},
        "2026-11-03": {"error": 1, "in-progress": 1},
    }
    assert [t.key for t in stats.behind("day:2026-11-03")] == ["p:g:beta", "p:g:gamma"]


def test_time_per_phase_median_and_spread(store: Path) -> None:
    phases = {s.task_type: s for s in _stats(store).phases}
    assert list(phases) == ["analysis", "option-selection"]
    analysis = phases["analysis"]
    assert (analysis.runs, analysis.median, analysis.p25, analysis.p75) == (3, 1200, 900, 1500)
    assert (analysis.least, analysis.most) == (600, 1800)
    # Ended by the task manifest's updatedAt: it is alpha's latest run and closed.
    assert phases["option-selection"].runs == 1 and phases["option-selection"].median == 1800


def test_funnel_by_phase_reached_and_where_tasks_stop(store: Path) -> None:
    rows = {row.phase: row for row in _stats(store).funnel}
    assert [(p, r.reached, r.stopped_here) for p, r in rows.items()] == [
        ("not-started", 4, 1),
        ("analysis", 3, 1),
        ("option-selection", 2, 2),
        ("implementation-planning", 0, 0),
        ("implementation", 0, 0),
        ("final-verification", 0, 0),
    ]
    assert rows["not-started"].stops == {"awaiting-approval": 1}
    assert rows["analysis"].stops == {"error": 1}
    assert rows["option-selection"].stops == {"blocked": 1, "in-progress": 1}


def test_fix_cycles_and_convergence_rounds(store: Path) -> None:
    stats = _stats(store)
    assert stats.fix_cycles == {0: 3, 2: 1}
    assert [t.key for t in stats.behind("fix:2")] == ["p:g:alpha"]
    assert stats.rounds == {3: 1} and stats.not_converged == {"max-rounds": 1}


def test_sizes_by_worker_from_the_log_report(store: Path) -> None:
    workers = {w.worker: w.to_json() for w in _stats(store).workers}
    assert workers == {
        "lead": {"worker": "lead", "prompts": 1, "promptBytes": 100, "transcripts": 1, "transcriptBytes": 1000},
        "claude-analyser": {
            "worker": "claude-analyser",
            "prompts": 1,
            "promptBytes": 50,
            "transcripts": 1,
            "transcriptBytes": 500,
        },
    }


def test_bad_times_skew_and_in_progress_runs_give_notes_not_crashes(store: Path) -> None:
    stats = _stats(store)
    assert stats.notes == [
        "runs with a malformed start time (left out of the days and durations): 1",
        "runs with a malformed end time (report generatedAt or manifest updatedAt; no duration): 1",
        "runs that end before they start (clock skew; left out of the durations): 1",
        "runs still in progress (no duration yet): 1",
    ]
    skewed = [r for r in stats.runs if r.task.key == "p:g:beta" and r.outcome == "error"]
    assert len(skewed) == 1 and skewed[0].seconds is None


def test_missing_times_and_unreadable_files(store: Path) -> None:
    timeline = layout.timeline_path(layout.task_root(store, "g", "beta"))
    timeline.write_text("{not json")
    gamma = layout.timeline_path(layout.task_root(store, "g", "gamma"))
    doc = json.loads(gamma.read_text())
    for entry in doc["entries"]:
        entry.pop("runDateTimeSegment")
    gamma.write_text(json.dumps(doc))
    stats = _stats(store)
    assert stats.unreadable == [layout.rel(timeline, store)]
    assert "runs without a start time (left out of the days and durations): 2" in stats.notes
    assert stats.notes[-1] == "files that could not be read (okstra check says why): 1"
    assert sum(sum(c.values()) for c in stats.runs_per_day.values()) == 3  # alpha's three runs


@pytest.mark.parametrize(
    ("filters", "tasks", "runs"),
    [
        (Filters(since=dt.datetime(2026, 11, 2, tzinfo=dt.UTC)), ["p:g:alpha", "p:g:beta", "p:g:gamma"], 5),
        (Filters(task_type="option-selection"), ["p:g:alpha", "p:g:gamma"], 2),
        (Filters(task="*:beta"), ["p:g:beta"], 2),
        (Filters(task="h/*"), ["p:h:delta"], 0),
    ],
)
def test_filters_narrow_tasks_and_runs(store: Path, filters: Filters, tasks: list[str], runs: int) -> None:
    stats = _stats(store, filters)
    assert [t.key for t in stats.tasks] == tasks and len(stats.runs) == runs


def test_since_narrows_durations(store: Path) -> None:
    phases = {s.task_type: s for s in _stats(store, Filters(since=dt.datetime(2026, 11, 2, tzinfo=dt.UTC))).phases}
    assert phases["analysis"].runs == 2 and phases["analysis"].median == 1500


def test_spread_of_one_and_of_an_even_count() -> None:
    one = spread("analysis", [42.0])
    assert (one.median, one.p25, one.p75) == (42.0, 42.0, 42.0)
    four = spread("analysis", [10.0, 20.0, 30.0, 40.0])
    assert (four.median, four.p25, four.p75) == (25.0, 17.5, 32.5)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-02T09:00:00Z", dt.datetime(2026, 11, 2, 9, tzinfo=dt.UTC)),
        ("2026-11-02T11:00:00+02:00", dt.datetime(2026, 11, 2, 9, tzinfo=dt.UTC)),
        ("2026-11-02T09:00:00", dt.datetime(2026, 11, 2, 9, tzinfo=dt.UTC)),
        ("0001-01-01T00:00:00+01:00", None),
        ("tomorrow", None),
        ("", None),
        (None, None),
        (17, None),
    ],
)
def test_parse_time(text: object, expected: dt.datetime | None) -> None:
    assert parse_time(text) == expected


JSON_KEYS = [
    "version",
    "project",
    "filters",
    "tasks",
    "runs",
    "runsPerDay",
    "phaseDurations",
    "funnel",
    "fixCycles",
    "convergenceRounds",
    "notConverged",
    "workers",
    "notes",
    "unreadable",
    "unreadablePaths",
]


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_is_versioned_and_schema_stable(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "stats", store, "--json", "--since", "2026-11-01")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert list(doc) == JSON_KEYS and doc["version"] == 1
    assert doc["filters"] == {"since": "2026-11-01", "task": None, "type": None}
    assert doc["runsPerDay"][0] == {"day": "2026-11-01", "completed": 1, "error": 0, "inProgress": 0, "other": 0}
    assert doc["phaseDurations"][0] == {
        "taskType": "analysis",
        "runs": 3,
        "medianSeconds": 1200,
        "p25Seconds": 900,
        "p75Seconds": 1500,
        "minSeconds": 600,
        "maxSeconds": 1800,
    }
    assert list(doc["funnel"][0]) == ["phase", "reached", "stoppedHere", "stops"]
    assert doc["fixCycles"] == [{"cycles": 0, "tasks": 2}, {"cycles": 2, "tasks": 1}]  # delta has no run since
    assert doc["convergenceRounds"] == [{"rounds": 3, "runs": 1}]
    assert doc["notConverged"] == {"max-rounds": 1}


def test_text_tables(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "stats", store, "--type", "analysis")
    assert code == 0
    assert out.startswith("3 tasks, 5 runs (type analysis)\n")
    assert "  analysis     3    20.0  15.0  25.0  10.0  30.0" in out
    assert "note: runs that end before they start (clock skew; left out of the durations): 1" in out


def test_bad_since_is_a_usage_error(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        _run(capsys, "stats", store, "--since", "last week")
    assert exc.value.code == 2
    assert "--since: 'last week' is not a date (2026-11-30), a UTC time" in capsys.readouterr().err


@pytest.mark.parametrize(("since", "runs"), [("99999w", 6), ("2026-11-02", 5), ("2026-11-02T00:00:00Z", 5)])
def test_since_takes_every_form_of_the_time_filter_grammar(
    store: Path, capsys: pytest.CaptureFixture[str], since: str, runs: int
) -> None:
    """``--since`` reads what search's ``since:`` reads (an age too), to the same moment."""
    code, out, err = _run(capsys, "stats", store, "--json", "--since", since)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["runsPerDay"] and sum(sum(v for k, v in d.items() if k != "day") for d in doc["runsPerDay"]) == runs
    now = dt.datetime(2026, 12, 5, tzinfo=dt.UTC)
    moment = times.parse_since(since, now)
    assert moment is not None and parse(f"since:{since}", now=now).since_ns == max(0, int(moment.timestamp()) * 10**9)


def test_since_is_a_moment_not_a_day(store: Path) -> None:
    first = min(run.start for run in _stats(store).runs if run.start is not None)
    assert len(_stats(store, Filters(since=first)).runs) > len(
        _stats(store, Filters(since=first + dt.timedelta(seconds=1))).runs
    )


def test_no_store_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "stats", tmp_path)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "no .okstra/ store" in err


def test_store_strings_are_shown_visible(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    troot = layout.task_root(store, "g", "alpha")
    prompts = layout.run_dir(troot, "analysis") / "prompts"
    (prompts / "evil\x1b[2J-worker-prompt-analysis-001.md").write_text("x")
    code, out, _ = _run(capsys, "stats", store)
    assert code == 0 and "\x1b" not in out


def test_a_worker_named_with_control_characters_is_shown_escaped(store: Path) -> None:
    """Every worker gets its row: a name holding control characters is shown with visible stand-ins."""
    from okstra_core.commands.stats import render_text
    from okstra_core.stats import WorkerSizes

    stats = _stats(store)
    stats.workers.append(WorkerSizes("evil\x1b[2J\x85", prompts=1, prompt_bytes=7, transcripts=2, transcript_bytes=9))
    text = render_text(stats)
    assert "\x1b" not in text and "\x85" not in text
    rows = [line.split() for line in text.splitlines() if line.startswith("  evil")]
    assert rows == [["evil␛[2J" + visible("\x85"), "1", "7", "2", "9"]]


def test_demo_statistics_are_consistent(demo_root: Path) -> None:
    stats = compute(Project(demo_root))
    assert len(stats.tasks) == len(Project(demo_root).task_refs)
    assert sum(sum(c.values()) for c in stats.runs_per_day.values()) == len(stats.runs)
    assert sum(stats.fix_cycles.values()) == len(stats.tasks)
    assert sum(row.stopped_here for row in stats.funnel) == len(stats.tasks)
    assert stats.funnel[0].reached == len(stats.tasks)


def test_every_run_manifest_is_a_run_a_flat_legacy_one_included(demo_root: Path) -> None:
    """The store's runs are its run manifests (in ``manifests/`` or still flat in the run dir), as the checker and
    the workbench count them; the demo keeps one flat legacy run, which no timeline entry records."""
    project = Project(demo_root)
    manifests = sorted(demo_root.glob(".okstra/tasks/*/*/runs/**/run-manifest-*.json"))
    flat = [p for p in manifests if p.parent.name != layout.MANIFESTS_DIR]
    assert len(flat) == 1
    stats = compute(project)
    assert len(stats.runs) == len(manifests)
    latency = next(ref for ref in project.task_refs if ref.task_id == "query-latency")
    flat_segment = json.loads(flat[0].read_text(encoding="utf-8"))["runDateTimeSegment"]
    starts = [run.start for run in stats.runs if run.task.root == latency.root]
    assert parse_time(flat_segment) in starts


def test_recorded_paths_outside_the_project_are_never_followed(store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"entries": [{"runDateTimeSegment": "bad", "taskType": "analysis"}]}))
    timeline = layout.timeline_path(layout.task_root(store, "g", "beta"))
    timeline.unlink()
    timeline.symlink_to(outside)  # a timeline that escapes the project: refused, never read leniently
    alpha = layout.timeline_path(layout.task_root(store, "g", "alpha"))
    value = json.loads(alpha.read_text())
    value["entries"][0]["reportPath"] = "../../../../../etc/hostname"
    alpha.write_text(json.dumps(value))
    stats = _stats(store)
    assert not any(r.task.key == "p:g:beta" for r in stats.runs)
    assert layout.rel(timeline, store) in stats.unreadable


def test_the_stats_look_at_each_store_path_at_most_once(
    demo_root: Path, store_looks: Callable[[Path], Counter[str]]
) -> None:
    """The demo holds a flat legacy prompt at the top of a run dir: looked at once to tell it is no folder, its
    size is taken from that look."""
    looks = store_looks(demo_root / ".okstra")
    assert compute(Project(demo_root)).runs_per_day and looks
    twice = {path: n for path, n in looks.items() if n > 1}
    assert not twice, f"looked at more than once: {twice}"
