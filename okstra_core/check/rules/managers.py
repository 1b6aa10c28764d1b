"""Manager-owned cross-project state under ``$OKSTRA_HOME/managers/<manager-id>/``."""

from __future__ import annotations

import os
from pathlib import Path

from ... import layout, reading
from ...models import manager as mm
from ...models.task import ProjectFile
from ..catalog import (
    CHILD_CONTEXT_MISMATCH,
    CHILD_PROJECT_UNREGISTERED,
    MANAGER_IDENTITY_MISMATCH,
    MANAGER_ROOT_MISSING,
    NON_CANONICAL_SLUG,
    REGISTERED_PROJECT_ID_MISMATCH,
    SCHEMA_MISMATCH,
    UNNAMED_ENTRY,
)
from ..unit import Unit

_MANAGER_FILES = {layout.MANAGER_INFO: "file", layout.MANAGER_PROJECTS: "file", layout.MANAGER_TASK_GROUPS: "dir"}
_TASK_FILES = {
    layout.MANAGER_TASK_MANIFEST: "file",
    layout.MANAGER_CHILDREN: "file",
    layout.MANAGER_DIRECTIVES: "file",
    layout.MANAGER_SNAPSHOTS: "file",
    layout.MANAGER_EVENTS: "file",
    layout.MANAGER_CHILD_CONTEXT: "dir",
}


def check_managers(unit: Unit, home: Path) -> None:
    """Every manager folder under *home*."""
    for m in unit.entries(layout.managers_dir(home)):
        if m.kind != "dir":
            if m.kind == "file":
                unit.report(UNNAMED_ENTRY, m.path, "not part of the manager contract; not read")
            continue
        unit.guard("manager", m.path, _check_manager, unit, m.path)
    inside = str(home) + os.sep
    unit.read_remaining(sorted(p for p in unit.files if p.startswith(inside)))


def _unknown(unit: Unit, folder: Path, allowed: dict[str, str]) -> None:
    for e in unit.entries(folder):
        if e.kind != "bad" and allowed.get(e.name) != e.kind:
            unit.report(UNNAMED_ENTRY, e.path, "not part of the manager contract; not read")


def _check_manager(unit: Unit, folder: Path) -> None:
    if not layout.is_canonical_slug(folder.name):
        unit.report(NON_CANONICAL_SLUG, folder, layout.not_a_slug("manager folder", folder.name))
    _unknown(unit, folder, _MANAGER_FILES)
    info_path = folder / layout.MANAGER_INFO
    if unit.entry(info_path) is None:
        unit.report(SCHEMA_MISMATCH, info_path, "manager.json is missing")
    else:
        info = unit.doc(info_path, mm.ManagerFile)
        if info is not None and info.manager_id is not None and layout.slug(info.manager_id) != folder.name:
            unit.report(
                MANAGER_IDENTITY_MISMATCH,
                info_path,
                f"managerId {info.manager_id!r} does not slug to the folder name {folder.name!r}",
            )
    projects_path = folder / layout.MANAGER_PROJECTS
    registered: set[str] | None = None
    if unit.entry(projects_path) is not None:
        projects = unit.doc(projects_path, mm.ProjectsFile)
        if projects is not None:
            registered = {p.project_id for p in projects.projects}
            for i, p in enumerate(projects.projects):
                if not os.path.isabs(p.project_root) or not unit.is_dir_outside(p.project_root):
                    unit.report(
                        MANAGER_ROOT_MISSING,
                        projects_path,
                        f"projects[{i}] ({p.project_id}): projectRoot {p.project_root!r} is not an existing directory",
                    )
                else:
                    _own_project_id(unit, projects_path, i, p)
    for group in unit.entries(folder / layout.MANAGER_TASK_GROUPS):
        if group.kind != "dir":
            continue
        for task in unit.entries(group.path):
            if task.kind == "dir":
                _check_task(unit, task.path, group.name, registered)


