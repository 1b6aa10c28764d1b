"""The demo project, made by driving the core's own write API through whole task lifecycles.

``generate(DIR)`` writes a small, rich project (4 task groups, 13 tasks, every
task type, every artifact family the contract names) with canned agent
outputs; ``generate(DIR, tasks=N)`` adds bulk tasks of the same shapes for
benchmarks. Times come from a stepping clock that follows a calendar (`schedule`), so two demos differ only in
their absolute paths.

Layout of the result:

* ``DIR/`` is the project root (``DIR/.okstra/``);
* ``DIR/.okstra-home/`` is the demo's manager home (use it as ``OKSTRA_HOME``);
* ``DIR/services/billing/`` is a second project registered with the manager.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import layout, writes
from ..errors import WriteRefused
from ..progress import Progress
from ..store import Project
from .bulk import add_bulk_tasks
from .content import MAX_TASKS, PROJECT_ID, START
from .decisions import OPEN_TASKS
from .lifecycles import RICH_TASKS, write_invocations, write_manager
from .runs import write_task_index
from .schedule import DemoClock

__all__ = ["MAX_TASKS", "PROJECT_ID", "START", "generate"]


def generate(
    target: Path | str,
    *,
    tasks: int | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    seed: int = 0,
    manager: bool = True,
) -> Path:
    """Write the demo project into *target* (which must be missing or empty) and return its root.

    *tasks*: total number of tasks; beyond the 13 rich tasks (the 5 of the ``checkout`` group, and
    ``payments/refund-ledger``, wait for a decision), bulk tasks of the same shapes are added.
    *progress*, when given, is called with ``(tasks written, tasks)`` as the work goes on.
    *seed* draws each bulk task's shape, day, start and pace (the same seed gives the same tree).
    *manager* False leaves out the demo's manager home and its second project (``services/billing``): the
    demo of many projects (:mod:`okstra_core.demo.projects`) registers the project with its own manager home.
    """
    root = Path(target)
    if root.exists() and any(root.iterdir()):
        raise WriteRefused(root, "demo target exists and is not empty")
    writes.ensure_root(root)
    root = root.resolve()
    clock = DemoClock(START)
    writes.ensure_dir(root, layout.okstra_dir(root))
    rich = len(RICH_TASKS) + len(OPEN_TASKS)
    extra = max(0, (tasks or 0) - rich)
    total = rich + extra
    for done, build in enumerate(RICH_TASKS, 1):
        build(root, clock)
        if progress is not None:
            progress(done, total)
    write_invocations(root, clock)
    if manager:
        write_manager(root, clock)
    for done, build in enumerate(OPEN_TASKS, len(RICH_TASKS) + 1):
        build(root, clock)
        if progress is not None:
            progress(done, total)
    for ref in Project(root).task_refs:
        write_task_index(root, ref.root)
    if extra:
        add_bulk_tasks(root, extra, jobs or os.cpu_count() or 1, progress, rich, seed)
    return root
