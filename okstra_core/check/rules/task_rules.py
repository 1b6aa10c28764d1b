"""One task bundle: folder layout and names, then the task-level and run-level rules."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import layout, names
from ...models import task as tm
from ...models.run import RUN_STATUSES
from ..catalog import (
    BAD_NAME,
    BAD_NEXT_PHASE_CORRECTION,
    BAD_STAGE_FOLDER,
    CATALOGUED_TASK_MISSING,
    FIX_CYCLES_DISAGREE,
    FLAT_LEGACY_ARTIFACT,
    FOREIGN_ARTIFACT,
    MALFORMED_SEQ,
    MANIFEST_PATH_MISSING,
    MANIFEST_PATH_NOT_RELATIVE,
    MISPLACED_CARRY,
    NEXT_PHASE_UNACTIONABLE,
    NON_CANONICAL_SLUG,
    TASK_KEY_INCONSISTENT,
    TASK_TYPE_MISMATCH,
    TIMELINE_RUN_MISSING,
    UNKNOWN_RUN_FOLDER,
    UNKNOWN_STATUS,
    UNKNOWN_TASK_TYPE,
    UNNAMED_ENTRY,
)
from ..unit import Entry, Unit
from . import carry, convergence, design_prep, direction, documents, prompts, reports, runs, team_state
from .scope import Artifact, RunScope, TaskScope

if TYPE_CHECKING:
    from .project_rules import CatalogEntryKey

_TASK_ROOT: dict[str, str] = {
    layout.TASK_MANIFEST_FILE: "file",
    layout.TASK_INDEX_FILE: "file",
    layout.INSTRUCTION_SET_DIR: "dir",
    layout.RUNS_DIR: "dir",
    layout.HISTORY_DIR: "dir",
    layout.RECAP_DIR: "dir",
    layout.NOTES_DIR: "dir",
}
#: Folder under ``prompts/`` holding invocation reservations (the manifest's ``reservationRoot``).
RESERVATIONS = layout.RESERVATIONS_DIR
#: Manifest paths that name optional helpers: the Claude resume launcher exists only on that compatibility path.
_OPTIONAL_PATHS = ("latest_resume_command_path",)
_HISTORY = {layout.TIMELINE_FILE, layout.FIX_CYCLES_FILE}


#: Parsed names by (category, file name): every task repeats the same few hundred names.
_PARSED: dict[tuple[str, str], names.ParsedName | None] = {}


def _parse_in_category(category: str, name: str) -> names.ParsedName | None:
    """:func:`names.parse_in_category`, memoised (its results are frozen values)."""
    key = (category, name)
    try:
        return _PARSED[key]
    except KeyError:
        pass
    parsed = names.parse_in_category(category, name)
    if len(_PARSED) < 100_000:
        _PARSED[key] = parsed
    return parsed


def check_task(unit: Unit, root: Path, entry: CatalogEntryKey | None) -> None:
    """Check one task folder (``entry`` is its catalog entry, or None)."""
    scope = TaskScope(unit, root, entry)
    unit.guard("task-layout", root, lambda: _layout(scope))
    unit.guard("task-manifest", root, lambda: _manifest(scope))
    unit.guard("timeline", root, lambda: _history(scope))
    for run in scope.runs:
        unit.guard("run-documents", run.path, documents.check_run, scope, run)
        unit.guard("prompts", run.path, prompts.check_run, scope, run)
        unit.guard("team-state", run.path, team_state.check_run, scope, run)
        unit.guard("reports", run.path, reports.check_run, scope, run)
        unit.guard("convergence", run.path, convergence.check_run, scope, run)
        if run.task_type == layout.IMPLEMENTATION_PLANNING:
            unit.guard("design-prep", run.path, design_prep.check_run, scope, run)
    unit.guard("direction", root, lambda: direction.check_task(scope))
    unit.guard("carry", root, lambda: carry.check_task(scope))
    unit.guard("verification-target", root, lambda: carry.check_verification_target(scope))
    unit.guard("runs", root, lambda: runs.check_task(scope))
    for _ in unit.walk(root):  # every file of the bundle is read, even where no rule looks
        pass
    inside = str(root) + os.sep
    unit.files = {p for p in unit.files if p.startswith(inside)}  # lookups may list folders above the task
    unit.read_remaining(sorted(unit.files))


# ------------------------------------------------------------------ layout


def _layout(scope: TaskScope) -> None:
    unit = scope.unit
    for e in unit.entries(scope.root):
        if e.kind != "bad" and _TASK_ROOT.get(e.name) != e.kind:
            unit.report(UNNAMED_ENTRY, e.path, "not part of the task bundle's contract; not read")
    for e in unit.entries(layout.history_dir(scope.root)):
        if e.kind != "bad" and (e.name not in _HISTORY or e.kind != "file"):
            unit.report(UNNAMED_ENTRY, e.path, "not part of the task bundle's contract; not read")
    for e in unit.entries(layout.notes_dir(scope.root)):
        if e.kind == "file" and names.parse_note(e.name) is None:
            unit.report(BAD_NAME, e.path, "note is not named <timestamp>-<slug>.md")
    for e in unit.entries(layout.runs_dir(scope.root)):
        if e.kind == "file":
            unit.report(UNNAMED_ENTRY, e.path, "runs/ holds task-type folders only; not read")
        elif e.kind == "dir":
            _task_type_dir(scope, e)


def _task_type_dir(scope: TaskScope, base: Entry) -> None:
    unit = scope.unit
    task_type = base.name
    if not layout.is_canonical_slug(task_type):
        unit.report(NON_CANONICAL_SLUG, base.path, layout.not_a_slug("task-type folder", task_type))
    elif task_type not in layout.KNOWN_TASK_TYPES:
        unit.report(UNKNOWN_TASK_TYPE, base.path, f"unknown task type {task_type!r}")
    own = RunScope(base.path, task_type, None)
    has_own = False
    for e in unit.entries(base.path):
        if e.kind == "bad":
            continue
        stage = layout.parse_stage_dir(e.name)
        if e.name in layout.RUN_CATEGORIES and e.kind == "dir":
            if task_type == "implementation":
                unit.report(
                    BAD_STAGE_FOLDER,
                    e.path,
                    "an implementation run lives in runs/implementation/stage-<n>/, not directly in "
                    "runs/implementation/",
                )
            elif e.name in layout.DESIGN_PREP_CATEGORIES and task_type != layout.IMPLEMENTATION_PLANNING:
                unit.report(UNKNOWN_RUN_FOLDER, e.path, f"{e.name}/ belongs to implementation-planning run dirs only")
                continue
            has_own = True
            _category(scope, own, e)
        elif e.kind == "dir" and e.name.startswith(layout.STAGE_DIR_PREFIX):
            if stage is None:
                unit.report(
                    BAD_STAGE_FOLDER,
                    e.path,
                    f"stage folder {e.name!r} is not stage-<n> with n a positive integer without padding",
                )
            elif not layout.is_staged_type(task_type):
                unit.report(
                    BAD_STAGE_FOLDER,
                    e.path,
                    f"stage folder {e.name}/ under task type {task_type!r}, which has no stages "
                    f"(stages belong to {', '.join(layout.STAGED_TASK_TYPES)})",
                )
            else:
                scope.runs.append(_stage_dir(scope, e, task_type, stage))
        elif e.name == layout.CARRY_DIR and e.kind == "dir":
            if task_type != "implementation":
                unit.report(MISPLACED_CARRY, e.path, "carry/ lives only in runs/implementation/")
            else:
                scope.carry = [c for c in unit.entries(e.path) if c.kind != "bad"]
        elif e.name == layout.CONSUMERS_FILE and e.kind == "file":
            if task_type != layout.IMPLEMENTATION_PLANNING:
                unit.report(MISPLACED_CARRY, e.path, "consumers.jsonl lives only in runs/implementation-planning/")
            else:
                scope.consumers = e.path
        elif e.kind == "file" and (parsed := names.classify_flat(e.name)) is not None:
            unit.report(FLAT_LEGACY_ARTIFACT, e.path, f"flat legacy artifact: belongs in {parsed.category}/")
            has_own = True
            _add(scope, own, e, parsed, flat=True)
        elif e.kind == "dir":
            unit.report(
                UNKNOWN_RUN_FOLDER,
                e.path,
                f"{e.name}/ is not a category folder, a stage folder or carry/ ({_expected_folders()})",
            )
        else:
            unit.report(UNNAMED_ENTRY, e.path, "not part of the run dir's contract; not read")
    if has_own:
        scope.runs.insert(0, own)


def _stage_dir(scope: TaskScope, e: Entry, task_type: str, stage: int) -> RunScope:
    unit = scope.unit
    run = RunScope(e.path, task_type, stage)
    for c in unit.entries(e.path):
        if c.kind == "bad":
            continue
        if c.name in layout.SEQ_CATEGORIES and c.kind == "dir":
            _category(scope, run, c)
        elif c.name in layout.DESIGN_PREP_CATEGORIES and c.kind == "dir":
            unit.report(UNKNOWN_RUN_FOLDER, c.path, f"{c.name}/ belongs to implementation-planning run dirs only")
        elif c.name == layout.CARRY_DIR or c.name == layout.CONSUMERS_FILE:
            unit.report(
                MISPLACED_CARRY,
                c.path,
                f"{c.name} is stage-shared and lives flat under the task-type run dir, not under {e.name}/",
            )
        elif c.kind == "dir" and c.name.startswith(layout.STAGE_DIR_PREFIX):
            unit.report(BAD_STAGE_FOLDER, c.path, "stage folders do not nest")
        elif c.kind == "file" and (parsed := names.classify_flat(c.name)) is not None:
            unit.report(FLAT_LEGACY_ARTIFACT, c.path, f"flat legacy artifact: belongs in {parsed.category}/")
            _add(scope, run, c, parsed, flat=True)
        elif c.kind == "dir":
            unit.report(UNKNOWN_RUN_FOLDER, c.path, f"{c.name}/ is not a category folder ({_expected_folders()})")
        else:
            unit.report(UNNAMED_ENTRY, c.path, "not part of the run dir's contract; not read")
    return run


def _category(scope: TaskScope, run: RunScope, folder: Entry) -> None:
    unit = scope.unit
    for e in unit.entries(folder.text):
        if e.kind == "bad":
            continue
        if folder.name == layout.STATE_DIR and e.name == layout.MIGRATIONS_DIR and e.kind == "dir":
            run.migrations = e.path
            continue
        if folder.name == layout.PROMPTS_DIR and e.name == RESERVATIONS and e.kind == "dir":
            # The run's invocation reservation root (agentContract.reservationRoot): one JSON binding per invocation.
            for r in unit.entries(e.text):
                if r.kind == "file" and r.name.endswith(".json"):
                    unit.json(r.text)
                elif r.kind != "bad":
                    unit.report(BAD_NAME, r.path, f"{r.name!r} is not an invocation reservation (<invocation-id>.json)")
            continue
        parsed = _parse_in_category(folder.name, e.name)
        if parsed is None:
            templates = ", ".join(k.template for k in names.KINDS_BY_CATEGORY.get(folder.name, ()))
            unit.report(
                BAD_NAME,
                e.path,
                f"{e.name!r} is not a name of any {folder.name}/ artifact (expected {templates or 'none'})",
            )
            continue
        if (parsed.fmt == "dir") != (e.kind == "dir"):
            unit.report(BAD_NAME, e.path, f"{e.name!r} should be a {'folder' if parsed.fmt == 'dir' else 'file'}")
            continue
        _add(scope, run, e, parsed)


def _add(scope: TaskScope, run: RunScope, e: Entry, parsed: names.ParsedName, flat: bool = False) -> None:
    unit = scope.unit
    if parsed.seq_text is not None and not names.is_canonical_seq(parsed.seq_text):
        unit.report(
            MALFORMED_SEQ,
            e.path,
            f"seq {parsed.seq_text!r} is not a canonical seq (at least 3 digits, zero-padded, from 001)",
        )
    if parsed.task_type is not None and parsed.task_type != run.task_type:
        unit.report(
            TASK_TYPE_MISMATCH,
            e.path,
            f"named for task type {parsed.task_type!r} but stored in the {run.task_type!r} run dir",
        )
    run.artifacts.append(Artifact(e, parsed, flat))


# ---------------------------------------------------------------- manifest


def _manifest(scope: TaskScope) -> None:
    """The task manifest: identity, paths, next-phase pointer and fixCycles summary."""
    unit = scope.unit
    path = layout.task_manifest_path(scope.root)
    if unit.entry(path) is None:
        unit.report(CATALOGUED_TASK_MISSING, path, "task-manifest.json is missing")
        if scope.entry is not None:
            scope.task_key = scope.entry.task_key
        return
    man = unit.doc(path, tm.TaskManifest)
    if man is None:
        if scope.entry is not None:
            scope.task_key = scope.entry.task_key
        return
    scope.manifest = man
    here = scope.here = _manifest_identity(scope, path, man)
    _manifest_paths(unit, path, man, here)
    _manifest_pointers(unit, path, man)
    _manifest_fix_cycles(scope, path, man)


def _manifest_identity(scope: TaskScope, path: Path, man: tm.TaskManifest) -> Callable[[str], str]:
    """taskKey, folder and taskRootPath agree with each other and with the task catalog (one finding).

    Sets the identity the task's artifacts are judged against: the catalog's entry for this
    folder, else a manifest that belongs here. A wrong manifest is reported once, never again on
    every artifact. Returns how to read a path into the slug-named folder a writer would use.
    """
    unit = scope.unit
    entry = scope.entry
    project_id, task_group, task_id = man.identity()
    stated = (man.project_id, man.task_group, man.task_id)
    expected_key = layout.task_key_text(project_id, task_group, task_id)
    problems: list[str] = []
    if None not in stated and man.task_key != expected_key:
        problems.append(f"taskKey {man.task_key!r} is not projectId:taskGroup:taskId ({expected_key!r})")
    folder = layout.task_root_rel(task_group, task_id)
    alias = slugged_rel(scope.rel)
    in_folder = folder in (scope.rel, alias)  # a non-slug folder is reported once, as OKS018
    if not in_folder:
        problems.append(f"task {task_group!r}/{task_id!r} belongs in {folder}/, not {scope.rel}/")

    def here(value: str) -> str:
        """A path into the slug-named folder, read as a path into this (non-slug) folder."""
        if alias != scope.rel and (value == alias or value.startswith(alias + "/")):
            return scope.rel + value[len(alias) :]
        return value

    if man.task_root_path is not None and here(man.task_root_path) != scope.rel:
        problems.append(f"taskRootPath {man.task_root_path!r} is not this task's folder {scope.rel!r}")
    disagrees = False
    if entry is not None:
        for field in ("task_key", "project_id", "task_group", "task_id"):
            a, b = getattr(entry, field), getattr(man, field)
            if a is not None and b is not None and a != b:
                disagrees = True
                problems.append(f"{_camel(field)} {b!r} differs from the task catalog ({a!r})")
    if problems:  # one wrong value is one finding, however many places it disagrees with
        unit.report(TASK_KEY_INCONSISTENT, path, "; ".join(problems))
    if entry is not None:
        scope.task_key = entry.task_key
    elif in_folder and not disagrees:
        scope.task_key = man.task_key
    return here


def _manifest_paths(unit: Unit, path: Path, man: tm.TaskManifest, here: Callable[[str], str]) -> None:
    """Every path field is project-relative POSIX text naming something that exists."""
    for field in tm.TaskManifest.PATH_FIELDS:
        value = getattr(man, field)
        if value is None:
            continue
        if not layout.is_relative_posix(value):
            unit.report(
                MANIFEST_PATH_NOT_RELATIVE, path, f"{_camel(field)} {value!r} is not a project-relative POSIX path"
            )
        elif field not in _OPTIONAL_PATHS and not unit.rel_exists(here(value)):
            unit.report(MANIFEST_PATH_MISSING, path, f"{_camel(field)} {value!r} {unit.absent(here(value))}")


def _manifest_pointers(unit: Unit, path: Path, man: tm.TaskManifest) -> None:
    """The next-phase pointer, its correction and the latest run status can be acted on."""
    workflow = man.workflow
    nrp = workflow.next_recommended_phase if workflow is not None else None
    if nrp is not None and nrp.status == "ready" and not nrp.phase:
        unit.report(
            NEXT_PHASE_UNACTIONABLE,
            path,
            "workflow.nextRecommendedPhase has status 'ready' but names no phase (expected a phase)",
        )
    corr = workflow.next_recommended_phase_correction if workflow is not None else None
    if corr is not None:
        if corr.applied != nrp:
            unit.report(
                BAD_NEXT_PHASE_CORRECTION,
                path,
                "workflow.nextRecommendedPhaseCorrection.applied is "
                f"{_pointer(corr.applied)}, not the stored nextRecommendedPhase ({_pointer(nrp)})",
            )
        if corr.authored == corr.applied:
            unit.report(
                BAD_NEXT_PHASE_CORRECTION,
                path,
                "workflow.nextRecommendedPhaseCorrection records no change: authored and applied are both "
                f"{_pointer(corr.applied)} (expected applied to differ)",
            )
        if corr.applied.status == "ready" and not corr.applied.phase:
            unit.report(
                BAD_NEXT_PHASE_CORRECTION,
                path,
                "workflow.nextRecommendedPhaseCorrection.applied has status 'ready' but names no phase "
                "(expected a phase)",
            )
    if man.latest_run_status is not None and man.latest_run_status not in RUN_STATUSES:
        unit.report(
            UNKNOWN_STATUS,
            path,
            f"latestRunStatus {man.latest_run_status!r} is not a known status ({documents.known_statuses()})",
        )


def _manifest_fix_cycles(scope: TaskScope, path: Path, man: tm.TaskManifest) -> None:
    """The fixCycles summary is what ``history/fix-cycles.jsonl`` derives."""
    unit = scope.unit
    log = layout.fix_cycles_path(scope.root)
    events = [ev for _, ev in unit.jsonl(log, tm.FixCycleEvent)] if unit.entry(log) is not None else None
    if events is not None or (man.fix_cycles is not None and man.fix_cycles.count > 0):
        derived = tm.derive_fix_cycles(events or [])
        if man.fix_cycles is None:
            if derived.count:
                unit.report(
                    FIX_CYCLES_DISAGREE,
                    path,
                    f"fixCycles is absent but history/fix-cycles.jsonl derives {derived.count} cycle(s)",
                )
        elif man.fix_cycles.named() != derived.named():
            fix_cycles = f"{layout.HISTORY_DIR}/{layout.FIX_CYCLES_FILE}"
            what = fix_cycles if events is not None else f"a missing {fix_cycles}"
            unit.report(
                FIX_CYCLES_DISAGREE,
                path,
                f"fixCycles {_dump(man.fix_cycles.named())} differs from what {what} derives: {_dump(derived.named())}",
            )


def _expected_folders() -> str:
    """The expected side of an unknown-folder message: the category folders of a run dir."""
    return "expected one of: " + ", ".join(layout.RUN_CATEGORIES)


def _pointer(pointer: tm.NextRecommendedPhase | None) -> str:
    """A phase pointer in one short phrase: its status and phase, or missing."""
    if pointer is None:
        return "missing"
    return (
        f"status {pointer.status!r}, phase {pointer.phase!r}"
        if pointer.phase
        else f"status {pointer.status!r}, no phase"
    )


def _camel(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(p.title() for p in rest)


def _dump(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


def slugged_rel(rel: str) -> str:
    """*rel* with its task group and task id folders slugged: the folder a writer of those values would use."""
    head, sep, tail = rel.rpartition(f"/{layout.TASKS_DIR}/")
    parts = tail.split("/")
    if not sep or len(parts) != 2:
        return rel
    return f"{head}/{layout.TASKS_DIR}/{layout.slug(parts[0])}/{layout.slug(parts[1])}"


# ----------------------------------------------------------------- history


def _history(scope: TaskScope) -> None:
    unit = scope.unit
    path = layout.timeline_path(scope.root)
    recap = layout.recap_log_path(scope.root)
    if unit.entry(recap) is not None:
        unit.jsonl(recap, tm.RecapEntry)
    for e in unit.entries(recap.parent):
        if e.kind != "bad" and e.name != recap.name:
            unit.report(UNNAMED_ENTRY, e.path, "not part of the task bundle's contract; not read")
    if unit.entry(path) is None:
        return
    timeline = unit.doc(path, tm.Timeline)
    if timeline is None:
        return
    if scope.task_key is not None and timeline.task_key not in (None, scope.task_key):
        unit.report(FOREIGN_ARTIFACT, path, f"taskKey {timeline.task_key!r} is not this task's {scope.task_key!r}")
    runs_rel = unit.rel(layout.runs_dir(scope.root)) + "/"
    for i, entry in enumerate(timeline.entries):
        for label, value in (("runDir", entry.run_dir), ("runManifestPath", entry.run_manifest_path)):
            if value is None:
                continue
            if not value.startswith(runs_rel):
                unit.report(
                    TIMELINE_RUN_MISSING, path, f"entries[{i}].{label} {value!r} is not inside this task's runs/"
                )
            elif not unit.rel_exists(value):
                unit.report(TIMELINE_RUN_MISSING, path, f"entries[{i}].{label} {value!r} {unit.absent(value)}")
