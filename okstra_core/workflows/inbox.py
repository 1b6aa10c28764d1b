"""What is waiting for a person: the decisions inbox, computed from the store only.

Five kinds of pending decision (``docs/inbox.md`` has the rules in prose):

``direction-choice``
    The latest option-selection report of a task is in comparison mode and no
    user-response sidecar records the choice (or the one there no longer fits
    the report: its ``source-data-sha256`` differs, or it does not parse).
    Preselected-validation mode needs no choice.
``planning-prepare``
    A comparison-mode sidecar records the choice, but
    ``instruction-set/selected-direction.json`` is not written yet: the choice
    can still change until planning prepare consumes it.
``clarification``
    The latest report of a task type asks clarification questions and no
    user-response sidecar answers them; or a sidecar answers them but is not
    attached (with its current bytes) to ``instruction-set/clarification-response.md``
    (``detail == "attach-pending"``). A comparison-mode report without a sidecar
    is listed once, as its ``direction-choice``.
``design-prep``
    A ``provisional`` or ``blocked`` design item of the approved planning
    snapshot (with an assessment) that the resolver grants no authoritative
    input revision; ``detail`` says when the last revision went stale, was a
    duplicate revision number, or is unreadable. A markerless legacy plan has
    nothing to confirm and is never listed.
``approval``
    The task manifest's ``workflow.awaitingApproval`` is true. The contract
    defines no approval file, so nothing here writes one: the summary says what
    the person must do.

``since`` is a time the store records where there is one (the report's
``generatedAt`` for report-based decisions and design-prep items, the task
manifest's ``updatedAt`` for approvals), else the modification time of the file
that made the decision pending (always so for sidecar-based decisions, whose
bytes hold no time). It is ISO-8601 UTC to the second (``2026-11-02T09:14:03Z``).

Reading is cheap: per task the manifest, the folder listings of its run dirs,
the latest report of each task type, the user-response sidecars of those
reports, ``selected-direction.json``, ``clarification-response.md`` and the
design-prep folders of the approved snapshot; never every artifact. Nothing
here writes; a file that cannot be read leaves its decision out (the checker
names it), and :func:`read_inbox` lists it among the unreadable files so that
the reader knows the list may be incomplete. A folder that cannot be listed
(``tasks/``, a task folder, ``runs/``, a run dir, a category folder) is never
taken for an empty one: :func:`read_inbox` lists it among the unlisted folders.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeVar

from .. import layout, names, reading
from ..store import Project, Task, TaskRef
from ..watch import Signature, signature
from .inbox_items import (
    DECISION_WORDS,
    KINDS,
    SUMMARY_MAX,
    DecisionRow,
    Inbox,
    InboxDetail,
    InboxKind,
    KeptInbox,
    PendingDecision,
    one_line,
    sort_newest_first,
)
from .latest_run import KeptRun, kept_run

if TYPE_CHECKING:
    from ..store_index import StatPass, StoreIndex
    from .inbox_scan import TaskScan

T = TypeVar("T")

__all__ = [
    "DECISION_WORDS",
    "KINDS",
    "SUMMARY_MAX",
    "DecisionKey",
    "HotPaths",
    "Inbox",
    "InboxDetail",
    "InboxKind",
    "InboxTold",
    "PendingDecision",
    "decision_key",
    "inbox_changes",
    "kept_inbox",
    "kept_runs",
    "one_line",
    "pending_decisions",
    "pending_for_task",
    "read_inbox",
    "read_paths",
    "refresh_inbox",
    "sort_newest_first",
    "task_facts",
    "task_list",
    "waiting_of",
    "waiting_per_task",
    "waiting_rows",
]


def read_inbox(project: Project, index: StoreIndex | None = None) -> Inbox:
    """The inbox of *project*: its decisions newest first (ties: task, kind, item) and its unreadable files.

    With *index*, the task list and each task's decisions are facts of the store index: reused while every
    file they were read from is as it was, read afresh otherwise; the answer is the same either way.
    """
    return _read(project, index)


def _read(project: Project, index: StoreIndex | None) -> Inbox:
    if index is not None:
        return _read_inbox_indexed(project, index)
    found: list[PendingDecision] = []
    unreadable: set[str] = set()
    for ref in project.task_refs:
        task = ref.open()
        task.entries()  # an unlistable task folder is recorded, never taken for an empty one
        scan = _scan(task)
        found.extend(scan.all())
        unreadable.update(scan.rel(path) for path in scan.unreadable)
    unlisted = set(project.unlisted)
    # A folder below an unlisted one fails because of it (as git names only the folder it cannot open).
    reasons = {
        _folder_rel(path, project.root): error.reason
        for path, error in project.unlisted.items()
        if not any(parent in unlisted for parent in path.parents)
    }
    return Inbox(sort_newest_first(found), sorted(unreadable), sorted(reasons), reasons)


#: Names of the inbox's facts in the store index.
INBOX_FACT: Final = "inbox"
TASKS_FACT: Final = "tasks"
TASK_FACT_PREFIX: Final = "inbox\x00"


RUNS_FACT: Final = "runs"


def _read_inbox_indexed(project: Project, index: StoreIndex) -> Inbox:
    """The inbox as one fact made of one fact per task: while nothing changed, one look at every file it was read
    from confirms it whole; after a change, only the tasks whose files changed are read again. Each task's latest
    run, read from the same manifests, is kept beside it (:func:`kept_runs`)."""
    root = project.root
    runs: list[tuple[Path, KeptRun]] = []
    return index.fact(
        INBOX_FACT,
        lambda: _inbox_of_tasks(project, index, runs),
        _encode_inbox,
        lambda v: _decode_inbox(root, v),
        siblings=lambda: {RUNS_FACT: _encode_runs(root, runs)},
    )


def _runs_fact(project: Project, index: StoreIndex) -> list[tuple[Path, KeptRun]]:
    root = project.root
    kept: list[tuple[Path, KeptRun]] = index.fact(
        RUNS_FACT,
        lambda: _indexed_runs(project, index),
        lambda v: _encode_runs(root, v),
        lambda v: _decode_runs(root, v),
    )
    return kept


def kept_runs(project: Project, index: StoreIndex) -> Iterator[tuple[str, KeptRun]]:
    """Each task's latest run as its manifest records it (a task whose manifest cannot be read has none), through
    *index*, in task-list order: its task folder's path as text and its run. The runs the inbox's reading keeps
    beside it are used while they are fresh, a run at a time and without a :class:`~pathlib.Path` made per task
    (a reader that holds them for a whole store: the notices' pulse); else they are read as a fact of their
    own."""
    text = index.kept_text(RUNS_FACT)
    if text is not None and _all_held(_runs_in(text)):
        base = os.fspath(project.root)
        for rel, run in _runs_in(text):
            yield os.path.join(base, rel), run
        return
    for task_root, run in _runs_fact(project, index):
        yield os.fspath(task_root), run


def _runs_in(text: str) -> Iterator[tuple[str, KeptRun]]:
    """The runs of a kept runs fact's JSON *text*, a run at a time; ``ValueError`` part-way for a text that is not
    runs as :func:`_encode_runs` writes them."""
    return map(_run_row, reading.array_items(text))


def _all_held(items: Iterator[object]) -> bool:
    """Whether every item of *items* comes (each let go as the next comes): a kept text is read through once so
    that a reader given its items a part at a time never meets a bad one part-way."""
    try:
        for _ in items:
            pass
    except (RecursionError, TypeError, ValueError):
        return False
    return True


def _indexed_runs(project: Project, index: StoreIndex) -> list[tuple[Path, KeptRun]]:
    refs = task_list(project, index)[0]
    parts = task_facts(index, project, refs, TASK_FACT_PREFIX, _task_inbox, _encode_task, _decode_task)
    return [(ref.root, part.run) for ref, part in parts if part.run is not None]


def _encode_runs(root: Path, runs: list[tuple[Path, KeptRun]]) -> Any:
    return [[layout.rel(task_root, root), *run] for task_root, run in runs]


def _decode_runs(root: Path, value: Any) -> list[tuple[Path, KeptRun]]:
    return [(root / rel, run) for rel, run in map(_run_row, value)]


def _run_row(row: Any) -> tuple[str, KeptRun]:
    """One row :func:`_encode_runs` wrote: its task folder (project-relative) and run; ``ValueError`` for anything
    else."""
    if not isinstance(row, list) or not row:
        raise ValueError("not a kept run")
    rel, *run = row
    return _text(rel), _kept_run(run)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("not a kept run")
    return value


def _kept_run(value: Any) -> KeptRun:
    key, path, status, report = value
    if not all(part is None or isinstance(part, str) for part in (path, status, report)):
        raise ValueError("not a kept run")
    return _text(key), path, status, report


def kept_counts(root: Path, index: StoreIndex) -> dict[str, int] | None:
    """The decisions waiting per task folder (project-relative), from the inbox *index* keeps when it is still
    fresh (its signature checks and every path it was read from is as it was), without building the decisions;
    None when it is not kept or no longer fresh (then only :func:`read_inbox` can say)."""
    rows = _kept_rows(index)
    if rows is None:
        return None
    try:
        return _count_by_task(root, (row[TASK_ROOT_FIELD] for row in rows.rows()))
    except (RecursionError, TypeError, ValueError):
        return None


class _KeptRows:
    """The decisions of the kept inbox's JSON *text*, as rows of :func:`_encode_decision`, taken a row at a time:
    the inbox of 100,000 tasks parsed whole is about 60 megabytes of lists beside its text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def rows(self, head: dict[str, Any] | None = None) -> Iterator[list[Any]]:
        """The rows, one at a time (the inbox's other members into *head* as they come); ``ValueError`` part-way
        for one that is not a row as :func:`_encode_decision` writes it, or a text that is not a kept inbox."""
        for row in reading.object_rows(self.text, "items", {} if head is None else head):
            if not isinstance(row, list) or len(row) != DECISION_FIELDS or row[0] not in KINDS:
                raise ValueError("not a kept decision")
            yield row

    def readable(self) -> tuple[list[str], list[str], dict[str, str]] | None:
        """:func:`_readable` of the inbox, when every row is one and the inbox is of that shape (checked through
        once: a reader given its rows a part at a time then never meets a bad one part-way); else None."""
        head: dict[str, Any] = {}
        if not _all_held(self.rows(head)):
            return None
        try:
            return _readable(head)
        except (AttributeError, KeyError, TypeError):
            return None


def _kept_rows(index: StoreIndex) -> _KeptRows | None:
    """The decisions of the inbox *index* keeps, while it is fresh; None when it is not kept or no longer fresh
    (then only the decisions can say)."""
    text = index.kept_text(INBOX_FACT)
    return None if text is None else _KeptRows(text)


def kept_inbox(index: StoreIndex) -> KeptInbox | None:
    """The inbox *index* keeps while it is fresh, its decisions as :class:`DecisionRow`\\ s: what :func:`read_inbox`
    gives through *index* shows the same, with every decision built (a :class:`~pathlib.Path` for each of its
    folders and reports); None when it is not kept, no longer fresh, or of another shape (then read it)."""
    kept = _kept_rows(index)
    if kept is None:
        return None
    head: dict[str, Any] = {}
    try:
        items = [DecisionRow(*row[:DECISION_ROW_FIELDS]) for row in kept.rows(head)]
        return KeptInbox(items, *_readable(head))
    except (AttributeError, KeyError, RecursionError, TypeError, ValueError):
        return None


def waiting_rows(
    project: Project, index: StoreIndex
) -> Iterator[tuple[DecisionKey, str, Callable[[], PendingDecision]]]:
    """Each decision waiting in *project*, as :func:`read_inbox` reads it through *index* (newest first): its
    :func:`decision_key`, its task folder's path as text ('' for a decision of none) and a maker of the whole
    decision. From the inbox *index* keeps while it is fresh, a row at a time, so that a reader that needs the
    whole decision of a few (the notices: those new since they last looked) builds only those."""
    kept = _kept_rows(index)
    if kept is None or kept.readable() is None:
        yield from waiting_of(read_inbox(project, index).items)
        return
    paths = _Paths()
    for row in kept.rows():
        kind, task, path, item, _summary, _since, detail = row[:7]
        key = (kind, task, path, item or "", detail or "")
        yield key, row[TASK_ROOT_FIELD] or "", functools.partial(_decode_decision, row, paths)


def waiting_of(
    decisions: Iterable[PendingDecision],
) -> Iterator[tuple[DecisionKey, str, Callable[[], PendingDecision]]]:
    """*decisions* as :func:`waiting_rows` gives them: each one's key, task folder's path as text and a maker."""
    for decision in decisions:
        yield decision_key(decision), _opt_path(decision.task_root) or "", functools.partial(_same, decision)


def _same(decision: PendingDecision) -> PendingDecision:
    return decision


def waiting_per_task(project: Project, index: StoreIndex | None = None) -> dict[str, int]:
    """The decisions waiting per task folder (project-relative) of *project*: those of the inbox *index* keeps
    while it is fresh, counted without building a decision; else those of :func:`read_inbox`. The same counts
    either way."""
    if index is not None and (counts := kept_counts(project.root, index)) is not None:
        return counts
    return _count_by_task(project.root, (d.task_root for d in read_inbox(project, index).items))


def waiting_and_kept(project: Project, index: StoreIndex | None = None) -> tuple[dict[str, int], str | None]:
    """:func:`waiting_per_task`, and the MAC the inbox is left kept with in *index* (None without one): a watcher
    whose first look finds the inbox kept with that MAC knows no other reader kept it since these counts
    (:attr:`InboxTold.first_found`)."""
    if index is None:
        return waiting_per_task(project), None
    index.follow_mac(INBOX_FACT)
    return waiting_per_task(project, index), index.left_mac(INBOX_FACT)


def _count_by_task(root: Path, task_roots: Iterable[str | Path | None]) -> dict[str, int]:
    """How many of *task_roots* (a decision's task folder each; None: a decision of no task) name each folder
    below *root*, by its project-relative path."""
    counts: dict[str, int] = {}
    for task_root in task_roots:
        if isinstance(task_root, str | Path):
            try:
                rel = layout.rel(task_root, root)
            except ValueError:
                continue  # no task folder of this project: a decision of none
            counts[rel] = counts.get(rel, 0) + 1
    return counts


def _encode_inbox(inbox: Inbox) -> Any:
    return {
        "items": [_encode_decision(d) for d in inbox.items],
        "unreadable": inbox.unreadable,
        "unlisted": inbox.unlisted,
        "reasons": inbox.unlisted_reasons,
    }


def _decode_inbox(root: Path, value: Any) -> Inbox:
    paths = _Paths()
    items = [_decode_decision(row, paths) for row in value["items"]]
    return Inbox(items, *_readable(value))


def _readable(value: Any) -> tuple[list[str], list[str], dict[str, str]]:
    """A kept inbox's unreadable files, unlisted folders and why each could not be listed."""
    reasons = {str(k): str(v) for k, v in value["reasons"].items()}
    return [str(u) for u in value["unreadable"]], [str(u) for u in value["unlisted"]], reasons


def _inbox_of_tasks(project: Project, index: StoreIndex, runs: list[tuple[Path, KeptRun]]) -> Inbox:
    """The inbox from one fact per task; each task's latest run is added to *runs*."""
    root = project.root
    refs, unlisted_rel = task_list(project, index)
    found: list[PendingDecision] = []
    unreadable: set[str] = set()
    unlisted: dict[Path, str] = {root / rel: reason for rel, reason in unlisted_rel.items()}
    parts = task_facts(index, project, refs, TASK_FACT_PREFIX, _task_inbox, _encode_task, _decode_task)
    for ref, part in parts:
        found.extend(part.items)
        unreadable.update(part.unreadable)
        unlisted.update((root / rel, reason) for rel, reason in part.unlisted.items())
        if part.run is not None:
            runs.append((ref.root, part.run))
    reasons = {
        _folder_rel(path, root): reason
        for path, reason in unlisted.items()
        if not any(parent in unlisted for parent in path.parents)
    }
    return Inbox(sort_newest_first(found), sorted(unreadable), sorted(reasons), reasons)


def task_facts(
    index: StoreIndex,
    project: Project,
    refs: list[TaskRef],
    prefix: str,
    compute: Callable[[Project, TaskRef], T],
    encode: Callable[[T], Any],
    decode: Callable[[Any], T],
    wanted: Callable[[TaskRef], bool] | None = None,
) -> Iterator[tuple[TaskRef, T]]:
    """One fact per task of *refs* (those *wanted*), named *prefix* + the task's folder and catalog key, in
    order; then the facts under *prefix* of tasks no longer listed are forgotten.

    The kept facts are read a batch at a time, and those computed are written a batch at a time: a pass over
    100,000 tasks holds a few hundred of them, never all.
    """
    from ..store_index import BATCH

    strip = os.fspath(project.root).rstrip(os.sep) + os.sep
    # The catalog's key is part of the name: the task list fact hands it in, the task's reads do not.
    named = [(f"{prefix}{os.fspath(ref.root).removeprefix(strip)}\x00{ref.key or ''}", ref) for ref in refs]
    asked = [(name, ref) for name, ref in named if wanted is None or wanted(ref)]
    for start in range(0, len(asked), BATCH):
        batch = asked[start : start + BATCH]
        index.prefetch([name for name, _ in batch])
        for name, ref in batch:
            yield ref, index.fact(name, functools.partial(compute, project, ref), encode, decode)
    index.prune(prefix, {name for name, _ in named})


def task_list(project: Project, index: StoreIndex) -> tuple[list[TaskRef], dict[str, str]]:
    """The project's tasks (as :attr:`Project.task_refs` lists them) and the folders that could not be listed
    (project-relative, with why), as the store index's task list fact: every verb answering through the index
    shares it."""
    root = project.root
    return index.fact(
        TASKS_FACT, lambda: _list_tasks(project), lambda v: _encode_tasks(root, v), lambda v: _decode_tasks(project, v)
    )


def _list_tasks(project: Project) -> tuple[list[TaskRef], dict[str, str]]:
    """The task list as the index keeps it. When reading it is what validated the catalog, each task is handed
    on by its catalog key rather than its validated entry, and the validated catalog is let go: a pass over
    every task does not hold it (a few kilobytes a task) until it ends."""
    held = "task_refs" in project.__dict__
    refs = project.task_refs
    unlisted = {layout.rel(p, project.root): e.reason for p, e in project.unlisted.items()}
    if held:
        return refs, unlisted
    project.forget()
    return [TaskRef(project, r.task_group, r.task_id, r.root, None, r.key) for r in refs], unlisted


def _encode_tasks(root: Path, value: tuple[list[TaskRef], dict[str, str]]) -> Any:
    refs, unlisted = value
    rows = [[r.task_group, r.task_id, layout.rel(r.root, root), r.key] for r in refs]
    return {"refs": rows, "unlisted": unlisted}


def _decode_tasks(project: Project, value: Any) -> tuple[list[TaskRef], dict[str, str]]:
    refs = [
        TaskRef(project, str(group), str(task_id), project.root / str(rel), None, key)
        for group, task_id, rel, key in value["refs"]
    ]
    unlisted = {str(k): str(v) for k, v in value["unlisted"].items()}
    return refs, unlisted


class _TaskPart(NamedTuple):
    """One task's decisions, the files it could not read, the folders below it it could not list, and its latest
    run (None: its manifest cannot be read)."""

    items: list[PendingDecision]
    unreadable: list[str]
    unlisted: dict[str, str]
    run: KeptRun | None


def _task_inbox(project: Project, ref: TaskRef) -> _TaskPart:
    """One task's part of the inbox (and its latest run)."""
    before = set(project.unlisted)
    task = ref.open()
    task.entries()
    scan = _scan(task)
    items = scan.all()
    folders = {layout.rel(p, project.root): e.reason for p, e in project.unlisted.items() if p not in before}
    return _TaskPart(items, sorted(scan.rel(path) for path in scan.unreadable), folders, kept_run(task))


def _encode_task(part: _TaskPart) -> Any:
    items = [_encode_decision(d) for d in part.items]
    run = None if part.run is None else list(part.run)
    return {"items": items, "unreadable": part.unreadable, "unlisted": part.unlisted, "run": run}


#: How many fields a kept decision has, and where its task folder is (:func:`_encode_decision`).
DECISION_FIELDS: Final = 11
#: A kept row begins with the fields of a :class:`DecisionRow`, in its order.
DECISION_ROW_FIELDS: Final = len(DecisionRow._fields)
TASK_ROOT_FIELD: Final = 9


def _encode_decision(d: PendingDecision) -> list[Any]:
    paths = [_opt_path(d.report_path), _opt_path(d.request_path), _opt_path(d.task_root)]
    return [d.kind, d.task, d.path, d.item, d.summary, d.since, d.detail, *paths, list(d.item_ids)]


def _opt_path(path: Path | None) -> str | None:
    return None if path is None else os.fspath(path)


class _Paths(dict[str, Path]):
    """Each path text made a :class:`~pathlib.Path` once (the decisions of one task share its folder and often
    its report)."""

    def __missing__(self, text: str) -> Path:
        self[text] = found = Path(text)
        return found

    def of(self, text: str | None) -> Path | None:
        return None if text is None else self[text]


def _decode_decision(row: list[Any], paths: _Paths | None = None) -> PendingDecision:
    kind, task, path, item, summary, since, detail, report, request, task_root, ids = row
    if kind not in KINDS:
        raise ValueError(kind)
    paths = _Paths() if paths is None else paths
    return PendingDecision(
        kind,
        task,
        path,
        item,
        summary,
        since,
        detail,
        report_path=paths.of(report),
        request_path=paths.of(request),
        item_ids=tuple(str(i) for i in ids),
        task_root=paths.of(task_root),
    )


def _decode_task(value: Any) -> _TaskPart:
    paths = _Paths()
    items = [_decode_decision(row, paths) for row in value["items"]]
    run = None if value["run"] is None else _kept_run(value["run"])
    unlisted = {str(k): str(v) for k, v in value["unlisted"].items()}
    return _TaskPart(items, [str(u) for u in value["unreadable"]], unlisted, run)


def _scan(task: Task) -> TaskScan:
    """One task's reads for its decisions (the rules, and the models they need, are imported on first use: an
    answer the store index kept is shown without them)."""
    from .inbox_scan import TaskScan

    return TaskScan(task)


def _folder_rel(path: Path, root: Path) -> str:
    """A folder as the inbox names it: project-relative POSIX with a final ``/`` (as git names folders)."""
    try:
        return layout.rel(path, root) + "/"
    except ValueError:
        return str(path) + "/"


def refresh_inbox(project: Project, before: Inbox, task_roots: set[Path]) -> Inbox:
    """*before* with the tasks at *task_roots* read again (and the others as they were): what a watcher does
    after a change it can place in a few task folders. A root no task has any more drops its decisions."""
    kept = [d for d in before.items if d.task_root not in task_roots]
    rels = tuple(layout.rel(r, project.root) + "/" for r in task_roots)
    unreadable = {u for u in before.unreadable if not (u + "/").startswith(rels)}
    reasons = {u: r for u, r in before.unlisted_reasons.items() if not u.startswith(rels)}
    for ref in project.task_refs:
        if ref.root in task_roots:
            task = ref.open()
            task.entries()
            scan = _scan(task)
            kept.extend(scan.all())
            unreadable.update(scan.rel(path) for path in scan.unreadable)
    unlisted = set(project.unlisted)
    for path, error in project.unlisted.items():
        inside = any(path.is_relative_to(r) for r in task_roots)
        if inside and not any(parent in unlisted for parent in path.parents):
            reasons[_folder_rel(path, project.root)] = error.reason
    return Inbox(sort_newest_first(kept), sorted(unreadable), sorted(reasons), reasons)


def pending_decisions(project: Project) -> list[PendingDecision]:
    """Every decision waiting for a person in *project*, newest first (ties: task, kind, item)."""
    return read_inbox(project).items


def pending_for_task(task: Task) -> list[PendingDecision]:
    """The decisions waiting in one task (in kind order)."""
    return _scan(task).all()


#: The run-dir folders where a person's decision lands (a sidecar, a design-prep input).
_LANDING_CATEGORIES = tuple(names.KINDS_BY_NAME[kind].category for kind in ("user-response", "design-prep-input"))


def read_paths(project: Project, index: StoreIndex | None = None) -> list[str]:
    """What to look at to see the inbox change, when polling: every file the inbox read, folder it listed and path
    it probed, as absolute paths (recorded as it reads: nothing here lists them by hand). Through *index*, a warm
    read costs one look at each of those paths, which a poll takes again. Text, not ``Path``: a poll of a large
    store names tens of thousands, and parsing each into a ``Path`` cost more than looking at it.
    """
    with reading.recording() as reads:
        _read(project, index)
    return list(reads.paths)


def _structure(root: Path) -> list[Path]:
    """The folders and file that change when a task is added or removed: the store, its task groups, the catalog."""
    tasks = layout.tasks_dir(root)
    return [layout.okstra_dir(root), tasks, layout.task_catalog_path(root), *(tasks / g for g in _entries(tasks))]


def _landing(task: Task) -> list[Path]:
    """Where a person's decision on *task* lands: ``instruction-set/`` (a selected direction), the clarification
    response (appended in place), and each run dir's ``user-responses/`` and design-prep inputs."""
    out = [layout.instruction_set_dir(task.root), layout.clarification_response_path(task.root)]
    for rd in task.run_dirs:
        out += [layout.category_dir(rd.path, category) for category in _LANDING_CATEGORIES]
    return out


class HotPaths:
    """The quick look of a polling watcher (``StoreWatcher(hot_paths=...)``): where inbox changes show first.

    That is every task folder, since okstra publishes a task's manifest by a
    rename in it (a run prepared or ended, a report recorded, an approval
    asked all change the folder), and, for the tasks in :attr:`waiting`, where
    a person's decision lands (a sidecar, a selected direction, an attached
    answer, a design-prep input). The task list is read again only when the
    catalog or a task-group folder changed, and a waiting task's run dirs only
    when its folder changed. A change made any other way is caught by the
    watcher's full look, later.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        #: The task folders with a decision waiting; the caller keeps it current.
        self.waiting: set[Path] = set()
        self._key: Signature | None = None
        #: Every task folder, with its group and task names (no catalog entry is kept: a store of 100,000
        #: tasks would hold all their validated entries for the life of the watcher).
        self._tasks: dict[Path, tuple[str, str]] = {}
        #: Per waiting task: its folder's mtime when its landing paths were listed, and those paths.
        self._landing: dict[Path, tuple[int, list[Path]]] = {}

    def __call__(self) -> list[Path]:
        structure = _structure(self.root)
        key = signature(structure)
        if key != self._key:
            self._tasks = {ref.root: (ref.task_group, ref.task_id) for ref in Project(self.root).task_refs}
            self._key = key
        out = [*structure, *self._tasks]
        project: Project | None = None
        for task_root in sorted(self.waiting):
            names = self._tasks.get(task_root)
            if names is not None:
                project = project or Project(self.root)
                out += self._landing_of(TaskRef(project, names[0], names[1], task_root))
        self._landing = {root: self._landing[root] for root in self.waiting if root in self._landing}
        return out

    def _landing_of(self, ref: TaskRef) -> list[Path]:
        try:
            stamp = os.stat(ref.root).st_mtime_ns
        except OSError:
            return []
        known = self._landing.get(ref.root)
        if known is None or known[0] != stamp:
            known = self._landing[ref.root] = (stamp, _landing(ref.open()))
        return known[1]


class InboxTold:
    """What changed among what the inbox reads, asked of the store index: the part of a polling watcher
    (``StoreWatcher(told=...)``) that would otherwise keep a baseline of every path the inbox read (about seven
    a task) and look at each of them a second time.

    Each call reads the inbox through the index *open_index* gives (called with the look to use), so that the
    index looks once at every path its kept inbox read and reads again only the tasks whose files changed; the
    paths whose look differs from what the index recorded are what changed since the last call, for the index
    recorded them then. Another process that kept the inbox in between (an ``okstra inbox`` run elsewhere)
    recorded newer looks, hiding a change made before it: the inbox fact's MAC says so, and the call answers
    None ("cannot say which"). Where there is no usable index (*open_index* None, or no key, no cache folder),
    it keeps a baseline of what a fresh reading read and compares with it. The first call answers what changed
    since the index kept the inbox (another reader kept it before this one began: the workbench's count at its
    start), nothing when there was none kept. It waits for *ready* first, when given: another reader of the
    whole inbox that is to bring the index up to date (the workbench's counting child), so that a cold index is
    not built twice at once.
    """

    def __init__(
        self,
        root: Path,
        open_index: Callable[[StatPass], StoreIndex | str] | None,
        ready: Callable[[], object] | None = None,
    ) -> None:
        self.root = root
        self._open = open_index
        self._ready = ready
        self._called = False
        #: The inbox fact's MAC as the last call left it (None: not known).
        self._mac: str | None = None
        #: What a fresh reading read, as the last call saw it, where the index could not be used.
        self._looked: Signature | None = None
        #: The MAC the first call found the inbox kept with (None: none was kept, or no index was used): its answer
        #: named every change since the reader that left it (a count made then needs no whole look again).
        self.first_found: str | None = None

    def __call__(self) -> set[str] | None:
        from ..store_index import StatPass, StoreIndex

        first, self._called = not self._called, True
        if first and self._ready is not None:
            self._ready()
        look = StatPass(noting=True)
        index = None if self._open is None else self._open(look)
        if not isinstance(index, StoreIndex) or not index.usable:
            if isinstance(index, StoreIndex):
                index.close(keep=False)
            self._mac = None
            return self._looked_here(first)
        with index:
            index.follow_mac(INBOX_FACT)
            # The kept inbox brought up to date; while it holds, its value (megabytes of decisions) is not read.
            if not index.holds(INBOX_FACT):
                _read(Project(self.root), index)
            found, left = index.found_mac(INBOX_FACT), index.left_mac(INBOX_FACT)
        known, self._mac, self._looked = self._mac, left, None
        assert look.differed is not None
        if first:
            self.first_found = found
            return look.differed if found is not None else set()
        if known is None or found != known:
            return None
        return look.differed

    def _looked_here(self, first: bool) -> set[str] | None:
        now = signature(read_paths(Project(self.root)))
        before, self._looked = self._looked, now
        if before is None:
            return set() if first else None
        return {path for path in before.keys() | now.keys() if before.get(path) != now.get(path)}


def _entries(folder: Path) -> list[str]:
    listed = reading.list_folder(folder)
    return [] if isinstance(listed, reading.LoadError) else listed


#: What tells two decisions apart across two reads of the inbox: kind, task key, path, item and detail.
DecisionKey = tuple[str, str, str, str, str]


def decision_key(decision: PendingDecision) -> DecisionKey:
    """What tells two decisions apart across two reads of the inbox (its summary and time may be re-worded)."""
    return (decision.kind, decision.task, decision.path, decision.item or "", decision.detail or "")


def inbox_changes(
    before: list[PendingDecision], after: list[PendingDecision]
) -> tuple[list[PendingDecision], list[PendingDecision]]:
    """The decisions that started waiting (in *after*'s order) and those that stopped (in *before*'s order)."""
    old = {decision_key(d) for d in before}
    new = {decision_key(d) for d in after}
    return [d for d in after if decision_key(d) not in old], [d for d in before if decision_key(d) not in new]
