"""What a person should hear about while the workbench is open: decisions that start waiting, runs that end.

A :class:`Pulse` is what the project looks like for that purpose at one
moment: the decisions waiting (the inbox's own items, from
:func:`okstra_core.workflows.inbox.pending_for_task`) and each task's latest
run and its status, as the task manifest records them (``latestRunPath``,
``latestRunStatus``). :func:`read_pulse` reads the next one and says what
happened since the one before. Both read the store only, through the same
readers as the inbox, so a notice never disagrees with what the views show.

A pulse is held from one reading of a whole store to the next, so it keeps
only what the comparing needs: a digest of what tells each decision and each
latest run apart, and the task folder each belongs to (to read again only the
tasks a change touches). Through the store index the decisions are taken a
row at a time from the inbox it keeps, and only those that are news are
built whole.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from ..models.run import COMPLETED_STATUS, FAILED_STATUSES
from ..store import Project
from ..text import visible
from .inbox import (
    DECISION_WORDS,
    DecisionKey,
    PendingDecision,
    kept_runs,
    pending_for_task,
    sort_newest_first,
    waiting_of,
    waiting_rows,
)
from .latest_run import KeptRun, RunState, kept_run

if TYPE_CHECKING:
    from ..store_index import StoreIndex

__all__ = ["Notice", "NoticeKind", "Pulse", "RunState", "decision_text", "read_pulse", "refresh_pulse"]

NoticeKind = Literal["decision", "run-completed", "run-failed", "check-failed"]

#: One decision as a reading gives it: its key, its task folder's path as text ('' for none), a maker of it whole.
_Waiting = tuple[DecisionKey, str, Callable[[], PendingDecision]]


@dataclass(frozen=True, slots=True)
class Pulse:
    """The decisions waiting and each task's latest run, at one moment, as digests."""

    #: Each decision waiting, by the digest of its :func:`~okstra_core.workflows.inbox.decision_key`: its task
    #: folder's path as text ('' for a decision of none).
    decisions: dict[bytes, str] = field(default_factory=dict)
    #: Each task's latest run, by task key: the digest of its run dir, status and report record path, and its task
    #: folder's path as text.
    runs: dict[str, tuple[bytes, str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Notice:
    """One thing that happened: a decision started waiting, or a run ended."""

    kind: NoticeKind
    task: str  # the task key
    text: str  # one line, store text with control characters made visible
    task_root: Path | None
    decision: PendingDecision | None = None
    #: The project it happened in, when not the one open: its registry id and real root.
    project: str | None = None
    project_root: Path | None = None


def read_pulse(
    project: Project, index: StoreIndex | None = None, before: Pulse | None = None
) -> tuple[Pulse, list[Notice]]:
    """The pulse of *project* now, and what happened since *before* (nothing without one): new decisions (newest
    first), then runs that ended, by task key. Through *index*, its store index, the decisions and runs are those
    the inbox's reading keeps there (a warm look reads no task again); else each manifest is read once.

    A run "ended" when a task's latest run is now ``completed`` or a failure
    status and was not so before (a new latest run, or the same run's status
    changing). Tasks that appear with a finished run (a task copied in, a
    store restored) are not news: only a change seen while watching is.
    """
    if index is not None:
        # The runs are read once the decisions are: a cold inbox's reading keeps the runs beside it.
        return _compared(waiting_rows(project, index), lambda: kept_runs(project, index), before, Pulse())
    decisions, runs = _read_fresh(project, None)
    return _compared(decisions, lambda: runs, before, Pulse())


def refresh_pulse(project: Project, before: Pulse, task_roots: set[Path]) -> tuple[Pulse, list[Notice]]:
    """:func:`read_pulse` with only the tasks at *task_roots* read again (the others as they were in *before*)."""
    touched = {os.fspath(r) for r in task_roots}
    untouched = Pulse(
        {d: folder for d, folder in before.decisions.items() if folder not in touched},
        {k: run for k, run in before.runs.items() if run[1] not in touched},
    )
    decisions, runs = _read_fresh(project, task_roots)
    return _compared(decisions, lambda: runs, before, untouched)


def _read_fresh(project: Project, only: set[Path] | None) -> tuple[list[_Waiting], list[tuple[str, KeptRun | None]]]:
    """The decisions and latest runs of *project*'s tasks (those at *only*), read afresh, in task-list order."""
    decisions: list[_Waiting] = []
    runs: list[tuple[str, KeptRun | None]] = []
    for ref in project.task_refs:
        if only is not None and ref.root not in only:
            continue
        task = ref.open()
        decisions.extend(waiting_of(pending_for_task(task)))
        runs.append((os.fspath(task.root), kept_run(task)))
    return decisions, runs


def _compared(
    decisions: Iterable[_Waiting],
    runs: Callable[[], Iterable[tuple[str, KeptRun | None]]],
    before: Pulse | None,
    kept: Pulse,
) -> tuple[Pulse, list[Notice]]:
    """The pulse of *kept* with *decisions* and then *runs* (read once the decisions are; in task-list order: a
    task key two tasks share gives the later task's run) added, and what happened since *before*.

    What the pulse will hold is packed meanwhile (:class:`_Packed`) and made into its objects only once the
    reading's own are gone: made among them, the few that live on would keep the interpreter's memory of the
    whole reading from being given back."""
    packed = _Packed()
    fresh: list[PendingDecision] = []
    for identity, folder, whole in decisions:
        digest = _digest(identity)
        packed.add_decision(digest, folder)
        if before is not None and digest not in before.decisions:
            fresh.append(whole())
    # Each run is packed as it comes (a task key two tasks share: the later one's, as the pulse's table keeps it),
    # so that the runs of 100,000 tasks are never held whole; only those that ended are kept, by task key.
    ended: dict[str, Notice] = {}
    for folder, run in runs():
        if run is None:
            continue
        key, path, status, report = run
        digest = _digest((path, status, report))
        packed.add_run(key, digest, folder)
        notice = None
        if before is not None and key in before.runs and before.runs[key][0] != digest and status is not None:
            notice = _ended(key, RunState(path, status, report, Path(folder)))
        if notice is None:
            ended.pop(key, None)
        else:
            ended[key] = notice
    news = [
        Notice("decision", d.task, decision_text(d.kind, d.item, d.summary), d.task_root, d)
        for d in sort_newest_first(fresh)
    ]
    return packed.pulse(kept), news + [ended[key] for key in sorted(ended)]


def _ended(key: str, state: RunState) -> Notice | None:
    """The notice of a latest run now in *state*, when that status ends a run (else None)."""
    if state.status == COMPLETED_STATUS:
        return Notice("run-completed", key, visible(f"{state.label} run completed"), state.task_root)
    if state.status in FAILED_STATUSES:
        return Notice("run-failed", key, visible(f"{state.label} run ended: {state.status}"), state.task_root)
    return None


class _Packed:
    """What a reading adds to a pulse, packed in a few buffers as it is read (digests side by side, texts each
    after its length), and made into the pulse's objects at the end."""

    def __init__(self) -> None:
        self._decisions = bytearray()  # per decision: its digest, then its folder
        self._runs = bytearray()  # per run: its digest, then its task key, then its folder

    def add_decision(self, digest: bytes, folder: str) -> None:
        self._decisions += digest
        _pack_text(self._decisions, folder)

    def add_run(self, key: str, digest: bytes, folder: str) -> None:
        self._runs += digest
        _pack_text(self._runs, key)
        _pack_text(self._runs, folder)

    def pulse(self, kept: Pulse) -> Pulse:
        """*kept* with what was packed added (each folder's text made once, for decisions and runs alike)."""
        folders: dict[str, str] = {}
        decisions = dict(kept.decisions)
        view, at = memoryview(self._decisions), 0
        while at < len(view):
            digest = bytes(view[at : at + DIGEST_SIZE])
            folder, at = _unpack_text(view, at + DIGEST_SIZE)
            decisions[digest] = folders.setdefault(folder, folder)
        runs = dict(kept.runs)
        view, at = memoryview(self._runs), 0
        while at < len(view):
            digest = bytes(view[at : at + DIGEST_SIZE])
            key, at = _unpack_text(view, at + DIGEST_SIZE)
            folder, at = _unpack_text(view, at)
            runs[key] = (digest, folders.setdefault(folder, folder))
        return Pulse(decisions, runs)


def _pack_text(buffer: bytearray, text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    buffer += len(data).to_bytes(4, "little")
    buffer += data


def _unpack_text(view: memoryview, at: int) -> tuple[str, int]:
    size = int.from_bytes(view[at : at + 4], "little")
    end = at + 4 + size
    return str(view[at + 4 : end], "utf-8", "surrogatepass"), end


#: The size of a pulse's digests, in bytes.
DIGEST_SIZE: Final = 16


def _digest(parts: tuple[str | None, ...]) -> bytes:
    """A digest of *parts* (texts, or None) that tells any two apart: of their ``repr``, which is unambiguous."""
    return hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=DIGEST_SIZE).digest()


def decision_text(kind: str, item: str | None, summary: str) -> str:
    """What a decision notice says: what waits (its item, when it has one) and the decision's summary."""
    words = next((w for k, w in DECISION_WORDS.items() if k == kind), kind)
    what = words + (f" ({item})" if item else "")
    return visible(f"{what}: {summary}")
