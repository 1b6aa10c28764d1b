"""The decisions waiting in every project of the registry (:mod:`okstra_core.projects`).

Each project is read on its own, by the one owner of the inbox
(:func:`okstra_core.workflows.inbox.read_inbox`), inside its own real root;
a project that cannot be read (its health says so, or its root went away or
changed since the registry looked) gives one line instead of a list, never an
exception. An item of the whole is a project's item with the project named:
``project`` (its id) and ``projectRoot``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import reading
from ..errors import OkstraError
from ..projects import ProjectEntry
from ..store import Project
from .inbox import Inbox, PendingDecision, read_inbox
from .inbox_items import DecisionRow, KeptInbox

if TYPE_CHECKING:
    from ..store_index import StoreIndex


@dataclass(frozen=True, slots=True)
class ProjectInbox:
    """One project's inbox, or the one line saying why it could not be read (then :attr:`inbox` is None). A fresh
    inbox kept by the project's store index may be its rows (:class:`KeptInbox`: all that the output shows)."""

    entry: ProjectEntry
    inbox: Inbox | KeptInbox | None
    problem: str | None = None

    @property
    def complete(self) -> bool:
        return self.inbox is not None and self.inbox.complete

    def item_json(self, decision: PendingDecision | DecisionRow) -> dict[str, Any]:
        """The ``okstra inbox --json`` item of *decision*, with ``project`` and ``projectRoot``."""
        return project_item(self.entry, decision)


def project_item(entry: ProjectEntry, decision: PendingDecision | DecisionRow) -> dict[str, Any]:
    """A project's inbox item naming its project (``project``: the id, ``projectRoot``: the real root)."""
    return {**decision.to_json(), "project": entry.project_id, "projectRoot": str(entry.root)}


def open_entry(entry: ProjectEntry) -> Project | str:
    """The project of *entry*, opened at its real root, or one line saying why it cannot be read."""
    if not entry.readable:
        return f"{entry.root}: {entry.reason or entry.health}"
    opened = Project.open(entry.root)
    if isinstance(opened, reading.LoadError):
        return f"{opened.path}: {opened.reason} (it was there when the projects were listed)"
    real = Path(os.path.realpath(opened.root))
    if real != entry.root:  # replaced by a symlink since the registry looked: never read elsewhere
        return f"{entry.root}: now leads to {real}; not read"
    return Project(real)


def read_project_inbox(entry: ProjectEntry, index: StoreIndex | None = None) -> ProjectInbox:
    """The inbox of one registry entry (through *index*, the project's store index, when given)."""
    project = open_entry(entry)
    if isinstance(project, str):
        return ProjectInbox(entry, None, project)
    try:
        return ProjectInbox(entry, read_inbox(project, index))
    except (OkstraError, OSError) as exc:  # the root vanished between the look and the read
        return ProjectInbox(entry, None, f"{entry.root}: cannot be read ({exc})")


def read_all_inboxes(
    entries: Sequence[ProjectEntry],
    read: Callable[[ProjectEntry], ProjectInbox] = read_project_inbox,
) -> list[ProjectInbox]:
    """The inbox of every entry, in registry order (*read* reads one: through its store index, say)."""
    return [read(entry) for entry in entries]


def all_items(inboxes: Sequence[ProjectInbox]) -> list[dict[str, Any]]:
    """Every item of every project that could be read, each naming its project, in registry order."""
    return [pi.item_json(d) for pi in inboxes if pi.inbox is not None for d in pi.inbox.items]
