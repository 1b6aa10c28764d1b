"""What Home says of one project besides its inbox: its runs in progress, when anything last happened in it,
and its task folders (whose signatures say what changed since the person last looked).

Each part is its owner's answer: the runs are :func:`okstra_core.workflows.running.running_runs`'s, the last
activity is the newest event :func:`okstra_core.workflows.activity.task_events` gives. With the project's store
index, the task list is the index's shared fact and each task's part (whether its latest run is in progress, its
newest event) a fact of its own, reused while the files it was read from stand still: a warm look at a project
of 500 tasks reads no store file again. Only the tasks whose runs are in progress are then read afresh (how
long a run has been quiet is the age of files no fact records). Nothing here writes.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .. import times
from ..store import Project, TaskRef
from .activity import task_events
from .inbox import task_facts, task_list
from .running import RunningRun, in_progress, running_runs

if TYPE_CHECKING:
    from ..store_index import StoreIndex

#: Prefix of the store index's per-task overview facts (``overview-task\\0<task folder>\\0<task key>``).
TASK_FACT_PREFIX: Final = "overview-task\x00"


@dataclass(frozen=True, slots=True)
class Overview:
    """One project at a glance."""

    #: Every task folder (catalogued or not), as :attr:`Project.task_refs` lists them.
    task_roots: tuple[Path, ...]
    #: The runs in progress, the longest-running first.
    running: tuple[RunningRun, ...]
    #: The newest moment the store records for anything of the project (None: it records none).
    last_activity: dt.datetime | None

    def stalled(self, now: dt.datetime) -> int:
        """How many of the runs in progress have had nothing written for the running view's default threshold."""
        return sum(1 for run in self.running if run.stalled(now))


@dataclass(frozen=True, slots=True)
class _TaskPart:
    running: bool
    latest: dt.datetime | None


def read_overview(project: Project, index: StoreIndex | None = None) -> Overview:
    """*project*'s overview (through *index*, its store index, when given: the same answer, read less)."""
    if index is None:
        refs = project.task_refs
        parts = [_task_part(project, ref) for ref in refs]
        busy = [ref for ref, part in zip(refs, parts, strict=True) if part.running]
        latest = max((part.latest for part in parts if part.latest is not None), default=None)
    else:
        refs = task_list(project, index)[0]
        busy_roots, latest = index.fact(
            OVERVIEW_FACT, functools.partial(_summed, project, refs, index), _encode_sum, _decode_sum
        )
        busy = [ref for ref in refs if os.fspath(ref.root) in busy_roots]
    return Overview(
        task_roots=tuple(ref.root for ref in refs),
        running=tuple(running_runs(project, busy)) if busy else (),
        last_activity=latest,
    )


#: The project's overview as one fact made of one fact per task: while nothing changed, one look at every file it
#: was read from confirms it whole (as the inbox's fact does).
OVERVIEW_FACT: Final = "overview"

_Sum = tuple[frozenset[str], dt.datetime | None]


def _summed(project: Project, refs: list[TaskRef], index: StoreIndex) -> _Sum:
    parts = _indexed_parts(project, refs, index)
    busy = frozenset(os.fspath(ref.root) for ref, part in zip(refs, parts, strict=True) if part.running)
    return busy, max((part.latest for part in parts if part.latest is not None), default=None)


def _encode_sum(value: _Sum) -> Any:
    busy, latest = value
    return [sorted(busy), None if latest is None else times.iso_micro(latest)]


def _decode_sum(value: Any) -> _Sum:
    busy, latest = value
    if not isinstance(busy, list) or not all(isinstance(b, str) for b in busy):
        raise ValueError("not an overview fact")
    if not (latest is None or isinstance(latest, str)):
        raise ValueError("not an overview fact")
    return frozenset(busy), None if latest is None else times.parse_time(latest)


def _task_part(project: Project, ref: TaskRef) -> _TaskPart:
    events = task_events(project, ref)
    return _TaskPart(in_progress(ref.open()), max((e.at for e in events), default=None))


def _indexed_parts(project: Project, refs: list[TaskRef], index: StoreIndex) -> list[_TaskPart]:
    return [part for _, part in task_facts(index, project, refs, TASK_FACT_PREFIX, _task_part, _encode, _decode)]


def _encode(part: _TaskPart) -> Any:
    return [part.running, None if part.latest is None else times.iso_micro(part.latest)]


def _decode(value: Any) -> _TaskPart:
    running, latest = value
    if not isinstance(running, bool) or not (latest is None or isinstance(latest, str)):
        raise ValueError("not an overview fact")
    return _TaskPart(running, None if latest is None else times.parse_time(latest))