def _own_project_id(unit: Unit, projects_path: Path, index: int, project: mm.RegisteredProject) -> None:
    """A registered project id is the id the project's own ``.okstra/project.json`` records, when it records one."""
    root = Path(project.project_root)
    own_path = layout.project_json_path(root)
    unit.looked_at(str(own_path))  # there or not, what this finding rests on
    if not os.path.isfile(own_path):
        return  # registration happens exactly when project.json is absent: nothing to hold the id against
    with unit.owner():  # this project's own project.json is already read and validated
        own = reading.load_model(own_path, ProjectFile, root=root)
    if isinstance(own, reading.LoadError) or own.project_id is None or own.project_id == project.project_id:
        return  # an unreadable project.json is that project's own check's to report
    unit.report(
        REGISTERED_PROJECT_ID_MISMATCH,
        projects_path,
        f"projects[{index}] registers projectId {project.project_id!r}, but {own_path} records "
        f"projectId {own.project_id!r}",
    )


def _check_task(unit: Unit, folder: Path, group_folder: str, registered: set[str] | None) -> None:
    _unknown(unit, folder, _TASK_FILES)
    manifest_path = folder / layout.MANAGER_TASK_MANIFEST
    if unit.entry(manifest_path) is not None:
        man = unit.doc(manifest_path, mm.ManagerTaskManifest)
        key_parts = man.task_key.split(":", 2) if man is not None and man.task_key else [None, None, None]
        group = man.task_group or key_parts[1] if man is not None else None
        task = man.task_id or key_parts[2] if man is not None else None
        if (
            group is not None
            and task is not None
            and (layout.slug(group) != group_folder or layout.slug(task) != folder.name)
        ):
            unit.report(
                MANAGER_IDENTITY_MISMATCH,
                manifest_path,
                f"task group/id {group!r}/{task!r} slug to {layout.slug(group)}/{layout.slug(task)}, "
                f"not to the folder {group_folder}/{folder.name}",
            )
    expected: set[str] | None = None
    children_state = "missing"
    children_path = folder / layout.MANAGER_CHILDREN
    if unit.entry(children_path) is not None:
        children = unit.doc(children_path, mm.ChildrenFile)
        children_state = "invalid" if children is None else "read"
        if children is not None:
            expected = set()
            for i, c in enumerate(children.children):
                project, child = c.child_project(), c.child_id()
                if registered is not None and project is not None and project not in registered:
                    listing = ", ".join(sorted(registered)[:8]) or "none"
                    unit.report(
                        CHILD_PROJECT_UNREGISTERED,
                        children_path,
                        f"children[{i}] belongs to project {project!r}, which {layout.MANAGER_PROJECTS} of this "
                        f"manager does not register (it registers: {listing})",
                    )
                if project is not None and child is not None:
                    expected.add(layout.child_context_name(project, child))
    if unit.entry(folder / layout.MANAGER_SNAPSHOTS) is not None:
        unit.doc(folder / layout.MANAGER_SNAPSHOTS, mm.SnapshotsFile)
    if unit.entry(folder / layout.MANAGER_DIRECTIVES) is not None:
        unit.jsonl(folder / layout.MANAGER_DIRECTIVES, mm.Directive)
    if unit.entry(folder / layout.MANAGER_EVENTS) is not None:
        unit.jsonl(folder / layout.MANAGER_EVENTS, mm.ManagerEvent)
    for ctx in unit.entries(folder / layout.MANAGER_CHILD_CONTEXT):
        if ctx.kind != "file":
            continue
        if expected is None:
            if children_state == "missing":
                unit.report(
                    CHILD_CONTEXT_MISMATCH,
                    ctx.path,
                    "child context, but the task has no children.json listing its child",
                )
            # An unreadable or invalid children.json is reported on that file: one root cause, one finding.
        elif ctx.name not in expected:
            listed = ", ".join(sorted(expected)) or "none"
            unit.report(
                CHILD_CONTEXT_MISMATCH,
                ctx.path,
                f"{ctx.name!r} is not <project-id>-<child-task-id>.md of any child in children.json "
                f"(expected one of: {listed})",
            )
