"""Locating and loading report data for workflows (the approved snapshot, option reports)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import layout, names, reading
from ..digests import sha256_bytes
from ..errors import WriteRefused
from ..models.report import FinalReportV2, FinalReportV3
from ..store import Artifact, Task

Report = FinalReportV3 | FinalReportV2


@dataclass(frozen=True)
class LoadedReport:
    """Report data with the exact bytes it was read from."""

    artifact: Artifact
    model: Report
    data: bytes

    @property
    def path(self) -> Path:
        return self.artifact.path

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.data)

    @property
    def stem(self) -> str:
        return names.report_stem(self.artifact.name.filename)

    def rel(self) -> str:
        return layout.rel(self.path, self.artifact.run.task.project.root)


def load_report_artifact(art: Artifact) -> LoadedReport | reading.LoadError:
    """Load one ``final-report-*.data.json`` keeping its bytes (for digests)."""
    root = art.run.task.project.root
    data = reading.read_bytes(art.path, root=root)
    if isinstance(data, reading.LoadError):
        return data
    # A reader that already validated these bytes (the checker) lends its model.
    known = reading.known_model(art.path, FinalReportV3) or reading.known_model(art.path, FinalReportV2)
    if known is not None:
        return LoadedReport(art, known, data)
    text = reading.decode_text(art.path, data)
    if isinstance(text, reading.LoadError):
        return text
    value = reading.parse_json(art.path, text)
    if isinstance(value, reading.LoadError):
        return value
    model = reading.report_model_for(value)
    if isinstance(model, str):
        return reading.LoadError(art.path, model)
    loaded = reading.validate(art.path, value, model)
    if isinstance(loaded, reading.LoadError):
        return loaded
    return LoadedReport(art, loaded, data)


def latest_report(task: Task, task_type: str) -> Artifact | None:
    """The newest report data of *task_type* across the task's run dirs of that type."""
    found = [a for rd in task.run_dirs if rd.task_type == task_type for a in rd.of_kind("final-report-data")]
    if not found:
        return None
    return max(found, key=lambda a: (a.run.stage or 0, a.seq or 0))


def require_latest(task: Task, task_type: str) -> LoadedReport:
    art = latest_report(task, task_type)
    if art is None:
        raise WriteRefused(task.root, f"task has no {task_type} report")
    loaded = load_report_artifact(art)
    if isinstance(loaded, reading.LoadError):
        raise WriteRefused(loaded.path, loaded.reason)
    return loaded


def report_by_path(task: Task, path: Path) -> LoadedReport:
    """The report data at *path* (must be a report artifact of this task)."""
    real = path.resolve()
    for rd in task.run_dirs:
        for art in rd.of_kind("final-report-data"):
            if art.path.resolve() == real:
                loaded = load_report_artifact(art)
                if isinstance(loaded, reading.LoadError):
                    raise WriteRefused(loaded.path, loaded.reason)
                return loaded
    raise WriteRefused(path, "is not a final-report data file of this task")
