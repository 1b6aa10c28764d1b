"""Insights: numbers about how a project's agents work, derived from the store at the time of the call.

:func:`compute` reads each task's manifest, ``history/timeline.json``,
``history/fix-cycles.jsonl``, its reports' ``generatedAt``, its runs'
``state/convergence-<task-type>-<seq>.json`` and its prompt and transcript
sizes (the log report), and gives:

* runs per day (UTC day of the run's start), by outcome;
* time per phase (task type): median, quartiles, least and most;
* the funnel of tasks by the furthest phase reached, and where they stop;
* fix cycles per task, and convergence rounds until agreement (histograms);
* prompt and transcript bytes by worker.

Nothing is cached and nothing is written. The runs are the timeline's
entries and the runs whose manifest still lies flat in its run dir (a legacy
layout the timeline predates), so that every run manifest the store holds is
counted once. A run starts at its timeline
entry's ``runDateTimeSegment`` (else ``runTimestamp``); it ends at its
report's ``generatedAt``, else, for the task's latest run once closed, at the
task manifest's ``updatedAt``. A run with a missing or malformed time, an end
before its start (clock skew) or no end yet (in progress) is counted where it
can be and left out of the durations; a note says how many and why.

Every chart item carries a key (:attr:`Stats.tasks_behind`) naming the tasks
behind it, for a view that lists them.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from . import layout, names, reading, times
from .errors import LoadError
from .models.convergence import ConvergenceFinal
from .models.run import COMPLETED_STATUS, FAILED_STATUSES, IN_PROGRESS_STATUSES
from .models.task import Timeline, TimelineEntry
from .store import Project, Task

if TYPE_CHECKING:
    from .projects import ProjectEntry

STATS_JSON_VERSION: Final = 1

#: Run outcomes, in the order the charts stack them.
OUTCOMES: Final = ("completed", "error", "in-progress", "other")
_OUTCOME_OF: Final = {
    COMPLETED_STATUS: "completed",
    **{status: "error" for status in FAILED_STATUSES},
    **{status: "in-progress" for status in IN_PROGRESS_STATUSES},
}

#: Where a task stops, in the order a task is classified (the first that holds).
STOPS: Final = (
    "in-progress",
    "error",
    "awaiting-approval",
    "waiting-for-you",
    "blocked",
    "done",
    "ready",
    "pending",
)
STOP_LABELS: Final = {
    "in-progress": "in progress",
    "error": "error",
    "awaiting-approval": "awaiting approval",
    "waiting-for-you": "waiting for you",
    "blocked": "blocked",
    "done": "done",
    "ready": "ready for the lead",
    "pending": "pending",
}
#: The funnel's first row: tasks without a run.
NOT_STARTED: Final = "not-started"

#: The JSON lists at most this many unreadable files (sorted); ``unreadable`` counts them all.
UNREADABLE_PATHS_MAX: Final = 50


# ------------------------------------------------------------------ filters


@dataclass(frozen=True, slots=True)
class Filters:
    """What narrows the statistics (the same for the ``okstra stats`` verb and the workbench)."""

    #: Only runs that started at or after this moment (a :func:`okstra_core.times.parse_since` result).
    since: dt.datetime | None = None
    task: str | None = None  # a glob over the task key, ``group/task`` and the task id
    task_type: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "since": times.since_text(self.since) if self.since else None,
            "task": self.task,
            "type": self.task_type,
        }

    def matches_task(self, key: str, group: str, task_id: str) -> bool:
        if self.task is None:
            return True
        return any(fnmatch.fnmatchcase(value, self.task) for value in (key, f"{group}/{task_id}", task_id))


def parse_time(value: object) -> dt.datetime | None:
    """An ISO-8601 time the store recorded, in UTC (a time without offset is read as UTC); None when unreadable."""
    return times.parse_time(value) if isinstance(value, str) and value else None


# ------------------------------------------------------------------ results


@dataclass(frozen=True, slots=True)
class TaskItem:
    """A task behind a chart item: its key and its root."""

    key: str
    root: Path


@dataclass(slots=True)
class RunPoint:
    """One run of a task as the timeline records it, with the times this module could read."""

    task: TaskItem
    task_type: str
    stage: int | None
    status: str | None
    start: dt.datetime | None
    end: dt.datetime | None
    fix_cycle_id: str | None = None

    @property
    def outcome(self) -> str:
        return outcome_of(self.status)

    @property
    def seconds(self) -> float | None:
        """The run's duration; None without both times or when it ends before it starts."""
        if self.start is None or self.end is None or self.end < self.start:
            return None
        return (self.end - self.start).total_seconds()


