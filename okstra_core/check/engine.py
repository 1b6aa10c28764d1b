"""The check run: the project-wide rules in one :class:`~okstra_core.check.unit.Unit`, then each task.

Tasks are checked in units of their own, in worker processes when ``jobs`` > 1.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from .. import layout
from ..errors import OkstraError
from ..progress import Progress
from .catalog import expand
from .findings import CheckReport, Finding
from .rules import project_rules, task_rules
from .unit import Unit


class CheckError(OkstraError):
    """The check could not run at all (no project, unreadable root)."""


# ------------------------------------------------------------------ the run


def _task_chunk(root: str, home: str | None, tasks: list[tuple[str, Any]]) -> tuple[list[Finding], int]:
    """Worker entry point: check some tasks, return their findings and file count."""
    findings: list[Finding] = []
    files = 0
    root_path = Path(root)
    home_path = Path(home) if home else None
    for rel, entry in tasks:
        # The project unit listed every folder from the root down to the task as a usable
        # directory; the task's unit trusts that instead of listing (and re-reporting) them again.
        parts = rel.split("/")
        known = [os.path.join(root, *parts[: i + 1]) for i in range(len(parts))]
        unit = Unit(root_path, home_path, known)
        task_rules.check_task(unit, root_path / rel, entry)
        findings.extend(unit.findings)
        files += len(unit.files)
    return findings, files


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


#: Tasks per unit of work handed to a worker: small enough that the workers finish
#: together (tasks differ a lot in size), large enough that handing out is cheap.
CHUNK_TASKS = 32


#: Below this many tasks, worker processes cost more than they save.
PARALLEL_MIN_TASKS = 64


def run_check(
    project_root: Path,
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    jobs: int = 1,
    home: Path | None = None,
    progress: Progress | None = None,
) -> CheckReport:
    """Check the store of *project_root* and return every finding.

    *select* / *ignore* take rule ids or prefixes; *jobs* is the number of worker
    processes for the per-task part (``0`` or less: all cores); *home* is the
    manager state root (default :func:`okstra_core.layout.okstra_home`),
    checked only when it exists; *progress*, when given, is called with
    ``(tasks checked, tasks)`` as the per-task part goes on. Raises :class:`CheckError` when the check cannot
    run (no project folder, no ``.okstra/``, an unknown rule id).
    """
    from ..render import markdown as _markdown  # noqa: F401 - imported once here, inherited by forked workers

    try:
        selected = expand(select) if select else None
        ignored = expand(ignore) if ignore else set()
    except ValueError as exc:
        raise CheckError(None, str(exc)) from None
    root = Path(os.path.abspath(project_root))
    if not root.is_dir():
        raise CheckError(root, "project root is not a directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise CheckError(root, "project root is not readable")
    store = layout.okstra_dir(root)
    if not store.is_dir() or (
        store.is_symlink() and not Path(os.path.realpath(store)).is_relative_to(os.path.realpath(root))
    ):
        raise CheckError(root, "no .okstra/ store in this folder")
    home_path = Path(os.path.abspath(home if home is not None else layout.okstra_home()))

    unit = Unit(root, home_path if home_path.is_dir() else None)
    tasks = project_rules.check_project(unit, home_path)
    if jobs <= 0:
        jobs = os.cpu_count() or 1
    findings = list(unit.findings)
    files = len(unit.files)
    home_text = str(unit.home) if unit.home else None
    chunks = _chunks(tasks, CHUNK_TASKS)
    done = 0
    if progress is not None:
        progress(0, len(tasks))
    if jobs > 1 and len(tasks) >= PARALLEL_MIN_TASKS:
        ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = {pool.submit(_task_chunk, str(root), home_text, chunk): len(chunk) for chunk in chunks}
            # Collected as they finish (for progress); the findings are sorted below, so order does not matter.
            for fut in as_completed(futures):
                f, n = fut.result()
                findings.extend(f)
                files += n
                done += futures[fut]
                if progress is not None:
                    progress(done, len(tasks))
    else:
        for chunk in chunks:
            f, n = _task_chunk(str(root), home_text, chunk)
            findings.extend(f)
            files += n
            done += len(chunk)
            if progress is not None:
                progress(done, len(tasks))
    if selected is not None:
        findings = [f for f in findings if f.rule in selected]
    findings = [f for f in findings if f.rule not in ignored]
    findings.sort(key=Finding.sort_key)
    # Each exact finding once, also across units (a folder outside a task may be listed by more than one).
    findings = list(dict.fromkeys(findings))
    return CheckReport(root=str(root), findings=findings, files=files)
