"""One task's numbers for the statistics, read from the store: what :func:`okstra_core.stats.compute` counts.

:func:`read_task` reads everything the statistics take from one task, whatever
the filters (they are applied when the numbers are counted), so that the same
numbers serve every filter and can be kept as one fact of the store index per
task (:func:`encode` and :func:`decode` give the fact's JSON value and back):
its runs with their start and end times, the notes its runs' times call for,
the files it could not read, its fix cycles, where it stops now, the terminal
convergence states of its run dirs and the prompt and transcript sizes of its
workers. Every read goes through :mod:`okstra_core.reading`, so the index knows
what the numbers were read from.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import layout, names, reading, times
from ..errors import LoadError
from ..store import Project, Task, TaskRef

if TYPE_CHECKING:
    from ..models.task import Timeline

# The models are imported where a task is read, not here: statistics counted from the store index's facts need
# none of them.


@functools.cache
def _outcomes() -> dict[str, str]:
    from ..models.run import COMPLETED_STATUS, FAILED_STATUSES, IN_PROGRESS_STATUSES

    return {
        COMPLETED_STATUS: "completed",
        **{status: "error" for status in FAILED_STATUSES},
        **{status: "in-progress" for status in IN_PROGRESS_STATUSES},
    }


def outcome_of(status: str | None) -> str:
    """The chart outcome of a run status (a run without a status is in progress)."""
    if status is None:
        return "in-progress"
    return _outcomes().get(status, "other")


def parse_time(value: object) -> dt.datetime | None:
    """An ISO-8601 time the store recorded, in UTC (a time without offset is read as UTC); None when unreadable."""
    return times.parse_time(value) if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run of a task as its timeline (or a flat legacy manifest) records it, with the times that could be read."""

    task_type: str
    stage: int | None
    status: str | None
    start: dt.datetime | None
    end: dt.datetime | None
    fix_cycle_id: str | None = None
    #: :func:`outcome_of` the status, worked out where the task is read (counting needs no model).
    outcome: str = "in-progress"


@dataclass(frozen=True, slots=True)
class FinalRow:
    """A terminal convergence state in a run dir of task type :attr:`task_type`: its rounds, its state and the
    moment its run started (ISO 8601, UTC); or the file that could not be read (:attr:`unreadable`; then no
    state)."""

    task_type: str
    rounds: int | None
    state: str | None
    start: str | None
    unreadable: str | None = None


@dataclass(slots=True)
class Tally:
    """What the notes count: runs whose times could not serve, and why."""

    no_start: int = 0
    bad_start: int = 0
    bad_end: int = 0
    skewed: int = 0
    in_progress: int = 0
    no_end: int = 0
    unknown_types: int = 0

    def add(self, other: Tally) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

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


@dataclass(slots=True)
class TaskNumbers:
    """Everything the statistics take from one task, before any filter."""

    runs: list[RunRow] = field(default_factory=list)
    #: The notes the runs' times call for (:attr:`Tally.unknown_types` is counted with the funnel).
    tally: Tally = field(default_factory=Tally)
    #: Files that could not be read among the manifest, the timeline, the reports and the flat run manifests.
    unreadable: list[str] = field(default_factory=list)
    fix_cycles: int = 0
    #: Files that could not be read for the fix cycles.
    fix_unreadable: list[str] = field(default_factory=list)
    #: Where the task stands now (one of :data:`okstra_core.stats.STOPS`).
    stop: str = "pending"
    finals: list[FinalRow] = field(default_factory=list)
    #: ``(task type of the run dir, worker, prompt bytes, transcript bytes)`` of every prompt/transcript pair.
    sizes: list[tuple[str, str, int | None, int | None]] = field(default_factory=list)


def read_task(project: Project, ref: TaskRef) -> TaskNumbers:
    """The numbers of the task *ref* names, read from the store now; store errors become unreadable files."""
    task = ref.open()
    reader = _Reader(project)
    reader.note(task.manifest)
    runs = reader.runs(task)
    out = TaskNumbers(runs, reader.tally, sorted(reader.unreadable))
    reader.unreadable = set()
    out.fix_cycles = reader.fix_cycles(task)
    out.fix_unreadable = sorted(reader.unreadable)
    out.stop = reader.stop(task, runs)
    out.finals = reader.finals(task)
    out.sizes = reader.sizes(task)
    return out


