"""Manager-owned cross-project state under ``~/.okstra/managers/<manager-id>/``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import Model, TaskKeyStr, Timestamp


class ManagerFile(Model):
    """``manager.json``: identity and schema version."""

    schema_version: str
    manager_id: str
    title: str = ""
    created_at: Timestamp | None = None


class RegisteredProject(Model):
    project_id: str
    project_root: str
    role: str = "member"
    tags: list[str] = Field(default_factory=list)


class ProjectsFile(Model):
    """``projects.json``."""

    schema_version: str
    projects: list[RegisteredProject]


class ManagerTaskManifest(Model):
    """``task-groups/<group>/<task>/manifest.json``: the manager-owned plan."""

    schema_version: str
    task_key: TaskKeyStr
    task_group: str
    task_id: str
    title: str = ""
    plan: list[str] = Field(default_factory=list)
    created_at: Timestamp | None = None


class ChildAssignment(Model):
    project_id: str
    child_task_id: str
    child_task_key: TaskKeyStr
    status: str = "assigned"


class ChildrenFile(Model):
    schema_version: str
    children: list[ChildAssignment]


class Directive(Model):
    """One line of ``directives.jsonl``."""

    at: Timestamp
    scope: Literal["shared", "project"]
    project_id: str | None = None
    text: str


class ProjectSnapshot(Model):
    task_key: TaskKeyStr
    current_status: str
    latest_run_status: str | None = None
    synced_at: Timestamp


class SnapshotsFile(Model):
    """Read-side snapshot imported by ``task sync``; never the source of truth."""

    schema_version: str
    projects: dict[str, ProjectSnapshot]


class ManagerEvent(Model):
    """One line of ``events.jsonl``."""

    at: Timestamp
    event: str
    detail: dict[str, Any] = Field(default_factory=dict)
