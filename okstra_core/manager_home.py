"""The read side of the manager home (``$OKSTRA_HOME`` or ``~/.okstra``): managers and their tasks.

Every read is contained in the home, as the project's reads are in the project.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import layout, reading
from .errors import LoadError
from .models import manager as mmodels


def _listdir(path: Path) -> list[str]:
    """The names in *path* (:func:`okstra_core.reading.list_folder`); a folder that cannot be listed reads as empty."""
    listed = reading.list_folder(path)
    return [] if isinstance(listed, LoadError) else listed


@dataclass(slots=True)
class ManagerTask:
    """A manager task folder; every read is contained in the manager home *home*."""

    folder: Path
    task_group: str
    task_id: str
    home: Path

    def manifest(self) -> mmodels.ManagerTaskManifest | LoadError:
        return reading.load_model(
            self.folder / layout.MANAGER_TASK_MANIFEST, mmodels.ManagerTaskManifest, root=self.home
        )

    def children(self) -> mmodels.ChildrenFile | LoadError:
        return reading.load_model(self.folder / layout.MANAGER_CHILDREN, mmodels.ChildrenFile, root=self.home)

    def snapshots(self) -> mmodels.SnapshotsFile | LoadError:
        return reading.load_model(self.folder / layout.MANAGER_SNAPSHOTS, mmodels.SnapshotsFile, root=self.home)

    def events(self) -> reading.JsonlDoc | LoadError:
        return reading.load_jsonl(self.folder / layout.MANAGER_EVENTS, mmodels.ManagerEvent, root=self.home)

    def directives(self) -> reading.JsonlDoc | LoadError:
        return reading.load_jsonl(self.folder / layout.MANAGER_DIRECTIVES, mmodels.Directive, root=self.home)

    def child_contexts(self) -> list[Path]:
        folder = self.folder / layout.MANAGER_CHILD_CONTEXT
        return [folder / n for n in _listdir(folder)]

    def read_child_context(self, path: Path) -> str | LoadError:
        """The text of one of :meth:`child_contexts`, contained in the manager home."""
        return reading.read_text(path, root=self.home)


@dataclass(slots=True)
class Manager:
    """A manager folder under the manager home *home*; every read is contained in that home."""

    folder: Path
    home: Path

    @property
    def manager_id(self) -> str:
        return self.folder.name

    def info(self) -> mmodels.ManagerFile | LoadError:
        return reading.load_model(self.folder / layout.MANAGER_INFO, mmodels.ManagerFile, root=self.home)

    def projects(self) -> mmodels.ProjectsFile | LoadError:
        return reading.load_model(self.folder / layout.MANAGER_PROJECTS, mmodels.ProjectsFile, root=self.home)

    def tasks(self) -> list[ManagerTask]:
        base = self.folder / layout.MANAGER_TASK_GROUPS
        out = []
        for group in _listdir(base):
            for task_id in _listdir(base / group):
                if (base / group / task_id).is_dir():
                    out.append(ManagerTask(base / group / task_id, group, task_id, self.home))
        return out


def list_managers(home: Path) -> list[Manager]:
    """The managers under *home* (the manager home: ``$OKSTRA_HOME`` or ``~/.okstra``)."""
    base = layout.managers_dir(home)
    return [Manager(base / n, home) for n in _listdir(base) if (base / n).is_dir()]
