"""Search every project of the registry (:mod:`okstra_core.projects`): one full-text index per project.

Each project is searched as ``okstra search PROJECT`` searches it, through its
own index in the user's cache folder; the hits of all are merged best first
(the search engine's rank, then the newest file). A project that cannot be
read, or whose index cannot be used, gives one line, never an exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import layout
from ..projects import ProjectEntry
from .index import Hit, Results, SearchError, SearchIndex
from .query import Query


@dataclass(slots=True)
class ProjectHits:
    """One project's results, or the one line saying why it could not be searched (then *results* is None)."""

    entry: ProjectEntry
    results: Results | None
    problem: str | None = None
    notices: list[str] = field(default_factory=list)


def search_project(
    entry: ProjectEntry,
    cache_dir: Path,
    query: Query,
    *,
    limit: int,
    include_logs: bool = False,
    jobs: int = 1,
    reindex: bool = False,
) -> ProjectHits:
    """The first *limit* hits of *query* in the project of *entry*, its index brought up to date first."""
    if not entry.readable:
        return ProjectHits(entry, None, f"{entry.root}: {entry.reason or entry.health}")
    if not layout.store_is_folder(entry.root):
        return ProjectHits(entry, None, f"{entry.root}: no .okstra/ store any more (it was there when listed)")
    try:
        index = SearchIndex(entry.root, cache_dir, include_logs=include_logs, jobs=jobs)
        with index:
            if reindex:
                index.rebuild()
            index.update()
            return ProjectHits(entry, index.search(query, limit=limit), notices=list(index.notices))
    except SearchError as exc:
        return ProjectHits(entry, None, str(exc))
    except OSError as exc:  # the root vanished while it was searched
        return ProjectHits(entry, None, f"{entry.root}: cannot be searched ({exc.strerror or exc})")


def merged(per_project: Sequence[ProjectHits], limit: int) -> list[tuple[ProjectEntry, Hit]]:
    """The best *limit* hits of all projects: by rank, then the newest file, then registry order and path."""
    order = {id(ph.entry): n for n, ph in enumerate(per_project)}
    every = [(ph.entry, hit) for ph in per_project if ph.results is not None for hit in ph.results.hits]
    every.sort(key=lambda pair: (pair[1].score, -pair[1].modified_ns, order[id(pair[0])], pair[1].path))
    return every[:limit]


def total(per_project: Sequence[ProjectHits]) -> int:
    """How many sections match in all the projects searched."""
    return sum(ph.results.total for ph in per_project if ph.results is not None)
