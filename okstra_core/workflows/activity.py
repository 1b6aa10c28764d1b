"""What happened across a project, newest first: derived from the store, so it cannot disagree with it.

Each event has a time the store records, or the modification time of the
file that is the event when the store records none:

================== ============================================================ ===========================
kind               from                                                         time
================== ============================================================ ===========================
``run-started``    each ``history/timeline.json`` entry                         its ``runDateTimeSegment``
``run-completed``, an entry whose status is ``completed`` / a failure status     its report's ``generatedAt``,
``run-failed``                                                                  else the report's mtime,
                                                                                else the entry's start
``decision-waiting`` each decision of the inbox                                 its ``since``
``decision-made``  user-response sidecars (a choice or answers exported),       file mtime
                   ``selected-direction.json`` (planning prepared),
                   ``clarification-response.md`` (answers attached)
``design-confirmed`` each design-prep input (``PREP-nnn rN``)                    the stamp in its name
``fix-cycle-opened`` each ``opened`` line of ``history/fix-cycles.jsonl``        its ``at``
================== ============================================================ ===========================

Nothing here writes; a file that cannot be read contributes no event.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from pydantic import ValidationError

from .. import layout, reading, times
from ..models import task as tm
from ..models.report import ReportTime
from ..models.run import COMPLETED_STATUS, FAILED_STATUSES
from ..store import Project, Task, TaskRef
from ..text import visible
from .inbox import DECISION_WORDS, pending_for_task
from .running import moment

EventKind = Literal[
    "run-started",
    "run-completed",
    "run-failed",
    "decision-waiting",
    "decision-made",
    "design-confirmed",
    "fix-cycle-opened",
]

#: How each kind is named in the view (one word or two).
EVENT_LABELS: Final[dict[str, str]] = {
    "run-started": "run started",
    "run-completed": "run completed",
    "run-failed": "run failed",
    "decision-waiting": "waiting",
    "decision-made": "decided",
    "design-confirmed": "confirmed",
    "fix-cycle-opened": "fix cycle",
}


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened in one task."""

    at: dt.datetime
    kind: EventKind
    task: str  # the task key
    task_root: Path
    text: str  # one line, store text with control characters made visible
    path: Path | None  # the file to open for it


def activity(project: Project, since: dt.datetime | None = None) -> list[Event]:
    """Every event of *project* at or after *since* (everything when None), newest first."""
    out: list[Event] = []
    for ref in project.task_refs:
        out.extend(e for e in task_events(project, ref) if since is None or e.at >= since)
    out.sort(key=lambda e: (e.at, e.task, e.kind, e.text), reverse=True)
    return out


def task_events(project: Project, ref: TaskRef) -> list[Event]:
    """Every event of one task of *project*, in no particular order."""
    task = ref.open()
    manifest = task.manifest
    key = manifest.task_key if not isinstance(manifest, reading.LoadError) else (ref.key or task.rel)
    return _task_events(project, task, key)


def _task_events(project: Project, task: Task, key: str) -> list[Event]:
    events = _runs(project, task, key)
    for d in pending_for_task(task):
        at = moment(d.since)
        if at is not None:
            what = DECISION_WORDS.get(d.kind, d.kind) + (f" ({d.item})" if d.item else "")
            events.append(Event(at, "decision-waiting", key, task.root, visible(what), project.root / d.path))
    events += _decisions_made(task, key)
    events += _fix_cycles(task, key)
    return events


def _runs(project: Project, task: Task, key: str) -> list[Event]:
    timeline = task.timeline
    if isinstance(timeline, reading.LoadError):
        return []
    out: list[Event] = []
    for entry in timeline.entries:
        start = moment(entry.run_date_time_segment or entry.run_timestamp)
        label = (entry.task_type or "?") + (f" stage-{entry.stage}" if entry.stage else "")
        manifest = _inside(project, entry.run_manifest_path)
        if start is not None:
            out.append(Event(start, "run-started", key, task.root, visible(label), manifest))
        if entry.status != COMPLETED_STATUS and entry.status not in FAILED_STATUSES:
            continue
        report = _inside(project, entry.report_path)
        end = _report_time(project, report) if report is not None else None
        end = end or start
        if end is None:
            continue
        kind: EventKind = "run-completed" if entry.status == COMPLETED_STATUS else "run-failed"
        what = label + ("" if entry.status == COMPLETED_STATUS else f" ({entry.status})")
        what += f": {report.name}" if report is not None and _exists(report) else ""
        out.append(Event(end, kind, key, task.root, visible(what), report if report is not None else manifest))
    return out


def _decisions_made(task: Task, key: str) -> list[Event]:
    out: list[Event] = []
    for rd in task.run_dirs:
        for art in rd.of_kind("user-response"):
            if (at := _mtime(art.path)) is not None:
                what = f"{rd.task_type} answered: {art.path.name}"
                out.append(Event(at, "decision-made", key, task.root, visible(what), art.path))
        for art in rd.of_kind("design-prep-input"):
            at = _stamp(art.name.stamp)
            if at is not None:
                what = f"{art.name.prep_id} r{art.name.revision} confirmed"
                out.append(Event(at, "design-confirmed", key, task.root, visible(what), art.path))
    for path, what in (
        (layout.selected_direction_path(task.root), "planning prepared: direction handed over"),
        (layout.clarification_response_path(task.root), "answers attached to the instruction set"),
    ):
        if (at := _mtime(path)) is not None:
            out.append(Event(at, "decision-made", key, task.root, what, path))
    return out


def _fix_cycles(task: Task, key: str) -> list[Event]:
    doc = task.fix_cycles()
    if doc is None or isinstance(doc, reading.LoadError):
        return []
    out: list[Event] = []
    for record in doc.records:
        if not isinstance(record, tm.FixCycleEvent) or record.event != "opened":
            continue
        at = moment(record.at)
        if at is not None:
            what = f"cycle {record.cycle or '?'} opened: {record.symptom}"
            out.append(Event(at, "fix-cycle-opened", key, task.root, visible(what), layout.fix_cycles_path(task.root)))
    return out


def _inside(project: Project, recorded: str | None) -> Path | None:
    """A project-relative path the store recorded, or None when there is none or it could lead outside."""
    return project.root / recorded if recorded and layout.is_relative_posix(recorded) else None


def _report_time(project: Project, report: Path) -> dt.datetime | None:
    """When the report was generated (its ``generatedAt``), else when its file was last written."""
    value = reading.load_json(report, root=project.root) if _exists(report) else None
    try:
        generated_at = ReportTime.model_validate(value).generated_at
    except ValidationError:  # not an object, or a generatedAt that is not text
        generated_at = None
    recorded = moment(generated_at) if generated_at is not None else None
    return recorded if recorded is not None else _mtime(report)


def _exists(path: Path) -> bool:
    """``path.exists()``, recorded: an event that names a file, or reads it, is read again when it comes or goes."""
    return reading.mtime_of(path) is not None


def _mtime(path: Path) -> dt.datetime | None:
    """*path*'s modification time, looked at through :mod:`okstra_core.reading` (recorded: an event whose time
    is a file's is read again when the file is touched)."""
    ns = reading.mtime_of(path)
    if ns is None:
        return None
    try:
        return dt.datetime.fromtimestamp(ns / 1e9, dt.UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _stamp(text: str | None) -> dt.datetime | None:
    return times.parse_stamp(text) if text else None
