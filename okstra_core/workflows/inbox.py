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

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .. import layout, names, reading, times
from ..digests import sha256_bytes
from ..models.report import ClarificationItem, SelectedDirection
from ..models.sidecars import UserResponseHeader
from ..store import Project, Task, TaskRef
from ..text import visible
from ..times import iso
from ..watch import Signature, signature
from . import design_prep, user_response, user_response_export
from .direction import sidecar_path_for
from .reports import LoadedReport, latest_report, load_report_artifact

InboxKind = Literal["direction-choice", "planning-prepare", "clarification", "design-prep", "approval"]
#: Why a decision is pending beyond "nothing answers it yet" (None: just that).
InboxDetail = Literal[
    "attach-pending",  # clarification: answered by a sidecar not yet attached to clarification-response.md
    "sidecar-stale",  # direction-choice: the sidecar's source-data-sha256 differs from the report bytes
    "sidecar-invalid",  # direction-choice: the sidecar does not parse
    "stale-fingerprint",  # design-prep: the last revision answers an older assessment
    "duplicate-revision",  # design-prep: the last revision number is recorded more than once
    "invalid-revision",  # design-prep: the last revision does not parse or disagrees with its name
]
KINDS: tuple[InboxKind, ...] = ("direction-choice", "planning-prepare", "clarification", "design-prep", "approval")
#: What each kind is called in a notice and in the activity feed ("a direction to choose").
DECISION_WORDS: dict[InboxKind, str] = {
    "direction-choice": "a direction to choose",
    "planning-prepare": "a choice to hand to planning",
    "clarification": "questions to answer",
    "design-prep": "a design item to confirm",
    "approval": "a phase to approve",
}
SUMMARY_MAX = 160


@dataclass(frozen=True, slots=True)
class PendingDecision:
    """One decision waiting for a person.

    ``path`` is the file the decision concerns (POSIX, relative to the project
    root): the option report (direction-choice), the sidecar (planning-prepare,
    attach-pending clarification), the report asking the questions
    (clarification), the item's request when materialised else the planning
    report (design-prep), ``task-manifest.json`` (approval).
    """

    kind: InboxKind
    task: str  # task key project:group:task
    path: str
    item: str | None  # IO-nnn (the choice recorded, planning-prepare), PREP-nnn (design-prep), else None
    summary: str  # one line, at most SUMMARY_MAX characters, control characters made visible
    since: str  # ISO-8601 UTC, see the module docstring
    detail: InboxDetail | None = None
    #: The report data the decision derives from (absolute): option report, questioning report, planning snapshot.
    report_path: Path | None = None
    #: The design-prep request (absolute) when materialised; None otherwise and for other kinds.
    request_path: Path | None = None
    #: The ids the decision covers: candidate IO-nnn (direction-choice), CQ-nnn (clarification).
    item_ids: tuple[str, ...] = ()
    #: The task's root folder (absolute).
    task_root: Path | None = None

    def to_json(self) -> dict[str, str | None]:
        """The ``okstra inbox --json`` item shape."""
        return {
            "kind": self.kind,
            "task": self.task,
            "path": self.path,
            "item": self.item,
            "summary": self.summary,
            "since": self.since,
        }


@dataclass(frozen=True, slots=True)
class Inbox:
    """The decisions waiting in a project, and the files the inbox could not read.

    ``unreadable`` lists (project-relative POSIX, sorted) the existing files
    that failed to read or parse: a task manifest, a latest report, a
    user-response sidecar, ``selected-direction.json`` or
    ``clarification-response.md``. A decision they hold may be missing from
    ``items`` or shown with a ``detail`` saying so; ``okstra check`` says why.

    ``unlisted`` lists (project-relative POSIX with a final ``/``, sorted) the
    folders the inbox had to list and could not (``.okstra/tasks/``, a task
    folder, its ``runs/``, a run dir or a category folder of it), with
    ``unlisted_reasons`` saying why for each: every decision below them is
    missing from ``items``. The list is complete only when both are empty
    (:attr:`complete`).
    """

    items: list[PendingDecision]
    unreadable: list[str]
    unlisted: list[str] = field(default_factory=list)
    unlisted_reasons: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Whether everything the inbox had to read was read (no unreadable file, no unlisted folder)."""
        return not self.unreadable and not self.unlisted


def read_inbox(project: Project) -> Inbox:
    """The inbox of *project*: its decisions newest first (ties: task, kind, item) and its unreadable files."""
    found: list[PendingDecision] = []
    unreadable: set[str] = set()
    for ref in project.task_refs:
        task = ref.open()
        task.entries()  # an unlistable task folder is recorded, never taken for an empty one
        scan = _TaskScan(task)
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
            scan = _TaskScan(task)
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


def sort_newest_first(items: list[PendingDecision]) -> list[PendingDecision]:
    ordered = sorted(items, key=lambda d: (d.task, KINDS.index(d.kind), d.item or "", d.path))
    return sorted(ordered, key=lambda d: d.since, reverse=True)


def pending_for_task(task: Task) -> list[PendingDecision]:
    """The decisions waiting in one task (in kind order)."""
    return _TaskScan(task).all()


# ------------------------------------------------------------------ helpers


def one_line(text: str, limit: int = SUMMARY_MAX) -> str:
    """Whitespace runs (newlines included) become one space, control characters visible stand-ins
    (:func:`okstra_core.text.visible`); long text is cut with an ellipsis."""
    flat = visible(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _mtime(path: Path) -> str:
    try:
        return iso(dt.datetime.fromtimestamp(os.stat(path).st_mtime, dt.UTC))
    except (OSError, ValueError, OverflowError):
        return iso(dt.datetime.fromtimestamp(0, dt.UTC))


def _recorded(value: object, fallback: Path) -> str:
    """A store-recorded time normalised to UTC seconds, or *fallback*'s mtime when it is missing or unreadable."""
    moment = times.parse_time(value) if isinstance(value, str) else None
    return iso(moment) if moment is not None else _mtime(fallback)


