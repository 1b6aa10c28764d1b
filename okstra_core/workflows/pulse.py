"""What a person should hear about while the workbench is open: decisions that start waiting, runs that end.

A :class:`Pulse` is what the project looks like for that purpose at one
moment: the decisions waiting (the inbox's own items, from
:func:`okstra_core.workflows.inbox.pending_for_task`) and each task's latest
run and its status, as the task manifest records them (``latestRunPath``,
``latestRunStatus``). :func:`notices` compares two pulses and says what
happened between them. Both read the store only, through the same readers as
the inbox, so a notice never disagrees with what the views show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..models.run import COMPLETED_STATUS, FAILED_STATUSES
from ..store import Project
from ..text import visible
from .inbox import (
    DECISION_WORDS,
    PendingDecision,
    decision_key,
    latest_runs,
    pending_for_task,
    read_inbox,
    sort_newest_first,
)
from .latest_run import KeptRun, RunState, kept_run, runs_by_key

if TYPE_CHECKING:
    from ..store_index import StoreIndex

__all__ = ["Notice", "NoticeKind", "Pulse", "RunState", "decision_text", "notices", "read_pulse", "refresh_pulse"]

NoticeKind = Literal["decision", "run-completed", "run-failed", "check-failed"]


@dataclass(frozen=True, slots=True)
class Pulse:
    """The decisions waiting and each task's latest run, at one moment."""

    decisions: dict[tuple[str, str, str, str, str], PendingDecision] = field(default_factory=dict)
    runs: dict[str, RunState] = field(default_factory=dict)


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


def read_pulse(project: Project, index: StoreIndex | None = None) -> Pulse:
    """The pulse of *project* now. Through *index*, its store index, the decisions and runs are those the inbox's
    reading keeps there (a warm look reads no task again); else each manifest is read once."""
    if index is not None:
        items = read_inbox(project, index).items
        return Pulse({decision_key(d): d for d in items}, latest_runs(project, index))
    return _read_fresh(project)


def _read_fresh(project: Project, only: Callable[[Path], bool] | None = None) -> Pulse:
    """The pulse of *project* (or of the tasks whose root *only* accepts), read afresh."""
    decisions: dict[tuple[str, str, str, str, str], PendingDecision] = {}
    found: list[tuple[Path, KeptRun | None]] = []
    for ref in project.task_refs:
        if only is not None and not only(ref.root):
            continue
        task = ref.open()
        for decision in pending_for_task(task):
            decisions[decision_key(decision)] = decision
        found.append((task.root, kept_run(task)))
    return Pulse(decisions, runs_by_key(found))


def refresh_pulse(project: Project, before: Pulse, task_roots: set[Path]) -> Pulse:
    """*before* with the tasks at *task_roots* read again (the others as they were)."""
    decisions = {k: d for k, d in before.decisions.items() if d.task_root not in task_roots}
    runs = {k: r for k, r in before.runs.items() if r.task_root not in task_roots}
    fresh = _read_fresh(project, lambda root: root in task_roots)
    decisions.update(fresh.decisions)
    runs.update(fresh.runs)
    return Pulse(decisions, runs)


def decision_text(kind: str, item: str | None, summary: str) -> str:
    """What a decision notice says: what waits (its item, when it has one) and the decision's summary."""
    words = next((w for k, w in DECISION_WORDS.items() if k == kind), kind)
    what = words + (f" ({item})" if item else "")
    return visible(f"{what}: {summary}")


def notices(before: Pulse, after: Pulse) -> list[Notice]:
    """What happened between two pulses: new decisions (newest first), then runs that ended, by task.

    A run "ended" when a task's latest run is now ``completed`` or a failure
    status and was not so before (a new latest run, or the same run's status
    changing). Tasks that appear with a finished run (a task copied in, a
    store restored) are not news: only a change seen while watching is.
    """
    out: list[Notice] = []
    fresh = [d for key, d in after.decisions.items() if key not in before.decisions]
    for d in sort_newest_first(fresh):
        out.append(Notice("decision", d.task, decision_text(d.kind, d.item, d.summary), d.task_root, d))
    for key in sorted(after.runs.keys() & before.runs.keys()):
        old, new = before.runs[key], after.runs[key]
        if (old.path, old.status, old.report) == (new.path, new.status, new.report) or new.status is None:
            continue
        if new.status == COMPLETED_STATUS:
            out.append(Notice("run-completed", key, visible(f"{new.label} run completed"), new.task_root))
        elif new.status in FAILED_STATUSES:
            out.append(Notice("run-failed", key, visible(f"{new.label} run ended: {new.status}"), new.task_root))
    return out
