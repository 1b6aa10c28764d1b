"""Manager-owned cross-project state under ``<okstra home>/managers/<manager-id>/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import layout, writes
from ..errors import WriteRefused
from ..models import manager as mm
from ..times import iso
from .common import SYSTEM_CLOCK, Clock, fresh_unless, update_json
from .discovery import ensure_project_file


def create_manager(home: Path, manager_id: str, title: str, clock: Clock = SYSTEM_CLOCK) -> Path:
    folder = layout.manager_dir(home, manager_id)
    writes.ensure_root(home)
    writes.ensure_dir(home, folder)
    if not (folder / layout.MANAGER_INFO).exists():
        writes.create_only_json(
            home,
            folder / layout.MANAGER_INFO,
            mm.ManagerFile(
                schema_version="1.0", manager_id=manager_id, title=title, created_at=iso(clock.now())
            ).dump(),
        )
    if not (folder / layout.MANAGER_PROJECTS).exists():
        writes.create_only_json(
            home, folder / layout.MANAGER_PROJECTS, mm.ProjectsFile(schema_version="1.0", projects=[]).dump()
        )
    return folder


def register_project(
    home: Path,
    manager_id: str,
    project_id: str,
    project_root: Path,
    *,
    role: str = "member",
    tags: list[str] | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> None:
    """Register a project; setup-equivalent registration only when ``.okstra/project.json`` is absent."""
    if not project_root.is_dir():
        raise WriteRefused(project_root, "projectRoot must be an existing directory")
    if not layout.project_json_path(project_root).exists():
        ensure_project_file(project_root, project_id, clock)
    entry = mm.RegisteredProject(project_id=project_id, project_root=str(project_root), role=role, tags=tags or [])

    def add(current: mm.ProjectsFile | None) -> mm.ProjectsFile:
        doc = fresh_unless(current, lambda: mm.ProjectsFile(schema_version="1.0"))
        doc.projects = [p for p in doc.projects if p.project_id != project_id] + [entry]
        return doc

    update_json(home, layout.manager_dir(home, manager_id) / layout.MANAGER_PROJECTS, mm.ProjectsFile, add)


def create_manager_task(
    home: Path,
    manager_id: str,
    task_key: str,
    title: str,
    plan: list[str],
    children: list[mm.ChildAssignment],
    clock: Clock = SYSTEM_CLOCK,
) -> Path:
    key = layout.TaskKey.parse(task_key)
    folder = layout.manager_task_dir(home, manager_id, key.task_group, key.task_id)
    writes.create_only_json(
        home,
        folder / layout.MANAGER_TASK_MANIFEST,
        mm.ManagerTaskManifest(
            schema_version="1.0",
            task_key=task_key,
            task_group=key.task_group,
            task_id=key.task_id,
            title=title,
            plan=plan,
            created_at=iso(clock.now()),
        ).dump(),
    )
    writes.create_only_json(
        home, folder / layout.MANAGER_CHILDREN, mm.ChildrenFile(schema_version="1.0", children=children).dump()
    )
    add_event(home, folder, "task-created", {"taskKey": task_key}, clock)
    return folder


def add_event(home: Path, task_folder: Path, event: str, detail: dict[str, Any], clock: Clock = SYSTEM_CLOCK) -> None:
    writes.append_jsonl(
        home,
        task_folder / layout.MANAGER_EVENTS,
        mm.ManagerEvent(at=iso(clock.now()), event=event, detail=detail).dump(),
    )


def add_directive(
    home: Path, task_folder: Path, scope: str, text: str, project_id: str | None = None, clock: Clock = SYSTEM_CLOCK
) -> None:
    writes.append_jsonl(
        home,
        task_folder / layout.MANAGER_DIRECTIVES,
        mm.Directive(at=iso(clock.now()), scope=scope, project_id=project_id, text=text).dump(),
    )


def write_snapshots(home: Path, task_folder: Path, snapshots: dict[str, mm.ProjectSnapshot]) -> None:
    value = mm.SnapshotsFile(schema_version="1.0", projects=snapshots)
    update_json(home, task_folder / layout.MANAGER_SNAPSHOTS, mm.SnapshotsFile, lambda _c: value)


def write_child_context(home: Path, task_folder: Path, project_id: str, child_task_id: str, text: str) -> Path:
    path = task_folder / layout.MANAGER_CHILD_CONTEXT / layout.child_context_name(project_id, child_task_id)
    writes.create_only(home, path, text.encode("utf-8"))
    return path
