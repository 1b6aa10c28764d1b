"""A manager task's children as their own projects say they are now, next to the manager's snapshot.

The manager's ``snapshots.json`` is a read-side copy that ``task sync``
imports from each child project; the child project's ``.okstra/`` stays the
source of truth. :func:`live_task` reads, for each child of a manager task,
the child task in its project (found through the manager's own
``projects.json``, with the registry's checks on the root,
:func:`okstra_core.projects.look_at`): its ``currentStatus``,
``latestRunStatus``, workflow phase and the decisions waiting in it (the
inbox's one owner, :func:`okstra_core.workflows.inbox.pending_for_task`).
A snapshot that names another task key, another status or another latest
run status than the child project now records, or no snapshot at all, is
*stale*; :func:`sync_command` says what refreshes it. A child that cannot be
read (an unregistered project, a root gone, a task missing) says why in one
line and is never taken as stale. Nothing here writes.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import reading
from ..manager_home import Manager, ManagerTask
from ..models import manager as mm
from ..projects import look_at
from ..store import Project, Task
from .inbox import PendingDecision, pending_for_task

#: The verb of ``okstra manager`` that imports the child projects' state into ``snapshots.json`` (the
#: contract's ``task sync``); this project has no such verb, so this is the command to give the person.
SYNC_VERB = ("okstra", "manager", "task", "sync")


def sync_command(manager_id: str, task_key: str) -> str:
    """The command that refreshes the snapshots of the manager task *task_key* of *manager_id*."""
    return shlex.join([*SYNC_VERB, "--manager", manager_id, task_key])


@dataclass(slots=True)
class LiveChild:
    """One child task: the manager's assignment and snapshot, and what its project says now."""

    assignment: mm.ChildAssignment
    project_id: str | None
    task_key: str | None
    snapshot: mm.ProjectSnapshot | None
    project_root: Path | None = None
    #: What the child project records now (None when it could not be read: see :attr:`problem`).
    current_status: str | None = None
    latest_run_status: str | None = None
    phase: str | None = None
    phase_state: str | None = None
    waiting: list[PendingDecision] = field(default_factory=list)
    problem: str | None = None
    #: Why the snapshot no longer says what the project says, one line each (empty: up to date).
    stale: list[str] = field(default_factory=list)
    refresh: str | None = None

    @property
    def read(self) -> bool:
        return self.problem is None

    def to_json(self) -> dict[str, Any]:
        snap = self.snapshot
        return {
            "project": self.project_id,
            "projectRoot": None if self.project_root is None else str(self.project_root),
            "taskKey": self.task_key,
            "assigned": self.assignment.status,
            "snapshot": None if snap is None else snap.dump(),
            "live": None
            if not self.read
            else {
                "currentStatus": self.current_status,
                "latestRunStatus": self.latest_run_status,
                "phase": self.phase,
                "phaseState": self.phase_state,
                "waiting": [d.to_json() for d in self.waiting],
            },
            "problem": self.problem,
            "stale": list(self.stale),
            "refresh": self.refresh,
        }


@dataclass(slots=True)
class LiveTask:
    """A manager task with its children read live; :attr:`problems` names the manager files not read."""

    manager_id: str
    task_group: str
    task_id: str
    task_key: str
    children: list[LiveChild] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        return any(child.stale for child in self.children)


def live_task(manager: Manager, task: ManagerTask) -> LiveTask:
    """The children of the manager task *task* of *manager*, each as its own project records it now."""
    manifest = task.manifest()
    key = manifest.task_key if not isinstance(manifest, reading.LoadError) and manifest.task_key else None
    live = LiveTask(manager.manager_id, task.task_group, task.task_id, key or f"{task.task_group}:{task.task_id}")
    if isinstance(manifest, reading.LoadError):
        live.problems.append(str(manifest))
    roots = _registered_roots(manager, live.problems)
    snapshots = _snapshots(task, live.problems)
    children = task.children()
    if isinstance(children, reading.LoadError):
        live.problems.append(str(children))
        return live
    for assignment in children.children:
        child = _child(assignment, roots, snapshots)
        if child.read and child.stale:
            child.refresh = sync_command(manager.manager_id, live.task_key)
        live.children.append(child)
    return live


def _registered_roots(manager: Manager, problems: list[str]) -> dict[str, str]:
    projects = manager.projects()
    if isinstance(projects, reading.LoadError):
        problems.append(str(projects))
        return {}
    return {p.project_id: p.project_root for p in projects.projects}


def _snapshots(task: ManagerTask, problems: list[str]) -> dict[str, mm.ProjectSnapshot]:
    snapshots = task.snapshots()
    if isinstance(snapshots, reading.LoadError):
        if reading.lexists(snapshots.path):
            problems.append(str(snapshots))
        return {}
    return snapshots.projects


def _child(
    assignment: mm.ChildAssignment, roots: dict[str, str], snapshots: dict[str, mm.ProjectSnapshot]
) -> LiveChild:
    project_id = assignment.child_project()
    key = assignment.child_task_key or assignment.task_key
    snapshot = snapshots.get(project_id) if project_id is not None else None
    child = LiveChild(assignment, project_id, key, snapshot)
    if project_id is None or project_id not in roots:
        child.problem = f"project {project_id!r} is not registered with this manager"
        return child
    look = look_at(roots[project_id])
    child.project_root = Path(look.key)
    if look.health not in ("ok", "nested"):
        child.problem = f"{look.key}: {look.reason}"
        return child
    task = _find(Project(Path(os.path.realpath(look.key))), assignment, key)
    if task is None:
        child.problem = f"{look.key}: no task {key or assignment.child_id()!r} in this project"
        return child
    _read_live(child, task)
    return child


def _find(project: Project, assignment: mm.ChildAssignment, key: str | None) -> Task | None:
    if key is not None:
        found = project.find_task(key)
        if found is not None:
            return found
    child_id = assignment.child_id()
    return project.find_task(child_id) if child_id is not None else None


def _read_live(child: LiveChild, task: Task) -> None:
    manifest = task.manifest
    if isinstance(manifest, reading.LoadError):
        child.problem = str(manifest)
        return
    workflow = manifest.workflow
    child.current_status = manifest.current_status
    child.latest_run_status = manifest.latest_run_status
    child.phase = workflow.current_phase if workflow is not None else None
    child.phase_state = workflow.current_phase_state if workflow is not None else None
    child.waiting = pending_for_task(task)
    child.stale = _stale(child, manifest.task_key)


def _stale(child: LiveChild, live_key: str | None) -> list[str]:
    snap = child.snapshot
    if snap is None:
        return ["the manager has no snapshot of this child"]
    out = []
    pairs = (
        ("taskKey", snap.task_key, live_key),
        ("currentStatus", snap.current_status, child.current_status),
        ("latestRunStatus", snap.latest_run_status, child.latest_run_status),
    )
    for name, said, now in pairs:
        if said != now:
            out.append(f"the snapshot says {name} {said!r}, the project says {now!r}")
    return out
