"""The rules that make a decision pending, read from one task: what
:func:`okstra_core.workflows.inbox.read_inbox` lists (``docs/inbox.md`` has them in prose)."""

from __future__ import annotations

import datetime as dt
import stat
from pathlib import Path

from .. import layout, reading, times
from ..digests import sha256_bytes
from ..models.report import ClarificationItem, SelectedDirection
from ..models.sidecars import UserResponseHeader
from ..store import Task
from ..times import iso
from . import design_prep, user_response, user_response_export
from .direction import sidecar_path_for
from .inbox_items import InboxDetail, InboxKind, PendingDecision, one_line
from .reports import LoadedReport, latest_report, load_report_artifact


def _mtime(path: Path, known: dict[Path, int | None] | None = None) -> str:
    """*path*'s modification time as the store records times; from *known* when it was looked at already."""
    ns = known[path] if known is not None and path in known else reading.mtime_of(path)
    try:
        return iso(dt.datetime.fromtimestamp((ns or 0) / 1e9, dt.UTC))
    except (ValueError, OverflowError, OSError):
        return iso(dt.datetime.fromtimestamp(0, dt.UTC))


def _recorded(value: object, fallback: Path) -> str:
    """A store-recorded time normalised to UTC seconds, or *fallback*'s mtime when it is missing or unreadable."""
    moment = times.parse_time(value) if isinstance(value, str) else None
    return iso(moment) if moment is not None else _mtime(fallback)


def _questions(items: list[ClarificationItem]) -> str:
    return f"{len(items)} question{'s' if len(items) != 1 else ''}"


class TaskScan:
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
        #: The modification time of each file looked at already (each path is looked at once).
        self._mtimes: dict[Path, int | None] = {}
        self._clar_text: str | bool | None = False  # False: not read yet
        #: Existing files whose read or parse failed (their decisions may be missing or marked).
        self.unreadable: set[Path] = set()
        self.note(manifest)

    def all(self) -> list[PendingDecision]:
        """The task's decisions, in kind order."""
        return [*self.direction(), *self.clarifications(), *self.design_prep(), *self.approval()]

    def note(self, result: object) -> None:
        """Remember the file of a ``LoadError`` that exists (a missing file is no read error)."""
        if isinstance(result, reading.LoadError) and reading.lexists(result.path):
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
        try:
            st = reading.lstat(path)
        except (OSError, ValueError):
            return path, None, None
        if not stat.S_ISLNK(st.st_mode):
            self._mtimes[path] = st.st_mtime_ns  # its time, should a decision show it: not looked at again
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
            text = reading.read_text(path, root=self.root) if reading.lexists(path) else None
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
                    _mtime(sidecar, self._mtimes),
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
                    _mtime(sidecar, self._mtimes),
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
                _mtime(sidecar, self._mtimes),
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
                        _mtime(sidecar, self._mtimes),
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
