"""Bulk demo tasks for benchmarks, cloned from one template task per shape.

Bulk tasks are made in two steps: one template task per task type is written
through the write API (into a scratch project), then each bulk task is that
template with its group and task id substituted, published with
fresh_tree.populate_fresh_tree. The identity-bound digests of prompt metadata are
recomputed by their owners, so a bulk task holds the same contract as the
template.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .. import fresh_tree, layout, names, writes
from ..digests import pretty_json
from ..models import task as tm
from ..models.run import InvocationAssignment
from ..progress import Progress
from ..times import iso
from ..workers import worker_pool
from ..workflows import prompts
from ..workflows.tasks import TaskSpec, create_task, record_fix_cycle, refresh_fix_cycles
from .content import (
    ANALYSERS,
    ANALYSIS_FINDINGS,
    EXECUTOR,
    PROJECT_ID,
    START,
    VERIFIER,
    WRITER,
    option_candidates,
    retry_plan,
)
from .runs import close, converge, convergence_summary, team_run, write_report, write_task_index
from .schedule import BULK_MINUTES, DAY_WEIGHTS, FIRST_DAY, DemoClock, Pace, Slot, bulk_pace, retime, variant

BULK_TYPES = ("analysis", "option-selection", layout.IMPLEMENTATION_PLANNING, "implementation", "final-verification")
TPL_GROUP = "zzbulkgroup"


def _tpl_id(task_type: str) -> str:
    return f"zzbulktask-{task_type}"


#: Templates that leave a decision open, by the task type they stand in for: every
#: OPEN_BULK_EVERY-th bulk task of that type is one of them (design-prep items of the
#: implementation-planning template are open in every planning task already).
OPEN_BULK_TEMPLATES = {
    "analysis": "analysis-open",  # clarification questions nobody answered
    "option-selection": "option-selection-open",  # a comparison nobody chose from
    "final-verification": "final-verification-open",  # a verdict awaiting approval
}
OPEN_BULK_EVERY = 5

#: The other bulk tasks of a type are drawn from these templates (name, weight), so that the
#: history has errors, runs in progress, convergence rounds and fix cycles to count.
BULK_VARIANTS: dict[str, list[tuple[str, int]]] = {
    "analysis": [
        ("analysis", 52),
        ("analysis-converged-1", 14),
        ("analysis-converged-2", 12),
        ("analysis-converged-3", 6),
        ("analysis-unsettled", 4),
        ("analysis-error", 12),
    ],
    "option-selection": [("option-selection", 100)],
    layout.IMPLEMENTATION_PLANNING: [(layout.IMPLEMENTATION_PLANNING, 100)],
    "implementation": [("implementation", 80), ("implementation-error", 10), ("implementation-running", 10)],
    "final-verification": [
        ("final-verification", 60),
        ("final-verification-fix-1", 25),
        ("final-verification-fix-2", 10),
        ("final-verification-fix-3", 5),
    ],
}

#: Every template, by name: the task type it stands in for.
TEMPLATES = {
    **{name: task_type for task_type, names in BULK_VARIANTS.items() for name, _ in names},
    **{name: task_type for task_type, name in OPEN_BULK_TEMPLATES.items()},
}


def _bulk_template_name(index: int, seed: int = 0) -> tuple[str, str]:
    """The task type of bulk task *index* and the template it is cloned from."""
    task_type = BULK_TYPES[index % len(BULK_TYPES)]
    if (index // len(BULK_TYPES)) % OPEN_BULK_EVERY == OPEN_BULK_EVERY - 1 and task_type in OPEN_BULK_TEMPLATES:
        return task_type, OPEN_BULK_TEMPLATES[task_type]
    return task_type, variant(seed, index, BULK_VARIANTS[task_type])


_OPEN_QUESTIONS: list[dict[str, Any]] = [
    {
        "itemId": "CQ-001",
        "question": "Is the retry budget per charge or per order?",
        "options": ["charge", "order"],
    },
    {"itemId": "CQ-002", "question": "Which gateway logs may we keep, and for how long?"},
]


def _bulk_deliverable(task_type: str, name: str) -> dict[str, Any]:
    deliverables: dict[str, dict[str, Any]] = {
        "analysis": ANALYSIS_FINDINGS,
        "option-selection": option_candidates("preselected-validation", "IO-001"),
        layout.IMPLEMENTATION_PLANNING: retry_plan(True),
        "implementation": {"implementationResults": {"stage": 1, "outcome": "passed"}},
        "final-verification": {"verificationVerdict": {"verdict": "pass"}},
    }
    return option_candidates("comparison") if name == "option-selection-open" else deliverables[task_type]


def _open_fix_cycles(root: Path, troot: Path, cycles: int, clock: DemoClock) -> str | None:
    """*cycles* fix cycles before the verification (each earlier one closed); returns the last one's id."""
    for cycle in range(1, cycles + 1):
        cycle_id = f"fc-{cycle}"
        event = tm.FixCycleEvent(
            event="opened",
            cycle_id=cycle_id,
            cycle=cycle,
            symptom="verification sent the work back",
            target_report=f"final-report-final-verification-{cycle:03d}",
            at=iso(clock.now()),
        )
        record_fix_cycle(root, troot, event)
        if cycle < cycles:
            clock.wait(dt.timedelta(minutes=40))
            record_fix_cycle(
                root, troot, tm.FixCycleEvent(event="closed", cycle_id=cycle_id, cycle=cycle, at=iso(clock.now()))
            )
    return f"fc-{cycles}" if cycles else None