def outcome_of(status: str | None) -> str:
    """The chart outcome of a run status (a run without a status is in progress)."""
    if status is None:
        return "in-progress"
    return _OUTCOME_OF.get(status, "other")


@dataclass(frozen=True, slots=True)
class Spread:
    """Durations of one phase, in seconds."""

    task_type: str
    runs: int
    median: float
    p25: float
    p75: float
    least: float
    most: float

    def to_json(self) -> dict[str, Any]:
        return {
            "taskType": self.task_type,
            "runs": self.runs,
            "medianSeconds": self.median,
            "p25Seconds": self.p25,
            "p75Seconds": self.p75,
            "minSeconds": self.least,
            "maxSeconds": self.most,
        }


def spread(task_type: str, values: list[float]) -> Spread:
    """Median, quartiles (the inclusive method: the halves' medians' interpolation), least and most of *values*."""
    ordered = sorted(values)
    if len(ordered) == 1:
        q1 = q3 = ordered[0]
    else:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return Spread(task_type, len(ordered), statistics.median(ordered), q1, q3, ordered[0], ordered[-1])


@dataclass(slots=True)
class WorkerSizes:
    """Prompt and transcript bytes of one worker (``lead`` for lead prompts), over every run in view."""

    worker: str
    prompts: int = 0
    prompt_bytes: int = 0
    transcripts: int = 0
    transcript_bytes: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "worker": self.worker,
            "prompts": self.prompts,
            "promptBytes": self.prompt_bytes,
            "transcripts": self.transcripts,
            "transcriptBytes": self.transcript_bytes,
        }


@dataclass(slots=True)
class FunnelRow:
    """A phase: how many tasks reached it, and where the tasks that went no further stop."""

    phase: str
    reached: int = 0
    stops: dict[str, int] = field(default_factory=dict)

    @property
    def stopped_here(self) -> int:
        return sum(self.stops.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "reached": self.reached,
            "stoppedHere": self.stopped_here,
            "stops": {stop: self.stops.get(stop, 0) for stop in STOPS},
        }


@dataclass(slots=True)
class Stats:
    """Every statistic of one project under :attr:`filters` (see the module doc)."""

    project: Path
    filters: Filters
    tasks: list[TaskItem] = field(default_factory=list)
    runs: list[RunPoint] = field(default_factory=list)
    #: UTC day -> outcome -> runs.
    runs_per_day: dict[str, dict[str, int]] = field(default_factory=dict)
    phases: list[Spread] = field(default_factory=list)
    funnel: list[FunnelRow] = field(default_factory=list)
    #: Fix cycles -> tasks with that many.
    fix_cycles: dict[int, int] = field(default_factory=dict)
    #: Rounds until agreement -> converged runs; and runs that ended without agreement, by terminal state.
    rounds: dict[int, int] = field(default_factory=dict)
    not_converged: dict[str, int] = field(default_factory=dict)
    workers: list[WorkerSizes] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    #: Chart item key (``day:2026-11-02``, ``phase:analysis``, ``funnel:analysis:blocked``, ``fix:2``,
    #: ``rounds:3``, ``worker:lead``) -> the tasks behind it.
    tasks_behind: dict[str, list[TaskItem]] = field(default_factory=dict)

    def behind(self, key: str) -> list[TaskItem]:
        """The tasks behind the chart item *key*, each once, in catalog order."""
        return list(dict.fromkeys(self.tasks_behind.get(key, [])))

    def _add(self, key: str, task: TaskItem) -> None:
        self.tasks_behind.setdefault(key, []).append(task)

    def to_json(self) -> dict[str, Any]:
        """The ``okstra stats --json`` document (version :data:`STATS_JSON_VERSION`)."""
        return {
            "version": STATS_JSON_VERSION,
            "project": str(self.project),
            "filters": self.filters.to_json(),
            "tasks": len(self.tasks),
            "runs": len(self.runs),
            "runsPerDay": [
                {"day": day, **{_camel(o): counts.get(o, 0) for o in OUTCOMES}}
                for day, counts in sorted(self.runs_per_day.items())
            ],
            "phaseDurations": [s.to_json() for s in self.phases],
            "funnel": [row.to_json() for row in self.funnel],
            "fixCycles": [{"cycles": k, "tasks": v} for k, v in sorted(self.fix_cycles.items())],
            "convergenceRounds": [{"rounds": k, "runs": v} for k, v in sorted(self.rounds.items())],
            "notConverged": dict(sorted(self.not_converged.items())),
            "workers": [w.to_json() for w in self.workers],
            "notes": list(self.notes),
            "unreadable": len(self.unreadable),
            "unreadablePaths": self.unreadable[:UNREADABLE_PATHS_MAX],
        }


