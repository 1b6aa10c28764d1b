"""The discovery files: ``project.json``, the task catalog and the latest-task pointer.

Written when a task is created, when its run closes (its catalog status) and in
bulk (the demo); the catalog's row of a task is always taken from its manifest.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import layout, writes
from ..models import task as tm
from ..times import iso
from .common import SYSTEM_CLOCK, Clock, fresh_unless, update_json


def ensure_project_file(project_root: Path, project_id: str, clock: Clock = SYSTEM_CLOCK) -> None:
    """Write ``.okstra/project.json`` once (setup-equivalent registration)."""
    path = layout.project_json_path(project_root)
    if os.path.lexists(path):
        return
    value = tm.ProjectFile(schema_version="1.0", project_id=project_id, created_at=iso(clock.now())).dump()
    writes.ensure_root(project_root)
    writes.ensure_dir(project_root, layout.okstra_dir(project_root))
    writes.create_only_json(project_root, path, value)


def catalog_entry_for(
    manifest: tm.TaskManifest, updated_at: str, *, created_at: str | None = None
) -> tm.TaskCatalogEntry:
    """The catalog's view of a task, taken from its manifest (the catalog never disagrees with it)."""
    project_id, task_group, task_id = manifest.identity()
    return tm.TaskCatalogEntry(
        task_key=manifest.task_key,
        project_id=project_id,
        task_group=task_group,
        task_id=task_id,
        task_type=manifest.task_type,
        task_root_path=manifest.task_root_path,
        current_status=manifest.current_status,
        title=manifest.title,
        created_at=created_at,
        updated_at=updated_at,
    )


def upsert_catalog_entry(
    project_root: Path, entry: tm.TaskCatalogEntry, project_id: str, clock: Clock = SYSTEM_CLOCK
) -> None:
    """Add or refresh one task in ``task-catalog.json`` (keyed by ``taskKey``)."""
    path = layout.task_catalog_path(project_root)

    def mutate(current: tm.TaskCatalog | None) -> tm.TaskCatalog:
        doc = fresh_unless(current, lambda: tm.TaskCatalog(schema_version="1.0", project_id=project_id))
        for i, t in enumerate(doc.tasks):
            if t.task_key == entry.task_key:
                # The entry's values win; what else the row holds (keys of other writers too) stays.
                doc.tasks[i] = t.model_copy(update={name: value for name, value in entry if value is not None})
                break
        else:
            doc.tasks.append(entry)
        doc.updated_at = iso(clock.now())
        return doc

    update_json(project_root, path, tm.TaskCatalog, mutate)


def add_catalog_entries(
    project_root: Path, entries: list[tm.TaskCatalogEntry], project_id: str, clock: Clock = SYSTEM_CLOCK
) -> None:
    """Add many tasks to the catalog in one locked replace (bulk creation)."""
    path = layout.task_catalog_path(project_root)

    def mutate(current: tm.TaskCatalog | None) -> tm.TaskCatalog:
        doc = fresh_unless(current, lambda: tm.TaskCatalog(schema_version="1.0", project_id=project_id))
        known = {t.task_key for t in doc.tasks}
        doc.tasks.extend(e for e in entries if e.task_key not in known)
        doc.updated_at = iso(clock.now())
        return doc

    update_json(project_root, path, tm.TaskCatalog, mutate)


def point_latest(project_root: Path, task_key: str, task_root: Path, clock: Clock = SYSTEM_CLOCK) -> None:
    """Point ``latest-task.json`` at a task."""
    value = tm.LatestTask(
        schema_version="1.0",
        task_key=task_key,
        task_root_path=layout.rel(task_root, project_root),
        task_manifest_path=layout.rel(layout.task_manifest_path(task_root), project_root),
        updated_at=iso(clock.now()),
    )
    update_json(project_root, layout.latest_task_path(project_root), tm.LatestTask, lambda _cur: value)
