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


def load_task(task: Task) -> TaskOverview:
    """Read the task's overview (milliseconds: a manifest, a timeline and a few listings)."""
    return TaskOverview(
        task, task.manifest, task.timeline, task.fix_cycles(), task.instruction_files(), task.notes(), task.run_dirs
    )
