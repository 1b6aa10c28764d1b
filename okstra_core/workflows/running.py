"""What is running now: every run in progress across tasks, its workers, and whether it still moves.

A task's run is in progress when its task manifest's ``latestRunStatus`` is
``prepared`` or ``in-progress``; each run dir of such a task whose latest
execution's run manifest says so too (or says nothing, for the run dir the
task manifest names) is listed: parallel implementation stages each show.

Per run: when it started (the run manifest's ``runDateTimeSegment``), its
workers from the team-state ledger (a dispatch, a result accepted) and their
transcripts (the ``.log`` beside each persisted prompt grows while a worker
works), each with its last event and when it happened, and when anything of the
run was last written. A run with nothing written for longer than a threshold is
*stalled* (:meth:`RunningRun.stalled`); the threshold and the clock are the
caller's, so that a view can update ages without reading the store again.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

from .. import layout, reading, times
from ..models import run as rm
from ..models.run import IN_PROGRESS_STATUSES
from ..store import Artifact, Execution, Project, RunDir, Task, TaskRef

#: A run with nothing written for this long is stalled, unless the caller says otherwise.
DEFAULT_STALLED_AFTER: Final = dt.timedelta(minutes=15)

Doc = TypeVar("Doc", rm.RunManifest, rm.TeamState)

#: Transcript kinds: the ``.log`` beside a persisted prompt, one per worker attempt.
_LOG_KINDS: Final = ("worker-prompt-log", "reverify-prompt-log")


@dataclass(frozen=True, slots=True)
class WorkerActivity:
    """One worker of a running run: its last event and when it happened (None: the store records no time)."""

    worker_id: str
    last_event: str
    last_at: dt.datetime | None


@dataclass(frozen=True, slots=True)
class RunningRun:
    """One run in progress."""

    task: str
    task_root: Path
    run_dir: Path
    task_type: str
    stage: int | None
    status: str
    started: dt.datetime | None
    last_write: dt.datetime | None
    workers: tuple[WorkerActivity, ...]

    def running_for(self, now: dt.datetime) -> dt.timedelta | None:
        return None if self.started is None else max(now - self.started, dt.timedelta(0))

    def quiet_for(self, now: dt.datetime) -> dt.timedelta | None:
        """How long nothing of the run was written (None: no file of it could be looked at)."""
        return None if self.last_write is None else max(now - self.last_write, dt.timedelta(0))

    def stalled(self, now: dt.datetime, after: dt.timedelta = DEFAULT_STALLED_AFTER) -> bool:
        quiet = self.quiet_for(now)
        return quiet is not None and quiet >= after


def running_runs(project: Project, refs: Iterable[TaskRef] | None = None) -> list[RunningRun]:
    """Every run in progress in *project* (among the tasks of *refs* when given), the longest-running first."""
    out: list[RunningRun] = []
    for ref in project.task_refs if refs is None else refs:
        task = ref.open()
        manifest = task.manifest
        if isinstance(manifest, reading.LoadError) or not in_progress(task):
            continue
        latest_dir = project.root / manifest.latest_run_path if manifest.latest_run_path else None
        for rd in task.run_dirs:
            run = _running(task, rd, manifest.task_key, manifest.latest_run_status or "", latest_dir)
            if run is not None:
                out.append(run)
    far_past = dt.datetime.max.replace(tzinfo=dt.UTC)
    out.sort(key=lambda r: (r.started or far_past, r.task, str(r.run_dir)))
    return out


def in_progress(task: Task) -> bool:
    """Whether *task*'s manifest says its latest run is in progress (then its run dirs may list running runs)."""
    manifest = task.manifest
    return not isinstance(manifest, reading.LoadError) and manifest.latest_run_status in IN_PROGRESS_STATUSES


def _running(task: Task, rd: RunDir, key: str, task_status: str, latest_dir: Path | None) -> RunningRun | None:
    executions = rd.executions()
    if not executions:
        return None
    execution = executions[-1]
    manifest = _load(execution, "run-manifest", rm.RunManifest)
    status = rm.final_status(manifest.status, _status_text(task, manifest))[0] if manifest is not None else None
    if status is None:
        if latest_dir is None or os.path.realpath(latest_dir) != os.path.realpath(rd.path):
            return None
        status = task_status
    if status not in IN_PROGRESS_STATUSES:
        return None
    return RunningRun(
        task=key,
        task_root=task.root,
        run_dir=rd.path,
        task_type=rd.task_type,
        stage=rd.stage,
        status=status,
        started=moment(execution.segment),
        last_write=_last_write(execution),
        workers=_workers(execution),
    )


def _status_text(task: Task, manifest: rm.RunManifest) -> str | None:
    """The text of the status file the run manifest names (None: none named, missing or unreadable)."""
    rel = manifest.expected_status_path
    if not rel or not layout.is_relative_posix(rel):
        return None
    path = task.project.root / rel
    if not path.exists():
        return None
    text = reading.read_text(path, root=task.project.root)
    return text if isinstance(text, str) else None


def _load(execution: Execution, kind: str, model: type[Doc]) -> Doc | None:
    for art in execution.artifacts:
        if art.kind == kind:
            loaded = art.load()
            return loaded if isinstance(loaded, model) else None
    return None


def _workers(execution: Execution) -> tuple[WorkerActivity, ...]:
    """Each worker's latest event: a dispatch, a result accepted, or its transcript written."""
    latest: dict[str, tuple[dt.datetime | None, str]] = {}

    def note(worker: str | None, at: dt.datetime | None, event: str) -> None:
        if not worker:
            return
        current = latest.get(worker)
        if current is None or (at is not None and (current[0] is None or at >= current[0])):
            latest[worker] = (at, event)

    ledger = _load(execution, "team-state", rm.TeamState)
    if ledger is not None:
        by_dispatch: dict[str, str] = {}
        rows: list[rm.WorkerDispatch | rm.AgentDispatch] = [*ledger.worker_dispatches, *ledger.agent_dispatches]
        for row in rows:
            if row.dispatch_id and row.worker_id:
                by_dispatch[row.dispatch_id] = row.worker_id
            status = f" ({row.status})" if row.status else ""
            note(row.worker_id, moment(row.dispatched_at), f"dispatched{status}")
        for link in ledger.agent_result_links:
            note(by_dispatch.get(link.dispatch_id), moment(link.accepted_at), "result accepted")
    for art in execution.artifacts:
        if art.kind in _LOG_KINDS:
            note(art.name.worker_id, _mtime(art), "transcript written")
    return tuple(WorkerActivity(w, event, at) for w, (at, event) in sorted(latest.items()))


def _last_write(execution: Execution) -> dt.datetime | None:
    """The newest modification time among the execution's files (its prompts' transcripts included)."""
    times = [t for t in (_mtime(art) for art in execution.artifacts) if t is not None]
    return max(times) if times else None


def _mtime(art: Artifact) -> dt.datetime | None:
    """The file's modification time (None for a folder, such as a duty-contracts snapshot, or a missing file)."""
    try:
        st = os.stat(art.path)
    except OSError:
        return None
    return dt.datetime.fromtimestamp(st.st_mtime, dt.UTC) if stat.S_ISREG(st.st_mode) else None


def moment(value: str | None) -> dt.datetime | None:
    """A time the store recorded, in UTC (None when there is none or it names no moment)."""
    return times.parse_time(value) if value else None


__all__ = [
    "DEFAULT_STALLED_AFTER",
    "IN_PROGRESS_STATUSES",
    "RunningRun",
    "WorkerActivity",
    "in_progress",
    "running_runs",
]