def _questions(items: list[ClarificationItem]) -> str:
    return f"{len(items)} question{'s' if len(items) != 1 else ''}"


class _TaskScan:
    """One task's reads, shared by the kinds (each file read at most once)."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.root = task.project.root
        manifest = task.manifest
        # Without a readable manifest: the catalog's key, else the task's group/task folder (find_task takes both).
        self.key = (
            manifest.task_key
            if not isinstance(manifest, reading.LoadError)
            else (task.ref.key or f"{task.ref.task_group}/{task.ref.task_id}")
        )
        self._reports: dict[str, LoadedReport | None] = {}
        self._clar_text: str | bool | None = False  # False: not read yet
        #: Existing files whose read or parse failed (their decisions may be missing or marked).
        self.unreadable: set[Path] = set()
        self.note(manifest)

    def all(self) -> list[PendingDecision]:
        """The task's decisions, in kind order."""
        return [*self.direction(), *self.clarifications(), *self.design_prep(), *self.approval()]

    def note(self, result: object) -> None:
        """Remember the file of a ``LoadError`` that exists (a missing file is no read error)."""
        if isinstance(result, reading.LoadError) and os.path.lexists(result.path):
            self.unreadable.add(result.path)

    def rel(self, path: Path) -> str:
        return layout.rel(path, self.root)

    def latest(self, task_type: str) -> LoadedReport | None:
        if task_type not in self._reports:
            art = latest_report(self.task, task_type)
            loaded = load_report_artifact(art) if art is not None else None
            self.note(loaded)
            self._reports[task_type] = loaded if isinstance(loaded, LoadedReport) else None
        return self._reports[task_type]

    def since_report(self, report: LoadedReport) -> str:
        return _recorded(report.model.generated_at, report.path)

    def decision(
        self,
        kind: InboxKind,
        path: Path,
        summary: str,
        since: str,
        *,
        item: str | None = None,
        detail: InboxDetail | None = None,
        report_path: Path | None = None,
        request_path: Path | None = None,
        item_ids: tuple[str, ...] = (),
    ) -> PendingDecision:
        return PendingDecision(
            kind=kind,
            task=self.key,
            path=self.rel(path),
            item=item,
            summary=one_line(summary),
            since=since,
            detail=detail,
            report_path=report_path,
            request_path=request_path,
            item_ids=item_ids,
            task_root=self.task.root,
        )

    def sidecar(self, report: LoadedReport) -> tuple[Path, UserResponseHeader | reading.LoadError | None, bytes | None]:
        """The report's user-response sidecar: its path, header (None: absent) and bytes."""
        path = sidecar_path_for(report)
        if not os.path.lexists(path):
            return path, None, None
        data = reading.read_bytes(path, root=self.root)
        if isinstance(data, reading.LoadError):
            self.note(data)
            return path, data, None
        text = reading.decode_text(path, data)
        if isinstance(text, reading.LoadError):
            self.note(text)
            return path, text, None
        loaded = reading.parse_sidecar_text(path, text, UserResponseHeader)
        if isinstance(loaded, reading.LoadError):
            self.note(loaded)
            return path, loaded, data
        header = loaded.header
        assert isinstance(header, UserResponseHeader)
        return path, header, data

    def attached(self, sidecar: Path, data: bytes) -> bool:
        if self._clar_text is False:
            path = layout.clarification_response_path(self.task.root)
            text = reading.read_text(path, root=self.root) if os.path.lexists(path) else None
            self.note(text)
            self._clar_text = text if isinstance(text, str) else None
        if not isinstance(self._clar_text, str):
            return False
        return user_response_export.is_attached(self._clar_text, self.rel(sidecar), sha256_bytes(data))

    # ------------------------------------------------------------- kinds

    def direction(self) -> list[PendingDecision]:
        report = self.latest(layout.OPTION_SELECTION)
        if report is None or user_response.sidecar_mode(report.model) != "comparison":
            return []
        oc = report.model.option_candidates
        assert oc is not None  # comparison mode implies candidates
        selected = self.task.selected_direction()
        self.note(selected)
        if isinstance(selected, SelectedDirection) and selected.source_report_path == report.rel():
            return []  # planning prepare consumed a choice from this report
        ids = tuple(c.option_id for c in oc.candidates)
        sidecar, header, _data = self.sidecar(report)
        choose = (
            f"choose a direction for '{report.model.title}': {len(ids)} options"
            + (f", {oc.recommendation} recommended" if oc.recommendation else "")
            + (f", {_questions(report.model.clarification_items)}" if report.model.clarification_items else "")
        )
        if header is None:
            return [
                self.decision(
                    "direction-choice",
                    report.path,
                    choose,
                    self.since_report(report),
                    report_path=report.path,
                    item_ids=ids,
                )
            ]
        if isinstance(header, reading.LoadError):
            return [
                self.decision(
                    "direction-choice",
                    report.path,
                    f"{choose} (the sidecar there does not parse)",
                    _mtime(sidecar),
                    detail="sidecar-invalid",
                    report_path=report.path,
                    item_ids=ids,
                )
            ]
        if header.source_data_sha256 != report.sha256 or header.selected_option not in ids:
            return [
                self.decision(
                    "direction-choice",
                    report.path,
                    f"{choose} again (the recorded choice no longer matches the report)",
                    _mtime(sidecar),
                    detail="sidecar-stale",
                    report_path=report.path,
                    item_ids=ids,
                )
            ]
        if selected is not None:
            return []  # a snapshot exists (from another report, or unreadable): planning prepare is not the step
        chosen = next(c for c in oc.candidates if c.option_id == header.selected_option)
        return [
            self.decision(
                "planning-prepare",
                sidecar,
                f"run planning prepare: {chosen.option_id} '{chosen.title}' is chosen; it can still change until then",
                _mtime(sidecar),
                item=chosen.option_id,
                report_path=report.path,
                item_ids=ids,
            )
        ]

    def clarifications(self) -> list[PendingDecision]:
        out: list[PendingDecision] = []
        types = sorted({rd.task_type for rd in self.task.run_dirs})
        for task_type in types:
            report = self.latest(task_type)
            if report is None or not report.model.clarification_items:
                continue
            items = report.model.clarification_items
            ids = tuple(i.item_id for i in items)
            sidecar, header, data = self.sidecar(report)
            comparison = user_response.sidecar_mode(report.model) == "comparison"
            if header is None or isinstance(header, reading.LoadError):
                if comparison:
                    continue  # listed as its direction-choice, whose sidecar answers the questions too
                first = one_line(items[0].question or items[0].item_id, 80)
                out.append(
                    self.decision(
                        "clarification",
                        report.path,
                        f"answer {_questions(items)} of '{report.model.title}': {first}",
                        self.since_report(report),
                        report_path=report.path,
                        item_ids=ids,
                    )
                )
            elif data is not None and not self.attached(sidecar, data):
                out.append(
                    self.decision(
                        "clarification",
                        sidecar,
                        f"attach the answers to {_questions(items)} of '{report.model.title}' to "
                        f"{layout.CLARIFICATION_RESPONSE_FILE}",
                        _mtime(sidecar),
                        detail="attach-pending",
                        report_path=report.path,
                        item_ids=ids,
                    )
                )
        return out

    def design_prep(self) -> list[PendingDecision]:
        report = self.latest(layout.IMPLEMENTATION_PLANNING)
        if report is None or report.model.implementation_plan is None:
            return []
        resolution = design_prep.resolve(self.task, report)
        if resolution.error is not None or resolution.legacy_unassessed:
            return []
        since = self.since_report(report)
        out: list[PendingDecision] = []
        for item in resolution.items:
            if item.status not in design_prep.OPEN_STATUSES or item.fingerprint is None:
                continue
            if item.authoritative is not None:
                continue
            detail: InboxDetail | None = None
            last_rank = max((v.rank for v in item.inputs), default=(0, 0))
            last = last_rank[1]
            verdicts = {v.verdict for v in item.inputs if v.rank == last_rank}
            note = ""
            if "duplicate-revision" in verdicts:
                detail, note = "duplicate-revision", f" (duplicate revision r{last}: neither copy counts)"
            elif "stale-fingerprint" in verdicts:
                detail, note = "stale-fingerprint", f" (r{last} went stale: it answers an older assessment)"
            elif "invalid" in verdicts:
                detail, note = "invalid-revision", f" (r{last} is unreadable)"
            requested = item.request  # None until materialised
            out.append(
                self.decision(
                    "design-prep",
                    requested or report.path,
                    f"confirm {item.prep_id} [{item.status}] '{item.title}'{note}",
                    since,
                    item=item.prep_id,
                    detail=detail,
                    report_path=report.path,
                    request_path=requested,
                )
            )
        return out

    def approval(self) -> list[PendingDecision]:
        manifest = self.task.manifest
        if isinstance(manifest, reading.LoadError) or manifest.workflow is None:
            return []
        workflow = manifest.workflow
        if not workflow.awaiting_approval:
            return []
        nxt = workflow.next_recommended_phase
        if nxt is not None and nxt.phase:
            what = f"approve in the lead's session before {nxt.phase} runs"
        else:
            what = f"approve the {workflow.current_phase or manifest.task_type} result in the lead's session"
        if nxt is not None and nxt.rationale:
            what += f": {nxt.rationale}"
        path = layout.task_manifest_path(self.task.root)
        return [self.decision("approval", path, what, _recorded(manifest.updated_at, path))]