def _camel(name: str) -> str:
    head, *rest = name.split("-")
    return head + "".join(part.capitalize() for part in rest)


# ------------------------------------------------------------------ reading


@dataclass(slots=True)
class _Tally:
    """What the notes count: runs whose times could not serve, and why."""

    no_start: int = 0
    bad_start: int = 0
    bad_end: int = 0
    skewed: int = 0
    in_progress: int = 0
    no_end: int = 0
    unknown_types: int = 0

    def notes(self) -> list[str]:
        said = [
            (self.no_start, "runs without a start time (left out of the days and durations)"),
            (self.bad_start, "runs with a malformed start time (left out of the days and durations)"),
            (self.bad_end, "runs with a malformed end time (report generatedAt or manifest updatedAt; no duration)"),
            (self.skewed, "runs that end before they start (clock skew; left out of the durations)"),
            (self.in_progress, "runs still in progress (no duration yet)"),
            (self.no_end, "finished runs without a recorded end time (no duration)"),
            (self.unknown_types, "runs of task types outside the known phases (left out of the funnel)"),
        ]
        return [f"{why}: {n}" for n, why in said if n]


class _Reader:
    """One task's reads for :func:`compute`; store errors become unreadable paths, never exceptions."""

    def __init__(self, project: Project, tally: _Tally, unreadable: set[str]) -> None:
        self.project = project
        self.tally = tally
        self.unreadable = unreadable

    def note(self, result: object) -> bool:
        """True (and the file remembered) when *result* is a ``LoadError`` of a file that exists."""
        if isinstance(result, LoadError):
            if result.path.exists() or result.path.is_symlink():
                try:
                    self.unreadable.add(layout.rel(result.path, self.project.root))
                except ValueError:  # a path the store recorded that leads outside the project
                    self.unreadable.add(str(result.path))
            return True
        return False

    def runs(self, task: Task, item: TaskItem) -> list[RunPoint]:
        """The task's runs from its timeline, oldest first as recorded, with their start and end times."""
        timeline = task.timeline
        if isinstance(timeline, LoadError):
            timeline = _lenient_timeline(timeline, self.project.root)
        if self.note(timeline) or isinstance(timeline, LoadError):
            return []
        manifest = task.manifest
        updated = None if isinstance(manifest, LoadError) else manifest.updated_at
        entries = timeline.entries
        out: list[RunPoint] = []
        for i, entry in enumerate(entries):
            raw_start = entry.run_date_time_segment or entry.run_timestamp
            start = parse_time(raw_start)
            if raw_start is None:
                self.tally.no_start += 1
            elif start is None:
                self.tally.bad_start += 1
            status = entry.status
            raw_end = self._generated_at(entry.report_path)
            if raw_end is None and i == len(entries) - 1 and outcome_of(status) != "in-progress":
                raw_end = updated
            end = parse_time(raw_end)
            if outcome_of(status) == "in-progress":
                self.tally.in_progress += 1
                end = None
            elif raw_end is None:
                self.tally.no_end += 1
            elif end is None:
                self.tally.bad_end += 1
            elif start is not None and end < start:
                self.tally.skewed += 1
            out.append(RunPoint(item, entry.task_type or "?", entry.stage, status, start, end, entry.fix_cycle_id))
        recorded = {parse_time(e.run_date_time_segment or "") for e in entries}
        return out + self._flat_runs(task, item, recorded)

    def _flat_runs(self, task: Task, item: TaskItem, recorded: set[dt.datetime | None]) -> list[RunPoint]:
        """The runs whose manifest still lies flat in its run dir, not yet moved into ``manifests/`` (the store's
        :meth:`~okstra_core.store.RunDir.flat_legacy`): the timeline predates them, yet they are runs of the
        task, as the catalog, the task view and the checker count them. They start at their manifest's
        ``runDateTimeSegment``; their status is their flat status file's word, else the manifest's."""
        from .models.run import RunManifest, final_status

        out: list[RunPoint] = []
        for rd in task.run_dirs:
            flat = rd.flat_legacy()
            status_files = {parsed.seq: path for path, parsed in flat if parsed.category == layout.STATUS_DIR}
            for path, parsed in flat:
                if parsed.kind != "run-manifest":
                    continue
                manifest = reading.load_model(path, RunManifest, root=self.project.root)
                if self.note(manifest) or isinstance(manifest, LoadError):
                    continue
                start = parse_time(manifest.run_date_time_segment)
                if start is not None and start in recorded:
                    continue  # the timeline records it already
                status_path = status_files.get(parsed.seq)
                text = None if status_path is None else reading.read_text(status_path, root=self.project.root)
                status, _ = final_status(manifest.status, text if isinstance(text, str) else None)
                if start is None:
                    self.tally.bad_start += 1
                if outcome_of(status) == "in-progress":
                    self.tally.in_progress += 1
                else:
                    self.tally.no_end += 1
                out.append(RunPoint(item, rd.task_type, rd.stage, status, start, None, manifest.fix_cycle_id))
        return out

    def _generated_at(self, report_rel: str | None) -> str | None:
        """The ``generatedAt`` of the report at *report_rel* (project-relative), when it exists and says one."""
        if not report_rel or not layout.is_relative_posix(report_rel):
            return None  # none, or a recorded path that could lead outside the project: never followed
        path = self.project.root / report_rel
        if not (path.exists() or path.is_symlink()):
            return None
        value = reading.load_json(path, root=self.project.root)
        if self.note(value):
            return None
        found = value.get("generatedAt") if isinstance(value, dict) else None
        return found if isinstance(found, str) else None

    def fix_cycles(self, task: Task) -> int:
        from .models.task import derive_fix_cycles

        doc = task.fix_cycles()
        if doc is None or self.note(doc) or isinstance(doc, LoadError):
            return 0
        if doc.errors:
            self.unreadable.add(layout.rel(doc.path, self.project.root))
        return derive_fix_cycles(doc.records).count

    def stop(self, task: Task, runs: list[RunPoint]) -> str:
        """Where the task stands now (the first of :data:`STOPS` that holds)."""
        from .workflows.inbox import pending_for_task

        if runs and runs[-1].outcome == "in-progress":
            return "in-progress"
        if runs and runs[-1].outcome == "error":
            return "error"
        manifest = task.manifest
        workflow = None if isinstance(manifest, LoadError) else manifest.workflow
        if workflow is not None and workflow.awaiting_approval:
            return "awaiting-approval"
        if any(d.kind != "approval" for d in pending_for_task(task)):
            return "waiting-for-you"
        pointer = workflow.next_recommended_phase if workflow is not None else None
        if pointer is None:
            return "pending"
        return {"blocked": "blocked", "terminal": "done", "ready": "ready"}.get(pointer.status, "pending")

    def rounds(self, task: Task, since: dt.datetime | None, task_type: str | None) -> list[tuple[int | None, str]]:
        """``(rounds, terminal state)`` of each terminal convergence state in the task's run dirs."""
        out: list[tuple[int | None, str]] = []
        for rd in task.run_dirs:
            if task_type is not None and rd.task_type != task_type:
                continue
            for art in rd.of_kind("convergence-final"):
                final = art.load()
                if self.note(final) or not isinstance(final, ConvergenceFinal):
                    continue
                start = parse_time(final.run_date_time_segment)
                if since is not None and (start is None or start < since):
                    continue
                out.append((final.rounds, final.terminal_state or "unknown"))
        return out

    def sizes(self, task: Task, task_type: str | None) -> list[tuple[str, int | None, int | None]]:
        """``(worker, prompt bytes, transcript bytes)`` of every prompt/transcript pair in the task's run dirs."""
        from .render.log_report import log_report

        out: list[tuple[str, int | None, int | None]] = []
        for rd in task.run_dirs:
            if task_type is not None and rd.task_type != task_type:
                continue
            for pair in log_report(rd.path).pairs:
                if rd.stage is None and layout.parse_stage_dir(pair.name.partition("/")[0]) is not None:
                    continue  # a stage folder's pairs: reported with the stage's own run dir
                out.append(
                    (_worker_of(pair.prompt or pair.log or "", pair.role), pair.prompt_bytes, pair.transcript_bytes)
                )
        return out


