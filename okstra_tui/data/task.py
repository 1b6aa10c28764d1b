"""One task's overview: manifest, timeline, fix cycles, instruction-set and notes files, run dirs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from okstra_core.errors import LoadError
from okstra_core.store import RunDir, Task

if TYPE_CHECKING:
    from okstra_core.models.task import TaskManifest, Timeline
    from okstra_core.reading import JsonlDoc
    from okstra_core.stats import RunPoint


@dataclass(slots=True)
class TaskOverview:
    """Everything the task view shows, read in one go."""

    task: Task
    manifest: TaskManifest | LoadError
    timeline: Timeline | LoadError
    fix_cycles: JsonlDoc | LoadError | None
    instruction_files: list[Path]
    notes: list[Path]
    run_dirs: list[RunDir]
    #: The timeline's runs with their start and end times (for the picture; None: not read), and the notes.
    runs: list[RunPoint] | None
    run_notes: list[str]


def load_task(task: Task, *, with_runs: bool = True) -> TaskOverview:
    """Read the task's overview (milliseconds: a manifest, a timeline and a few listings).

    *with_runs* also reads each run's end time (its report's ``generatedAt``): one report per run, so a
    caller on the UI thread leaves it to a worker (:func:`load_runs`).
    """
    runs, notes = load_runs(task) if with_runs else (None, [])
    return TaskOverview(
        task,
        task.manifest,
        task.timeline,
        task.fix_cycles(),
        task.instruction_files(),
        task.notes(),
        task.run_dirs,
        runs,
        notes,
    )


def load_runs(task: Task) -> tuple[list[RunPoint], list[str]]:
    """The task's runs with their start and end times, and the notes on the times that could not serve."""
    from okstra_core.stats import task_runs

    return task_runs(task)