def task_runs(task: Task) -> tuple[list[RunRow], Tally]:
    """One task's runs with their times, and the notes they call for (read as :func:`read_task` reads them)."""
    reader = _Reader(task.project)
    return reader.runs(task), reader.tally


class _Reader:
    """One task's reads; store errors become unreadable paths, never exceptions."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.tally = Tally()
        self.unreadable: set[str] = set()

    def where(self, result: object) -> str | None:
        """The path of *result* when it is a ``LoadError`` of a file that exists (None otherwise)."""
        if not isinstance(result, LoadError) or not reading.lexists(result.path):
            return None
        try:
            return layout.rel(result.path, self.project.root)
        except ValueError:  # a path the store recorded that leads outside the project
            return str(result.path)

    def note(self, result: object) -> bool:
        """True (and the file remembered) when *result* is a ``LoadError`` (remembered when the file exists)."""
        if isinstance(result, LoadError):
            found = self.where(result)
            if found is not None:
                self.unreadable.add(found)
            return True
        return False

    def runs(self, task: Task) -> list[RunRow]:
        """The task's runs from its timeline, oldest first as recorded, with their start and end times."""
        timeline = task.timeline
        if isinstance(timeline, LoadError):
            timeline = _lenient_timeline(timeline, self.project.root)
        if self.note(timeline) or isinstance(timeline, LoadError):
            return []
        manifest = task.manifest
        updated = None if isinstance(manifest, LoadError) else manifest.updated_at
        entries = timeline.entries
        out: list[RunRow] = []
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
            row = RunRow(
                entry.task_type or "?", entry.stage, status, start, end, entry.fix_cycle_id, outcome_of(status)
            )
            out.append(row)
        recorded = {parse_time(e.run_date_time_segment or "") for e in entries}
        return out + self._flat_runs(task, recorded)

    def _flat_runs(self, task: Task, recorded: set[dt.datetime | None]) -> list[RunRow]:
        """The runs whose manifest still lies flat in its run dir, not yet moved into ``manifests/`` (the store's
        :meth:`~okstra_core.store.RunDir.flat_legacy`): the timeline predates them, yet they are runs of the
        task, as the catalog, the task view and the checker count them. They start at their manifest's
        ``runDateTimeSegment``; their status is their flat status file's word, else the manifest's."""
        from ..models.run import RunManifest, final_status

        out: list[RunRow] = []
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
                out.append(
                    RunRow(rd.task_type, rd.stage, status, start, None, manifest.fix_cycle_id, outcome_of(status))
                )
        return out

    def _generated_at(self, report_rel: str | None) -> str | None:
        """The ``generatedAt`` of the report at *report_rel* (project-relative), when it exists and says one."""
        if not report_rel or not layout.is_relative_posix(report_rel):
            return None  # none, or a recorded path that could lead outside the project: never followed
        path = self.project.root / report_rel
        if not reading.lexists(path):
            return None
        value = reading.load_json(path, root=self.project.root)
        if self.note(value):
            return None
        found = value.get("generatedAt") if isinstance(value, dict) else None
        return found if isinstance(found, str) else None

    def fix_cycles(self, task: Task) -> int:
        from ..models.task import derive_fix_cycles

        doc = task.fix_cycles()
        if doc is None or self.note(doc) or isinstance(doc, LoadError):
            return 0
        if doc.errors:
            self.unreadable.add(layout.rel(doc.path, self.project.root))
        return derive_fix_cycles(doc.records).count

    def stop(self, task: Task, runs: list[RunRow]) -> str:
        """Where the task stands now (the first of :data:`okstra_core.stats.STOPS` that holds)."""
        from ..workflows.inbox import pending_for_task

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

    def finals(self, task: Task) -> list[FinalRow]:
        """Every terminal convergence state in the task's run dirs (and those that could not be read)."""
        from ..models.convergence import ConvergenceFinal

        out: list[FinalRow] = []
        for rd in task.run_dirs:
            for art in rd.of_kind("convergence-final"):
                final = art.load()
                if isinstance(final, LoadError):
                    out.append(FinalRow(rd.task_type, None, None, None, self.where(final)))
                    continue
                if not isinstance(final, ConvergenceFinal):
                    continue
                start = parse_time(final.run_date_time_segment)
                moment = None if start is None else start.isoformat()
                out.append(FinalRow(rd.task_type, final.rounds, final.terminal_state or "unknown", moment))
        return out

    def sizes(self, task: Task) -> list[tuple[str, str, int | None, int | None]]:
        """``(task type, worker, prompt bytes, transcript bytes)`` of every prompt/transcript pair of its run dirs."""
        from ..render.log_report import log_report

        out: list[tuple[str, str, int | None, int | None]] = []
        for rd in task.run_dirs:
            report = log_report(rd.path, listed=True, names=rd.own_names(), stages=False, looked=rd.flat_looks())
            for pair in report.pairs:
                if rd.stage is None and layout.parse_stage_dir(pair.name.partition("/")[0]) is not None:
                    continue  # a stage folder's pairs: reported with the stage's own run dir
                worker = _worker_of(pair.prompt or pair.log or "", pair.role)
                out.append((rd.task_type, worker, pair.prompt_bytes, pair.transcript_bytes))
        return out