def _lenient_timeline(error: LoadError, root: Path) -> Timeline | LoadError:
    """A timeline the model refuses only for its times, read entry by entry with the times kept as text.

    The statistics count a malformed time in a note (and leave that run out of the durations) rather than
    losing every run of the task; a timeline that is no JSON object of entries stays refused.
    """
    raw = reading.load_json(error.path, root=root)  # a file the loader refused to open stays refused
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
        return error
    fields = {
        "runDateTimeSegment": "run_date_time_segment",
        "runTimestamp": "run_timestamp",
        "taskType": "task_type",
        "stage": "stage",
        "status": "status",
        "reportPath": "report_path",
        "fixCycleId": "fix_cycle_id",
    }
    entries = []
    for item in raw["entries"]:
        if not isinstance(item, dict):
            return error
        values: dict[str, Any] = {name: item.get(key) for key, name in fields.items()}
        if not all(v is None or isinstance(v, str | int) for v in values.values()):
            return error
        entries.append(TimelineEntry.model_construct(**values))
    return Timeline.model_construct(entries=entries)


def _worker_of(rel: str, role: str) -> str:
    if role == "lead":
        return "lead"
    filename = rel.rpartition("/")[2]
    if filename.endswith(".log"):
        filename = filename.removesuffix(".log") + ".md"
    parsed = names.parse_in_category(layout.PROMPTS_DIR, filename)
    return parsed.worker_id if parsed is not None and parsed.worker_id else role


