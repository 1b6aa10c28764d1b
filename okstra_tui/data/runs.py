"""The runs view's tree: run dirs, their categories and artifacts grouped by seq, and stage-shared files."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from okstra_core import layout, reading
from okstra_core.errors import LoadError
from okstra_core.names import ParsedName
from okstra_core.store import Artifact, RunDir, Task

if TYPE_CHECKING:
    from okstra_core.render.log_report import LogReport


@dataclass(frozen=True, slots=True)
class RunDirListing:
    """One run dir's artifacts by category (in folder order), its flat legacy files, unrecognised names and
    the migration archives under ``state/migrations/``."""

    run: RunDir
    by_category: dict[str, list[Artifact]]
    flat: list[tuple[Path, ParsedName]]
    unknown: list[Path]
    migrations: list[Path] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RunsListing:
    """Everything the runs tree lists for one task."""

    run_dirs: list[RunDirListing]
    carry: list[Path]
    consumers: Path | None
    problem: LoadError | None = None


def list_runs(task: Task) -> RunsListing:
    """List the task's run dirs and stage-shared files (folder listings; artifacts are not read)."""
    run_dirs = [
        RunDirListing(
            rd, {c: rd.artifacts(c) for c in rd.categories()}, rd.flat_legacy(), rd.unrecognised(), rd.migrations()
        )
        for rd in task.run_dirs
    ]
    consumers = layout.consumers_path(task.root)
    return RunsListing(
        run_dirs,
        [path for path, _loaded in task.carry()],
        consumers if os.path.lexists(consumers) else None,
        reading.unlistable(layout.runs_dir(task.root)),
    )


def seq_groups(artifacts: list[Artifact]) -> list[tuple[int | None, list[Artifact]]]:
    """Artifacts of one category grouped by seq, in seq order."""
    groups: dict[int | None, list[Artifact]] = {}
    for art in artifacts:
        groups.setdefault(art.seq, []).append(art)
    return sorted(groups.items(), key=lambda item: (item[0] is not None, item[0] or 0))


def compute_log_report(run_path: Path) -> LogReport | str:
    """The core's log report of one run dir, or a one-line reason there is none."""
    from okstra_core.render.log_report import log_report

    try:
        return log_report(run_path)
    except Exception as exc:  # a broken tree must not take the view down
        return f"log report failed: {exc}"
