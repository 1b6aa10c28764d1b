"""What the layout pass finds in a task: its run dirs and their artifacts, ready for the topic rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import names
from ...models.run import RunManifest
from ...models.task import TaskManifest
from ..unit import Entry, Unit

if TYPE_CHECKING:
    from .project_rules import CatalogEntryKey


@dataclass(slots=True)
class Artifact:
    """An artifact whose name parsed in its category folder (or flat, for legacy files)."""

    entry: Entry
    name: names.ParsedName
    flat: bool = False

    @property
    def path(self) -> Path:
        return self.entry.path

    @property
    def kind(self) -> str:
        return self.name.kind


@dataclass(slots=True)
class RunScope:
    """A resolved run dir: ``runs/<task-type>/`` or ``runs/<task-type>/stage-<n>/``."""

    path: Path
    task_type: str
    stage: int | None
    artifacts: list[Artifact] = field(default_factory=list)
    #: Folders of ``state/`` that are not artifacts but have a contract role (``migrations/``).
    migrations: Path | None = None
    #: Every validated JSON artifact that records a ``runDateTimeSegment``, with it (set by the document pass).
    segments: list[tuple[Artifact, str]] = field(default_factory=list)
    #: The run manifests that validate, found once (see :meth:`TaskScope.run_manifests`).
    manifests: list[tuple[Artifact, RunManifest]] | None = None

    def of_kind(self, *kinds: str) -> list[Artifact]:
        return [a for a in self.artifacts if a.kind in kinds]

    def find(self, path: Path) -> Artifact | None:
        text = str(path)  # listed entries' texts are normalised as str(Path) is: no Path per artifact
        for a in self.artifacts:
            if a.entry.text == text:
                return a
        return None


@dataclass(slots=True)
class TaskScope:
    """One task bundle being checked."""

    unit: Unit
    root: Path
    entry: CatalogEntryKey | None
    manifest: TaskManifest | None = None
    task_key: str | None = None
    runs: list[RunScope] = field(default_factory=list)
    carry: list[Entry] = field(default_factory=list)
    consumers: Path | None = None
    #: The read side's view of this task (see ``direction.open_task``), opened on first use.
    store_task: Any = None
    #: How a path the task manifest records reads in this folder (a writer uses the slug-named folder).
    here: Callable[[str], str] = str

    @property
    def rel(self) -> str:
        return self.unit.rel(self.root)

    def run_manifests(self, run: RunScope) -> list[tuple[Artifact, RunManifest]]:
        """The run manifests of *run* that validate (found once: the run's artifacts are all listed by then)."""
        if run.manifests is None:
            run.manifests = []
            for art in run.of_kind("run-manifest"):
                doc = self.unit.doc(art.path, RunManifest)
                if doc is not None:
                    run.manifests.append((art, doc))
        return run.manifests

    def manifest_for_segment(self, run: RunScope, segment: str | None) -> RunManifest | None:
        """The run manifest of the execution stamped *segment* (the cross-category identifier)."""
        found = [m for _, m in self.run_manifests(run) if m.run_date_time_segment == segment]
        return found[-1] if found else None