# ------------------------------------------------------------------ compute


def _phase_index(task_type: str) -> int | None:
    return layout.KNOWN_TASK_TYPES.index(task_type) if task_type in layout.KNOWN_TASK_TYPES else None


def _in_window(run: RunPoint, filters: Filters) -> bool:
    if filters.task_type is not None and run.task_type != filters.task_type:
        return False
    return filters.since is None or (run.start is not None and run.start >= filters.since)


def compute(project: Project, filters: Filters | None = None) -> Stats:
    """Every statistic of *project* under *filters*, read from the store now (see the module doc)."""
    filters = filters or Filters()
    stats = Stats(project.root, filters)
    tally = _Tally()
    unreadable: set[str] = set()
    reader = _Reader(project, tally, unreadable)
    durations: dict[str, list[float]] = {}
    funnel = {phase: FunnelRow(phase) for phase in (NOT_STARTED, *layout.KNOWN_TASK_TYPES)}
    sizes: dict[str, WorkerSizes] = {}
    for ref in project.task_refs:
        key = ref.key or f"{ref.task_group}/{ref.task_id}"
        if not filters.matches_task(key, ref.task_group, ref.task_id):
            continue
        task = ref.open()
        reader.note(task.manifest)
        item = TaskItem(key, ref.root)
        runs = reader.runs(task, item)
        window = [run for run in runs if _in_window(run, filters)]
        if (filters.since is not None or filters.task_type is not None) and not window:
            continue
        stats.tasks.append(item)
        for run in window:
            _count_run(stats, run, durations)
        _count_task(stats, reader, task, item, runs, funnel)
        for rounds, state in reader.rounds(task, filters.since, filters.task_type):
            if state == "converged" and rounds is not None:
                stats.rounds[rounds] = stats.rounds.get(rounds, 0) + 1
                stats._add(f"rounds:{rounds}", item)
            else:
                stats.not_converged[state] = stats.not_converged.get(state, 0) + 1
                stats._add(f"not-converged:{state}", item)
        for worker, prompt_bytes, transcript_bytes in reader.sizes(task, filters.task_type):
            _count_sizes(sizes.setdefault(worker, WorkerSizes(worker)), prompt_bytes, transcript_bytes)
            stats._add(f"worker:{worker}", item)
    stats.phases = [spread(t, durations[t]) for t in _phase_order(durations)]
    stats.funnel = list(funnel.values())
    stats.workers = sorted(sizes.values(), key=lambda w: (-w.transcript_bytes, -w.prompt_bytes, w.worker))
    stats.notes = tally.notes()
    stats.unreadable = sorted(unreadable)
    if stats.unreadable:
        count = len(stats.unreadable)
        stats.notes.append(f"files that could not be read (okstra check says why): {count}")
    return stats


