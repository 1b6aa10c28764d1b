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

Nothing is written. Through the store index (``okstra stats`` without
``--no-cache``), each task's numbers (:mod:`okstra_core.stats.tasks`) are a
fact kept until a file they were read from changes; the statistics are counted
afresh from them, and are the same as a fresh look's. The runs are the timeline's
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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .. import layout, times
from ..errors import LoadError
from ..store import Project, Task, TaskRef
from . import tasks
from .tasks import FinalRow, Tally, TaskNumbers, outcome_of, parse_time

if TYPE_CHECKING:
    from ..projects import ProjectEntry
    from ..store_index import StoreIndex

STATS_JSON_VERSION: Final = 1

#: Run outcomes, in the order the charts stack them.
OUTCOMES: Final = ("completed", "error", "in-progress", "other")

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
    #: The outcome when it was worked out where the task was read (else from the status, when asked).
    known_outcome: str | None = None

    @property
    def outcome(self) -> str:
        return self.known_outcome if self.known_outcome is not None else outcome_of(self.status)

    @property
    def seconds(self) -> float | None:
        """The run's duration; None without both times or when it ends before it starts."""
        if self.start is None or self.end is None or self.end < self.start:
            return None
        return (self.end - self.start).total_seconds()


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

    def outcome_totals(self) -> dict[str, int]:
        """Runs by outcome (every :data:`OUTCOMES` key) over the days counted: a row of the per-project table."""
        return {o: sum(day.get(o, 0) for day in self.runs_per_day.values()) for o in OUTCOMES}

    def fix_cycles_total(self) -> int:
        """Fix cycles over every task in view."""
        return sum(cycles * count for cycles, count in self.fix_cycles.items())

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


# ------------------------------------------------------------------ compute


def _phase_index(task_type: str) -> int | None:
    return layout.KNOWN_TASK_TYPES.index(task_type) if task_type in layout.KNOWN_TASK_TYPES else None


def _in_window(run: RunPoint, filters: Filters) -> bool:
    if filters.task_type is not None and run.task_type != filters.task_type:
        return False
    return filters.since is None or (run.start is not None and run.start >= filters.since)


def compute(project: Project, filters: Filters | None = None, index: StoreIndex | None = None) -> Stats:
    """Every statistic of *project* under *filters*, read from the store now (see the module doc).

    With *index*, the task list and each task's numbers (:func:`okstra_core.stats.tasks.read_task`, before any
    filter) are facts of the store index, reused while every file they were read from is as it was; the
    statistics are counted afresh from them each time, and are the same either way.
    """
    filters = filters or Filters()
    stats = Stats(project.root, filters)
    tally = Tally()
    unreadable: set[str] = set()
    durations: dict[str, list[float]] = {}
    funnel = {phase: FunnelRow(phase) for phase in (NOT_STARTED, *layout.KNOWN_TASK_TYPES)}
    sizes: dict[str, WorkerSizes] = {}
    for ref, numbers in _numbers(project, filters, index):
        item = TaskItem(ref.key or f"{ref.task_group}/{ref.task_id}", ref.root)
        tally.add(numbers.tally)
        unreadable.update(numbers.unreadable)
        runs = [
            RunPoint(item, r.task_type, r.stage, r.status, r.start, r.end, r.fix_cycle_id, r.outcome)
            for r in numbers.runs
        ]
        window = [run for run in runs if _in_window(run, filters)]
        if (filters.since is not None or filters.task_type is not None) and not window:
            continue
        stats.tasks.append(item)
        for run in window:
            _count_run(stats, run, durations)
        _count_task(stats, tally, unreadable, numbers, item, runs, funnel)
        _count_finals(stats, unreadable, numbers.finals, item, filters)
        for task_type, worker, prompt_bytes, transcript_bytes in numbers.sizes:
            if filters.task_type is None or task_type == filters.task_type:
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


#: Names of the statistics' facts in the store index (one per task; the task list is the inbox's).
TASK_FACT_PREFIX: Final = "stats\x00"


