"""Writing user responses: export a report's sidecar, and attach sidecars to the clarification response.

The sidecar's bytes are defined in :mod:`okstra_core.workflows.user_response`;
this module only places them in the store through the write primitives.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .. import layout, reading, writes
from ..digests import sha256_bytes
from ..errors import WriteRefused
from ..models.sidecars import UserResponseHeader
from ..store import Task
from .common import SYSTEM_CLOCK, Clock
from .direction import export_sidecar, guard_consumed_choice
from .reports import report_by_path
from .user_response import ExportInput, render_sidecar, validate_answers


def export(
    project_root: Path,
    task: Task,
    report_path: Path,
    answers: Mapping[str, str],
    selected_option: str | None = None,
    clock: Clock | None = None,
) -> tuple[Path, Path | None]:
    """``okstra user-response export``: write the sidecar for these answers.

    A different earlier export is kept as a superseded copy; identical answers are a no-op.
    """
    report = report_by_path(task, report_path)
    inp = ExportInput(report.model, report.rel(), report.stem, report.sha256)
    problems = validate_answers(inp, answers, selected_option)
    if problems:
        raise WriteRefused(report.path, problems[0])
    guard_consumed_choice(task, report, selected_option)
    return export_sidecar(project_root, report, render_sidecar(inp, answers, selected_option), clock or SYSTEM_CLOCK)


ATTACH_MARK = "<!-- okstra:attached {path} sha256={digest} -->"


def is_attached(clarification_response: str, sidecar_rel: str, digest: str) -> bool:
    """Whether ``clarification-response.md`` (its text) holds the sidecar at *sidecar_rel* with these bytes."""
    return ATTACH_MARK.format(path=sidecar_rel, digest=digest) in clarification_response


def attach_clarification(project_root: Path, task: Task) -> tuple[Path, list[str]]:
    """Attach every current user-response sidecar of the task to ``instruction-set/clarification-response.md``.

    Idempotent: a sidecar already attached with the same bytes is not attached
    again; existing text in the file is kept as it is.
    """
    sidecars = []
    for rd in task.run_dirs:
        for art in rd.of_kind("user-response"):
            # A sidecar the reader refuses (unreadable, a FIFO, not UTF-8, a NUL byte) refuses the attach.
            data = reading.read_bytes(art.path, root=project_root)
            if isinstance(data, reading.LoadError):
                raise WriteRefused(art.path, data.reason)
            loaded = reading.sidecar_of_bytes(art.path, data, UserResponseHeader)
            if isinstance(loaded, reading.LoadError):
                raise WriteRefused(art.path, loaded.reason)
            sidecars.append((layout.rel(art.path, project_root), data))
    target = layout.clarification_response_path(task.root)
    attached: list[str] = []

    def update(current: bytes | None) -> bytes | None:
        text = "# Clarification response\n"
        if current is not None:
            decoded = reading.text_of_bytes(target, current)
            if isinstance(decoded, reading.LoadError):
                raise WriteRefused(target, decoded.reason)
            text = decoded
        added = False
        for rel, data in sorted(sidecars):
            if is_attached(text, rel, sha256_bytes(data)):
                continue
            mark = ATTACH_MARK.format(path=rel, digest=sha256_bytes(data))
            if not text.endswith("\n"):
                text += "\n"
            text += f"\n{mark}\n\n{data.decode('utf-8').rstrip()}\n"
            attached.append(rel)
            added = True
        return text.encode("utf-8") if added or current is None else None

    writes.replace_locked(project_root, target, update)
    return target, attached