__all__ = [
    "DECISION_WORDS",
    "KINDS",
    "HotPaths",
    "Inbox",
    "InboxDetail",
    "InboxKind",
    "PendingDecision",
    "decision_key",
    "inbox_changes",
    "pending_decisions",
    "pending_for_task",
    "read_inbox",
    "refresh_inbox",
    "watched_paths",
]


_DESIGN_PREP_KINDS = ("design-prep-request", "design-prep-input")
#: The run-dir folders whose entries the inbox reads (a new report, sidecar or design-prep file shows in them).
_WATCHED_CATEGORIES = tuple(
    names.KINDS_BY_NAME[kind].category for kind in ("final-report-data", "user-response", *_DESIGN_PREP_KINDS)
)
#: The run-dir folders where a person's decision lands (a sidecar, a design-prep input).
_LANDING_CATEGORIES = tuple(names.KINDS_BY_NAME[kind].category for kind in ("user-response", "design-prep-input"))


def watched_paths(project: Project) -> list[Path]:
    """What to look at to see the inbox change, when polling: the folders and files its reads depend on.

    Folders change their mtime when an entry is added, renamed or removed, and
    our writers publish every file by a create or a rename, so a folder stands
    for its entries; the files the inbox reads in place (the task manifest,
    ``selected-direction.json``, ``clarification-response.md``) are named too.
    """
    out = _structure(project.root)
    for ref in project.task_refs:
        out += _task_watched(ref.open())
    return out


