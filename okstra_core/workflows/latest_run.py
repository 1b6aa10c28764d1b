"""A task's latest run as its manifest records it: what the notices compare between two moments.

The inbox reads each task's manifest for its decisions, so its per-task facts in the store index carry this too
(:func:`okstra_core.workflows.inbox.kept_runs`), and :mod:`okstra_core.workflows.pulse` compares two readings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import layout, reading
from ..store import Task


@dataclass(frozen=True, slots=True)
class RunState:
    """A task's latest run as its manifest records it."""

    path: str | None  # latestRunPath: the run dir
    status: str | None  # latestRunStatus
    report: str | None  # latestReportRecordPath: tells a rerun in the same run dir from the run before it
    task_root: Path

    @property
    def label(self) -> str:
        """The run dir from its task type on (``analysis``, ``implementation/stage-2``), else "latest run"."""
        if not self.path:
            return "latest run"
        parts = Path(self.path).parts
        runs = layout.RUNS_DIR
        return "/".join(parts[parts.index(runs) + 1 :]) if runs in parts[:-1] else parts[-1]


#: A task's latest run as a fact keeps it: its task key, then the run dir, status and report record path.
KeptRun = tuple[str, str | None, str | None, str | None]


def kept_run(task: Task) -> KeptRun | None:
    """*task*'s latest run as its manifest records it, keyed by its task key (None: the manifest is unreadable)."""
    manifest = task.manifest
    if isinstance(manifest, reading.LoadError):
        return None
    return manifest.task_key, manifest.latest_run_path, manifest.latest_run_status, manifest.latest_report_record_path