def _bulk_template(root: Path, name: str, clock: DemoClock) -> None:
    task_type = TEMPLATES[name]
    spec = TaskSpec(
        PROJECT_ID,
        TPL_GROUP,
        _tpl_id(name),
        task_type,
        "feature",
        f"Bulk {_tpl_id(name)}",
        "Generated for scale.",
    )
    troot = create_task(root, spec, clock, point=False, catalog=False)
    stage = 1 if task_type == "implementation" else None
    workers = [ANALYSERS[0], WRITER] if task_type != "implementation" else [EXECUTOR, VERIFIER]
    rounds = int(name[-1]) if name.startswith("analysis-converged-") else 3 if name == "analysis-unsettled" else 0
    if rounds:
        workers = [*ANALYSERS, WRITER]
    cycles = int(name[-1]) if name.startswith("final-verification-fix-") else 0
    cycle_id = _open_fix_cycles(root, troot, cycles, clock)
    when = Slot(clock.last(), BULK_MINUTES[task_type])
    run = team_run(
        root, troot, task_type, workers, clock, stage=stage, rich_team=False, fix_cycle_id=cycle_id, slot=when
    )
    if name.endswith("-running"):
        write_task_index(root, troot)
        return
    if name.endswith("-error"):
        close(
            run,
            None,
            clock,
            status="error",
            next_phase=task_type,
            next_status="blocked",
            rationale="worker failed",
            catalog=False,
        )
        write_task_index(root, troot)
        return
    extra = None
    if rounds:
        final = converge(run, clock, rounds, settled=name != "analysis-unsettled", prompts_kept=False)
        extra = convergence_summary(run, final)
    questions = _OPEN_QUESTIONS if name == "analysis-open" else None
    deliverable = _bulk_deliverable(task_type, name)
    rep = write_report(run, spec.title, "Generated.", deliverable, clarification=questions, extra=extra, clock=clock)
    if cycle_id is not None:  # the verification passes: the last cycle closes with the run
        record_fix_cycle(
            root, troot, tm.FixCycleEvent(event="closed", cycle_id=cycle_id, cycle=cycles, at=iso(clock.now()))
        )
        refresh_fix_cycles(root, troot, clock)
    if name == "final-verification-open":
        close(
            run,
            rep,
            clock,
            next_phase=None,
            next_status="terminal",
            rationale="verdict pass; closing the task needs sign-off",
            awaiting=True,
            catalog=False,
        )
    elif name in OPEN_BULK_TEMPLATES.values():
        close(
            run,
            rep,
            clock,
            next_phase=task_type,
            next_status="blocked",
            rationale="waiting for a person",
            catalog=False,
        )
    else:
        close(run, rep, clock, next_phase=None, next_status="terminal", rationale="done", catalog=False)
    write_task_index(root, troot)