def _numbers(project: Project, filters: Filters, index: StoreIndex | None) -> Iterator[tuple[TaskRef, TaskNumbers]]:
    """The tasks *filters* name (by key, ``group/task`` or id) and their numbers, in catalog order."""
    if index is None:
        for ref in project.task_refs:
            if filters.matches_task(ref.key or f"{ref.task_group}/{ref.task_id}", ref.task_group, ref.task_id):
                yield ref, tasks.read_task(project, ref)
        return
    from ..workflows.inbox import task_facts, task_list

    refs, _ = task_list(project, index)

    def wanted(ref: TaskRef) -> bool:
        return filters.matches_task(ref.key or f"{ref.task_group}/{ref.task_id}", ref.task_group, ref.task_id)

    yield from task_facts(index, project, refs, TASK_FACT_PREFIX, tasks.read_task, tasks.encode, tasks.decode, wanted)


def task_runs(task: Task) -> tuple[list[RunPoint], list[str]]:
    """One task's runs with their start and end times (read as :func:`compute` reads them), and the notes."""
    ref = task.ref
    item = TaskItem(ref.key or f"{ref.task_group}/{ref.task_id}", ref.root)
    rows, tally = tasks.task_runs(task)
    runs = [RunPoint(item, r.task_type, r.stage, r.status, r.start, r.end, r.fix_cycle_id, r.outcome) for r in rows]
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
    stats: Stats,
    tally: Tally,
    unreadable: set[str],
    numbers: TaskNumbers,
    item: TaskItem,
    runs: list[RunPoint],
    funnel: dict[str, FunnelRow],
) -> None:
    cycles = numbers.fix_cycles
    unreadable.update(numbers.fix_unreadable)
    stats.fix_cycles[cycles] = stats.fix_cycles.get(cycles, 0) + 1
    stats._add(f"fix:{cycles}", item)
    reached = [i for i in (_phase_index(run.task_type) for run in runs) if i is not None]
    tally.unknown_types += sum(1 for run in runs if _phase_index(run.task_type) is None)
    top = max(reached, default=-1)
    furthest = layout.KNOWN_TASK_TYPES[top] if top >= 0 else NOT_STARTED
    funnel[NOT_STARTED].reached += 1  # the first row counts every task
    for phase in layout.KNOWN_TASK_TYPES[: top + 1]:
        funnel[phase].reached += 1
    stop = numbers.stop
    row = funnel[furthest]
    row.stops[stop] = row.stops.get(stop, 0) + 1
    stats._add(f"funnel:{furthest}", item)
    stats._add(f"funnel:{furthest}:{stop}", item)


def _count_finals(stats: Stats, unreadable: set[str], finals: list[FinalRow], item: TaskItem, filters: Filters) -> None:
    """Rounds until agreement of the converged runs in view, and the terminal states of the others."""
    for final in finals:
        if filters.task_type is not None and final.task_type != filters.task_type:
            continue
        if final.state is None:
            if final.unreadable is not None:
                unreadable.add(final.unreadable)
            continue
        since = filters.since
        started = parse_time(final.start) if final.start is not None else None
        if since is not None and (started is None or started < since):
            continue
        if final.state == "converged" and final.rounds is not None:
            stats.rounds[final.rounds] = stats.rounds.get(final.rounds, 0) + 1
            stats._add(f"rounds:{final.rounds}", item)
        else:
            stats.not_converged[final.state] = stats.not_converged.get(final.state, 0) + 1
            stats._add(f"not-converged:{final.state}", item)


def _count_sizes(worker: WorkerSizes, prompt_bytes: int | None, transcript_bytes: int | None) -> None:
    if prompt_bytes is not None:
        worker.prompts += 1
        worker.prompt_bytes += prompt_bytes
    if transcript_bytes is not None:
        worker.transcripts += 1
        worker.transcript_bytes += transcript_bytes


__all__ = ["Filters", "Stats", "compute", "compute_for", "outcome_of", "parse_time", "spread", "task_runs"]


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