def _structure(root: Path) -> list[Path]:
    """The folders and file that change when a task is added or removed: the store, its task groups, the catalog."""
    tasks = layout.tasks_dir(root)
    return [layout.okstra_dir(root), tasks, layout.task_catalog_path(root), *(tasks / g for g in _entries(tasks))]


def _task_watched(task: Task) -> list[Path]:
    out = [
        task.root,
        layout.task_manifest_path(task.root),
        layout.instruction_set_dir(task.root),
        layout.selected_direction_path(task.root),
        layout.clarification_response_path(task.root),
        layout.runs_dir(task.root),
    ]
    for rd in task.run_dirs:
        out.append(rd.path)
        out += [layout.category_dir(rd.path, category) for category in _WATCHED_CATEGORIES]
    return out


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


def _entries(folder: Path) -> list[str]:
    listed = reading.list_folder(folder)
    return [] if isinstance(listed, reading.LoadError) else listed


def decision_key(decision: PendingDecision) -> tuple[str, str, str, str, str]:
    """What tells two decisions apart across two reads of the inbox (its summary and time may be re-worded)."""
    return (decision.kind, decision.task, decision.path, decision.item or "", decision.detail or "")


def inbox_changes(
    before: list[PendingDecision], after: list[PendingDecision]
) -> tuple[list[PendingDecision], list[PendingDecision]]:
    """The decisions that started waiting (in *after*'s order) and those that stopped (in *before*'s order)."""
    old = {decision_key(d) for d in before}
    new = {decision_key(d) for d in after}
    return [d for d in after if decision_key(d) not in old], [d for d in before if decision_key(d) not in new]