def _lenient_timeline(error: LoadError, root: Path) -> Timeline | LoadError:
    """A timeline the model refuses only for its times, read entry by entry with the times kept as text.

    The statistics count a malformed time in a note (and leave that run out of the durations) rather than
    losing every run of the task; a timeline that is no JSON object of entries stays refused.
    """
    from ..models.task import Timeline, TimelineEntry

    raw = reading.load_json(error.path, root=root)  # a file the loader refused to open stays refused
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
        return error
    fields_of = {
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
        values: dict[str, Any] = {name: item.get(key) for key, name in fields_of.items()}
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


# ------------------------------------------------------------------ the store index's fact


def _time(value: dt.datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _untime(value: Any) -> dt.datetime | None:
    return None if value is None else dt.datetime.fromisoformat(str(value)).astimezone(dt.UTC)


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def encode(numbers: TaskNumbers) -> Any:
    """*numbers* as the JSON value the store index keeps."""
    return {
        "runs": [
            [r.task_type, r.stage, r.status, _time(r.start), _time(r.end), r.fix_cycle_id, r.outcome]
            for r in numbers.runs
        ],
        "tally": [getattr(numbers.tally, f.name) for f in fields(Tally)],
        "unreadable": numbers.unreadable,
        "fixCycles": numbers.fix_cycles,
        "fixUnreadable": numbers.fix_unreadable,
        "stop": numbers.stop,
        "finals": [[f.task_type, f.rounds, f.state, f.start, f.unreadable] for f in numbers.finals],
        "sizes": [list(s) for s in numbers.sizes],
    }


def decode(value: Any) -> TaskNumbers:
    """The numbers :func:`encode` kept (a value of another shape raises ``KeyError``, ``TypeError`` or
    ``ValueError``: the index then reads the task afresh)."""
    runs = [
        RunRow(str(t), _opt_int(stage), _opt_str(status), _untime(start), _untime(end), _opt_str(fix), str(outcome))
        for t, stage, status, start, end, fix, outcome in value["runs"]
    ]
    tally = Tally(*(int(n) for n in value["tally"]))
    finals = [
        FinalRow(str(t), _opt_int(rounds), _opt_str(state), _opt_str(start), _opt_str(bad))
        for t, rounds, state, start, bad in value["finals"]
    ]
    sizes = [(str(t), str(w), _opt_int(p), _opt_int(b)) for t, w, p, b in value["sizes"]]
    return TaskNumbers(
        runs,
        tally,
        [str(u) for u in value["unreadable"]],
        int(value["fixCycles"]),
        [str(u) for u in value["fixUnreadable"]],
        str(value["stop"]),
        finals,
        sizes,
    )