def task_runs(task: Task) -> tuple[list[RunPoint], list[str]]:
    """One task's runs with their start and end times (read as :func:`compute` reads them), and the notes."""
    tally = _Tally()
    ref = task.ref
    item = TaskItem(ref.key or f"{ref.task_group}/{ref.task_id}", ref.root)
    runs = _Reader(task.project, tally, set()).runs(task, item)
    tally.unknown_types = 0  # the funnel's note: no funnel here
    return runs, tally.notes()


def _phase_order(types: Iterable[str]) -> list[str]:
    return sorted(types, key=lambda t: (_phase_index(t) is None, _phase_index(t) or 0, t))


def _count_run(stats: Stats, run: RunPoint, durations: dict[str, list[float]]) -> None:
    stats.runs.append(run)
    if run.start is not None:
        day = run.start.date().isoformat()
        per_day = stats.runs_per_day.setdefault(day, {})
        per_day[run.outcome] = per_day.get(run.outcome, 0) + 1
        stats._add(f"day:{day}", run.task)
        stats._add(f"day:{day}:{run.outcome}", run.task)
    seconds = run.seconds
    if seconds is not None:
        durations.setdefault(run.task_type, []).append(seconds)
        stats._add(f"phase:{run.task_type}", run.task)


def _count_task(
    stats: Stats, reader: _Reader, task: Task, item: TaskItem, runs: list[RunPoint], funnel: dict[str, FunnelRow]
) -> None:
    cycles = reader.fix_cycles(task)
    stats.fix_cycles[cycles] = stats.fix_cycles.get(cycles, 0) + 1
    stats._add(f"fix:{cycles}", item)
    reached = [i for i in (_phase_index(run.task_type) for run in runs) if i is not None]
    reader.tally.unknown_types += sum(1 for run in runs if _phase_index(run.task_type) is None)
    top = max(reached, default=-1)
    furthest = layout.KNOWN_TASK_TYPES[top] if top >= 0 else NOT_STARTED
    funnel[NOT_STARTED].reached += 1  # the first row counts every task
    for phase in layout.KNOWN_TASK_TYPES[: top + 1]:
        funnel[phase].reached += 1
    stop = reader.stop(task, runs)
    row = funnel[furthest]
    row.stops[stop] = row.stops.get(stop, 0) + 1
    stats._add(f"funnel:{furthest}", item)
    stats._add(f"funnel:{furthest}:{stop}", item)


def _count_sizes(worker: WorkerSizes, prompt_bytes: int | None, transcript_bytes: int | None) -> None:
    if prompt_bytes is not None:
        worker.prompts += 1
        worker.prompt_bytes += prompt_bytes
    if transcript_bytes is not None:
        worker.transcripts += 1
        worker.transcript_bytes += transcript_bytes


__all__ = ["Filters", "Stats", "compute", "parse_time", "spread", "task_runs"]


def compute_for(entry: ProjectEntry, filters: Filters | None = None) -> Stats | str:
    """The statistics of a registry entry's project (:mod:`okstra_core.projects`), or one line saying why
    it cannot be read."""
    if not entry.readable:
        return f"{entry.root}: {entry.reason or entry.health}"
    opened = Project.open(entry.root)
    if isinstance(opened, LoadError):
        return f"{opened.path}: {opened.reason} (it was there when the projects were listed)"
    try:
        return compute(Project(entry.root), filters)
    except OSError as exc:  # the root vanished while it was read
        return f"{entry.root}: cannot be read ({exc.strerror or exc})"