def _read_tree(folder: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, dirs, files in os.walk(folder):
        # Seq claims matter only while an execution is allocating; a finished
        # task's artifacts carry their seqs, so clones leave the claims out.
        dirs[:] = [d for d in dirs if d not in (layout.SEQ_CLAIMS_DIR, layout.LOCKS_DIR)]
        for name in files:
            if name.endswith(layout.LOCK_SUFFIX):
                continue
            full = os.path.join(dirpath, name)
            with open(full, "rb") as fh:
                out[os.path.relpath(full, folder)] = fh.read()
    return out


def _clone(root: Path, template: dict[str, bytes], name: str, group: str, task_id: str, pace: Pace) -> int:
    """Bulk task *group*/*task_id* as template *name* with its names substituted and its times moved by *pace*."""
    old_id, new_id = _tpl_id(name).encode(), task_id.encode()
    old_group, new_group = TPL_GROUP.encode(), group.encode()
    troot = layout.task_root(root, group, task_id)
    files: dict[Path, bytes] = {}
    for relpath, data in template.items():
        moved = retime(relpath.encode(), pace).decode()
        files[troot / moved] = retime(data.replace(old_id, new_id).replace(old_group, new_group), pace)
    manifests = {p: d for p, d in files.items() if p.name.startswith("run-manifest-")}
    for path, data in list(files.items()):
        if not path.name.endswith(names.PROMPT_META_SUFFIX):
            continue
        meta = json.loads(data)
        run_manifest = json.loads(manifests[root / meta["runManifestPath"]])
        assignment = next(
            a for a in run_manifest["invocationAssignments"] if a["assignmentRef"] == meta["assignmentRef"]
        )
        meta["digests"].update(
            prompts.bound_digests(
                InvocationAssignment.model_validate(assignment),
                files[root / meta["promptPath"]],
                files[root / meta["instructionPath"]],
            )
        )
        files[path] = pretty_json(meta)
    return fresh_tree.populate_fresh_tree(root, files)


#: Bulk templates read by this process, by scratch root: each worker reads them once, not once per range.
_TEMPLATES: dict[str, dict[str, dict[str, bytes]]] = {}

#: Bulk tasks per range handed to a worker: small enough for a progress display that moves steadily.
BULK_RANGE_TASKS = 100


def _bulk_range(args: tuple[str, str, int, int, int, dict[str, str]]) -> list[dict[str, Any]]:
    root_text, scratch_text, start, stop, seed, origins = args
    root, scratch = Path(root_text), Path(scratch_text)
    templates = _TEMPLATES.get(scratch_text)
    if templates is None:
        templates = {t: _read_tree(layout.task_root(scratch, TPL_GROUP, _tpl_id(t))) for t in TEMPLATES}
        _TEMPLATES.clear()
        _TEMPLATES[scratch_text] = templates
    entries = []
    for index in range(start, stop):
        task_type, name = _bulk_template_name(index, seed)
        group, task_id = f"bulk-{index % 50:02d}", f"task-{index:05d}"
        pace = bulk_pace(seed, index, dt.datetime.fromisoformat(origins[name]))
        _clone(root, templates[name], name, group, task_id, pace)
        status = json.loads(templates[name][layout.TASK_MANIFEST_FILE])["currentStatus"]
        entries.append(
            tm.TaskCatalogEntry(
                task_key=str(layout.TaskKey(PROJECT_ID, group, task_id)),
                project_id=PROJECT_ID,
                task_group=group,
                task_id=task_id,
                task_type=task_type,
                task_root_path=layout.task_root_rel(group, task_id),
                current_status=status,
                title=f"Bulk {task_id}",
            ).dump()
        )
    return entries


def add_bulk_tasks(
    root: Path, count: int, jobs: int, progress: Progress | None = None, before: int = 0, seed: int = 0
) -> None:
    """Add *count* bulk tasks; each one's template, day, start and pace are drawn from *seed* and its index."""
    from ..workflows.discovery import add_catalog_entries

    with tempfile.TemporaryDirectory(prefix="okstra-bulk-") as tmp:
        scratch = Path(tmp).resolve()
        writes.ensure_dir(scratch, layout.okstra_dir(scratch))
        clock = DemoClock(START - dt.timedelta(days=30))
        origins: dict[str, str] = {}
        with writes.relaxed_durability():
            for name in TEMPLATES:
                clock.wait(dt.timedelta(days=1))
                origins[name] = clock.last().isoformat()
                _bulk_template(scratch, name, clock)
        # Templates are written under the scratch root; their project-relative paths are the same in root.
        chunks = max(1, jobs * 4, count // BULK_RANGE_TASKS)
        size = max(1, (count + chunks - 1) // chunks)
        ranges = [(str(root), str(scratch), i, min(count, i + size), seed, origins) for i in range(0, count, size)]
        entries: list[dict[str, Any]] = []
        total = before + count
        try:
            if jobs > 1 and len(ranges) > 1:
                with worker_pool(jobs) as pool:  # each worker ends with this process
                    for part in pool.map(_bulk_range, ranges):
                        entries.extend(part)
                        if progress is not None:
                            progress(before + len(entries), total)
            else:
                for r in ranges:
                    entries.extend(_bulk_range(r))
                    if progress is not None:
                        progress(before + len(entries), total)
        finally:
            _TEMPLATES.clear()
    # The catalog is dated after the calendar's last day, not by the wall clock: the same seed, the same bytes.
    after = DemoClock(dt.datetime.combine(FIRST_DAY + dt.timedelta(days=len(DAY_WEIGHTS)), dt.time(), dt.UTC))
    add_catalog_entries(root, [tm.TaskCatalogEntry.model_validate(e) for e in entries], PROJECT_ID, after)
