"""The time the store records for an indexed file: what the search's ``since:`` filter compares.

Every time filter means the time the store records (``docs/decisions.md``,
"Time filters"); a file's modification time only stands in where the store
records none. For the files of one task that is, first to last:

- a stamp in the file's own name (a design-prep input, a superseded
  user-response, a note): the moment it was written;
- for any other file of a run, the ``runDateTimeSegment`` of the execution it
  belongs to, grouped as the read side groups them
  (:meth:`okstra_core.store.RunDir.executions`), folder artifacts with every
  file inside them;
- nothing for the rest (the instruction set, the manifest, the history): the
  index keeps their modification time.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from .. import layout, names, times
from ..store import Artifact, Project, TaskRef


def _ns(moment: dt.datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1_000_000) * 1000


def _files_of(art: Artifact, root: Path) -> list[str]:
    """The project-relative paths of *art*: itself, or every file under it when it is a folder (only a kind read
    as a folder is looked at for one: any other names a file)."""
    if art.spec.reader != "folder" or not art.path.is_dir():
        return [layout.rel(art.path, root)]
    out: list[str] = []
    for folder, _, files in os.walk(art.path):
        out.extend(layout.rel(os.path.join(folder, name), root) for name in files)
    return out


def task_times(root: Path, task_folder: str) -> dict[str, int]:
    """The recorded time (nanoseconds since the epoch) of each file of the task in *task_folder*
    (``<group>/<task-id>`` under ``.okstra/tasks/``) that has one, by project-relative path."""
    group, _, task_id = task_folder.partition("/")
    project = Project(root)
    task = TaskRef(project, group, task_id, layout.tasks_dir(root) / group / task_id).open()
    out: dict[str, int] = {}
    for run_dir in task.run_dirs:
        for execution in run_dir.executions():
            at = _ns(times.parse_time(execution.segment))
            if at is None:
                continue
            for art in execution.artifacts:
                for rel in _files_of(art, root):
                    out[rel] = at
        for art in run_dir.artifacts():
            stamped = _ns(times.parse_stamp(art.name.stamp)) if art.name.stamp else None
            if stamped is not None:
                out[layout.rel(art.path, root)] = stamped
    for path in task.notes():
        note = names.parse_note(path.name)
        stamped = _ns(times.parse_stamp(note.stamp)) if note is not None and note.stamp else None
        if stamped is not None:
            out[layout.rel(path, root)] = stamped
    return out
