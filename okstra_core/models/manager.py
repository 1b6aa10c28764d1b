"""Manager-owned cross-project state under ``~/.okstra/managers/<manager-id>/``.

The contract spells the registration fields of ``projects.json`` (projectId,
projectRoot, role, tags) and the child ``taskKey``; everything else is this
project's spelling and optional on read.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from .base import ADDED, Model, TaskKeyStr, Timestamp


class ManagerFile(Model):
    """``manager.json``: identity and schema version."""

    schema_version: Annotated[str | None, ADDED] = None
    manager_id: Annotated[str | None, ADDED] = None
    title: Annotated[str | None, ADDED] = None
    created_at: Annotated[Timestamp | None, ADDED] = None


class RegisteredProject(Model):
    """A registered project: ``projectRoot`` "must be an existing directory"."""

    project_id: str
    project_root: str
    role: str | None = None
    tags: list[str] = Field(default_factory=list)


class ProjectsFile(Model):
    """``projects.json``."""

    schema_version: Annotated[str | None, ADDED] = None
    projects: list[RegisteredProject] = Field(default_factory=list)


class ManagerTaskManifest(Model):
    """``task-groups/<group>/<task>/manifest.json``: the manager-owned plan."""

    schema_version: Annotated[str | None, ADDED] = None
    task_key: TaskKeyStr | None = None
    task_group: Annotated[str | None, ADDED] = None
    task_id: Annotated[str | None, ADDED] = None
    title: Annotated[str | None, ADDED] = None
    plan: Annotated[Any, ADDED] = None
    created_at: Annotated[Timestamp | None, ADDED] = None


class ChildAssignment(Model):
    """A child assignment; the child task is named by ``childTaskId`` or by its ``childTaskKey`` / ``taskKey``."""

    project_id: Annotated[str | None, ADDED] = None
    child_task_id: Annotated[str | None, ADDED] = None
    child_task_key: Annotated[TaskKeyStr | None, ADDED] = None
    task_key: TaskKeyStr | None = None
    status: Annotated[str | None, ADDED] = None

    def child_id(self) -> str | None:
        """The child task id: stated, or the last part of the child's task key."""
        if self.child_task_id is not None:
            return self.child_task_id
        key = self.child_task_key or self.task_key
        return key.rsplit(":", 1)[1] if key else None

    def child_project(self) -> str | None:
        """The child's project id: stated, or the first part of the child's task key."""
        if self.project_id is not None:
            return self.project_id
        key = self.child_task_key or self.task_key
        return key.split(":", 1)[0] if key else None


class ChildrenFile(Model):
    schema_version: Annotated[str | None, ADDED] = None
    children: list[ChildAssignment] = Field(default_factory=list)


class Directive(Model):
    """One line of ``directives.jsonl``."""

    at: Annotated[Timestamp | None, ADDED] = None
    scope: Annotated[str | None, ADDED] = None
    project_id: str | None = None
    text: Annotated[str | None, ADDED] = None


class ProjectSnapshot(Model):
    task_key: Annotated[TaskKeyStr | None, ADDED] = None
    current_status: Annotated[str | None, ADDED] = None
    latest_run_status: Annotated[str | None, ADDED] = None
    synced_at: Annotated[Timestamp | None, ADDED] = None


class SnapshotsFile(Model):
    """Read-side snapshot imported by ``task sync``; never the source of truth."""

    schema_version: Annotated[str | None, ADDED] = None
    projects: Annotated[dict[str, ProjectSnapshot], ADDED] = Field(default_factory=dict)


class ManagerEvent(Model):
    """One line of ``events.jsonl``."""

    at: Annotated[Timestamp | None, ADDED] = None
    event: Annotated[str | None, ADDED] = None
    detail: Annotated[dict[str, Any], ADDED] = Field(default_factory=dict)
