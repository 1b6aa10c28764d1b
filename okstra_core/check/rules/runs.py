"""Executions across files: run identity, the timeline, seqs against run times and the task's latest-run pointers.

Every rule here holds one file against another. A rule whose inputs are not
there (no timeline, no status file, a segment that is no time) says nothing:
the single-file rules report what is missing or malformed.
"""

from __future__ import annotations

import datetime as dt
import itertools
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import layout, names, times
from ...models import run as rm
from ...models import task as tm
from ..catalog import (
    ARTIFACT_OF_NO_RUN,
    EXECUTION_SPLIT_SEQ,
    FIX_CYCLE_UNKNOWN,
    LATEST_RUN_DISAGREES,
    RUN_NOT_IN_TIMELINE,
    SEGMENT_WITHOUT_MANIFEST,
    SEQ_ORDER_CONTRADICTS_TIME,
    TIMELINE_SEGMENT_MISMATCH,
)
from . import documents
from .scope import Artifact, RunScope, TaskScope

#: Artifacts written by prepare, dispatch and convergence after the run manifest, for its execution. Report
#: data is left out: the report writer assembles it later and the contract does not tie it to a manifest.
_TIED_TO_MANIFEST = documents.JSON_KINDS - {"run-manifest"}


@dataclass(slots=True)
class Execution:
    """One run manifest of the task: the execution it stands for."""

    run: RunScope
    art: Artifact
    manifest: rm.RunManifest
    rel: str
    moment: dt.datetime | None

    @property
    def segment(self) -> str:
        return self.manifest.run_date_time_segment


def check_task(scope: TaskScope) -> None:
    """The rules that need every run dir of the task at once."""
    executions = _executions(scope)
    timeline = _timeline(scope)
    for run in scope.runs:
        own = [e for e in executions if e.run is run]
        _segments(scope, run, own)
        _of_recorded_runs(scope, run, _recorded(scope, run, own, timeline), own)
    if timeline is not None:
        _timeline_rules(scope, timeline, executions)
    _latest(scope, executions)
    _fix_cycles(scope, timeline, executions)


def _executions(scope: TaskScope) -> list[Execution]:
    out = []
    for run in scope.runs:
        for art, manifest in scope.run_manifests(run):
            moment = times.parse_time(manifest.run_date_time_segment)
            out.append(Execution(run, art, manifest, scope.unit.rel(art.path), moment))
    return out


def _timeline(scope: TaskScope) -> tm.Timeline | None:
    path = layout.timeline_path(scope.root)
    if scope.unit.entry(path) is None:
        return None
    return scope.unit.doc(path, tm.Timeline)


def _same_time(a: str, b: str) -> bool:
    """Whether two recorded segments name the same execution (the same text, or the same moment)."""
    if a == b:
        return True
    ta, tb = times.parse_time(a), times.parse_time(b)
    return ta is not None and ta == tb


# ---------------------------------------------------------------- segments and seqs


@dataclass(slots=True)
class _Segments:
    """Recorded segments, matched as :func:`_same_time` does: the same text, or the same moment."""

    texts: set[str] = field(default_factory=set)
    moments: set[dt.datetime] = field(default_factory=set)

    def add(self, seg: str) -> None:
        self.texts.add(seg)
        if (moment := times.parse_time(seg)) is not None:
            self.moments.add(moment)

    def has(self, seg: str) -> bool:
        return seg in self.texts or times.parse_time(seg) in self.moments

    def __bool__(self) -> bool:
        return bool(self.texts)


def _manifest_segments(executions: list[Execution]) -> _Segments:
    known = _Segments()
    for e in executions:
        known.add(e.segment)
    return known


def _unmanifested(art: Artifact, seg: str, manifests: _Segments) -> bool:
    """Whether OKS042 holds *art* (recording *seg*) to a run manifest of its run dir that none has."""
    return art.kind in _TIED_TO_MANIFEST and bool(manifests) and not manifests.has(seg)


def _segments(scope: TaskScope, run: RunScope, executions: list[Execution]) -> None:
    """Each run-level JSON artifact belongs to an execution; one execution, one seq per folder, in time order."""
    unit = scope.unit
    known = [e.segment for e in executions]
    manifests = _manifest_segments(executions)
    rows: dict[str, dict[str, list[Artifact]]] = {}  # category -> segment -> artifacts (seq'd, not flat)
    for art, seg in run.segments:
        if _unmanifested(art, seg, manifests):
            unit.report(
                SEGMENT_WITHOUT_MANIFEST,
                art.path,
                f"records runDateTimeSegment {seg}, but no run manifest of {unit.rel(run.path)}/ records it "
                f"(they record {_listing(sorted(set(known)))})",
            )
        if art.name.seq is not None and not art.flat:
            rows.setdefault(art.name.category, {}).setdefault(seg, []).append(art)
    for category, by_segment in sorted(rows.items()):
        _split_seqs(scope, category, by_segment)
        _seq_order(scope, category, by_segment)


def _split_seqs(scope: TaskScope, category: str, by_segment: dict[str, list[Artifact]]) -> None:
    for seg, arts in sorted(by_segment.items()):
        seqs = sorted({a.name.seq for a in arts if a.name.seq is not None})
        if len(seqs) < 2:
            continue
        first = {s: min(a.entry.name for a in arts if a.name.seq == s) for s in seqs}
        last = max(arts, key=lambda a: (a.name.seq or 0, a.entry.name))
        scope.unit.report(
            EXECUTION_SPLIT_SEQ,
            last.path,
            f"{category}/ holds files of the execution with runDateTimeSegment {seg} under "
            f"{len(seqs)} seqs ({'; '.join(f'{s:03d}: {first[s]}' for s in seqs)}); "
            "one execution uses one seq for every file it writes in a folder",
        )


def _seq_order(scope: TaskScope, category: str, by_segment: dict[str, list[Artifact]]) -> None:
    """A later seq is a later execution: seqs are taken in order, so recorded times never go back."""
    points = []
    for seg, arts in by_segment.items():
        moment = times.parse_time(seg)
        if moment is None:
            continue
        first = min(arts, key=lambda a: (a.name.seq or 0, a.entry.name))
        points.append((first.name.seq or 0, moment, seg, first))
    points.sort(key=lambda p: (p[0], p[1]))
    for (seq_a, time_a, seg_a, art_a), (seq_b, time_b, seg_b, art_b) in itertools.pairwise(points):
        if seq_b > seq_a and time_b < time_a:
            scope.unit.report(
                SEQ_ORDER_CONTRADICTS_TIME,
                art_b.path,
                f"seq {seq_b:03d} records runDateTimeSegment {seg_b}, earlier than {seg_a} recorded by "
                f"{art_a.entry.name} under the lower seq {seq_a:03d} in {category}/",
            )


# ---------------------------------------------------------------- recorded runs

#: Folders whose seq an execution takes for itself (DECISIONS 1). A user-response is named after the report it
#: answers, and design-prep files after their planning report: their seq is that report's.
_OWN_SEQ_CATEGORIES = frozenset(layout.SEQ_CATEGORIES) - {layout.USER_RESPONSES_DIR}


@dataclass(slots=True)
class _Recorded:
    """The runs of one run dir the task records: by its run manifests, and by timeline entries besides them."""

    manifests: int
    entries: int
    segments: _Segments

    @property
    def count(self) -> int:
        return self.manifests + self.entries

    def says(self, run_rel: str) -> str:
        """What the task records of the runs of *run_rel*, for a message."""
        if not self.count:
            return f"no run of {run_rel}/ is recorded (no run manifest, no {layout.TIMELINE_FILE} entry names it)"
        shown = sorted(self.segments.texts)
        return (
            f"{run_rel}/ records {self.count} run(s) ({self.manifests} run manifest(s), {self.entries} "
            f"{layout.TIMELINE_FILE} entr(ies) besides), with runDateTimeSegment {_listing(shown)}"
        )


def _recorded(scope: TaskScope, run: RunScope, executions: list[Execution], timeline: tm.Timeline | None) -> _Recorded:
    """Every run manifest of *run* (readable or not, flat legacy ones too) and every timeline entry naming it that
    is no execution of those manifests (another manifest path and another segment): a run each."""
    unit = scope.unit
    run_rel = unit.rel(run.path)
    manifests = run.of_kind("run-manifest")
    manifest_rels = {unit.rel(a.path) for a in manifests}
    segments = _manifest_segments(executions)
    extra = 0
    for entry in timeline.entries if timeline is not None else []:
        if not _names_run_dir(scope, entry, run_rel):
            continue
        seg = entry.run_date_time_segment
        named = entry.run_manifest_path is not None and scope.here(entry.run_manifest_path) in manifest_rels
        if named or (seg is not None and segments.has(seg)):
            continue  # an execution a run manifest records already
        extra += 1
        if seg is not None:
            segments.add(seg)
    return _Recorded(len(manifests), extra, segments)


def _names_run_dir(scope: TaskScope, entry: tm.TimelineEntry, run_rel: str) -> bool:
    """Whether a timeline entry names *run_rel*: by its runDir, else by where its run manifest lies."""
    if entry.run_dir is not None:
        return scope.here(entry.run_dir).rstrip("/") == run_rel
    if entry.run_manifest_path is None:
        return False
    folder = posixpath.dirname(scope.here(entry.run_manifest_path))
    if posixpath.basename(folder) == layout.MANIFESTS_DIR:
        folder = posixpath.dirname(folder)
    return folder == run_rel


def _placed(scope: TaskScope, run: RunScope) -> dict[tuple[str, int], str]:
    """``(category, seq) -> segment`` for the seqs a document places in one execution: its own segment (one
    per seq; a seq of two is OKS013's), else a run context's ``pathHints.seqs`` (as ``RunDir.executions``)."""
    rows = [(a.name.category, a.name.seq, seg, a) for a, seg in run.segments if a.name.seq is not None and not a.flat]
    placed = {key: next(iter(by)) for key, by in rm.segments_by_seq(rows).items() if len(by) == 1}
    for art, seg in run.segments:
        hints = getattr(documents.load(scope.unit, art), "path_hints", None)
        if not isinstance(hints, rm.PathHints):
            continue
        for category, seq_text in hints.seqs.items():
            if (value := names.seq_value(seq_text)) is not None:
                placed.setdefault((category, value), seg)
    return placed


def _of_recorded_runs(scope: TaskScope, run: RunScope, recorded: _Recorded, executions: list[Execution]) -> None:
    """Every seq'd artifact of *run* belongs to a run the task records (see :data:`ARTIFACT_OF_NO_RUN`)."""
    groups: dict[tuple[str, int], list[Artifact]] = {}
    for art in run.artifacts:
        if art.name.seq is not None and not art.flat and art.name.category in _OWN_SEQ_CATEGORIES:
            groups.setdefault((art.name.category, art.name.seq), []).append(art)
    if not groups:
        return
    placed = _placed(scope, run)
    manifests = _manifest_segments(executions)
    own = {a.entry.text: seg for a, seg in run.segments}
    run_rel = scope.unit.rel(run.path)
    for category in sorted({c for c, _ in groups}):
        for rank, seq in enumerate(sorted(s for c, s in groups if c == category), 1):
            arts = sorted(groups[(category, seq)], key=lambda a: a.entry.name)
            seg = placed.get((category, seq))
            if seg is None and rank <= recorded.count:
                continue
            if seg is not None and (
                recorded.segments.has(seg)
                or any(a.entry.text in own and _unmanifested(a, own[a.entry.text], manifests) for a in arts)
            ):
                continue  # a recorded run's, or held to its missing run manifest by OKS042
            blamed = next((a for a in arts if a.entry.text in own), arts[0])
            kin = f" (as {len(arts) - 1} other file(s) of {category}/ seq {seq:03d})" if len(arts) > 1 else ""
            if seg is not None:
                what = f"belongs to the execution with runDateTimeSegment {seg}{kin}"
            else:
                what = f"is of {category}/ seq {seq:03d}{kin}, the {_ordinal(rank)} seq there, and records no segment"
            scope.unit.report(ARTIFACT_OF_NO_RUN, blamed.path, f"{what}, but {recorded.says(run_rel)}")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# ---------------------------------------------------------------- timeline


def _timeline_rules(scope: TaskScope, timeline: tm.Timeline, executions: list[Execution]) -> None:
    unit = scope.unit
    path = layout.timeline_path(scope.root)
    by_rel = {e.rel: e for e in executions}
    covered: set[str] = set()
    for i, entry in enumerate(timeline.entries, 1):
        target = by_rel.get(entry.run_manifest_path or "")
        if target is None and entry.run_manifest_path is None and entry.run_date_time_segment is not None:
            covered.update(e.rel for e in executions if _same_time(e.segment, entry.run_date_time_segment))
            continue
        if target is None:
            continue  # a missing or foreign run manifest is OKS040's
        covered.add(target.rel)
        seg = entry.run_date_time_segment
        if seg is not None and not _same_time(seg, target.segment):
            unit.report(
                TIMELINE_SEGMENT_MISMATCH,
                path,
                f"timeline entry {i} records runDateTimeSegment {seg}, but {target.rel} records {target.segment}",
            )
    for e in executions:
        if e.rel in covered or e.art.flat:
            continue  # a flat legacy run predates the layout the timeline describes
        status, source, _ = closed_status(scope, e)
        if status == "completed":
            unit.report(
                RUN_NOT_IN_TIMELINE,
                e.art.path,
                f"the execution with runDateTimeSegment {e.segment} is completed ({source}), but "
                f"{unit.rel(path)} has no entry for it",
            )


def closed_status(scope: TaskScope, e: Execution) -> tuple[str | None, str, bool]:
    """An execution's status, where it is recorded, and whether that is its status file (the run was closed).

    The status file the run manifest names is the run's final word; without
    one, the manifest's own status stands.
    """
    unit = scope.unit
    rel = e.manifest.expected_status_path
    text = unit.text(unit.root / rel) if rel and unit.rel_exists(rel) else None
    if rel and unit.rel_exists(rel) and text is None:
        return None, rel, True
    status, closed = rm.final_status(e.manifest.status, text)
    if not closed:
        return status, f"{e.rel} records status {status!r}", False
    return status, (f"{rel} holds {status!r}" if status is not None else str(rel)), True  # unknown: OKS130's


# ---------------------------------------------------------------- the task's latest-run pointers


def _latest(scope: TaskScope, executions: list[Execution]) -> None:
    """latestRunPath, latestRunStatus, currentStatus and lastSafeCheckpoint against the newest execution.

    Only the task types the contract names make up the task's workflow: a run of another type (reported as
    an unknown type) is never taken as the latest run, and pointers that follow one are not held to this.
    """
    man = scope.manifest
    timed = [e for e in executions if e.moment is not None and e.run.task_type in layout.KNOWN_TASK_TYPES]
    if man is None or not timed:
        return
    newest = max(e.moment for e in timed if e.moment is not None)
    latest = [e for e in timed if e.moment == newest]
    if len({e.rel for e in latest}) != 1:
        return  # two executions at one moment: no single latest run to hold the pointers against
    e = latest[0]
    unit = scope.unit
    path = layout.task_manifest_path(scope.root)
    run_rel = unit.rel(e.run.path)
    if _follows_unnamed_type(scope, executions):
        return
    where = f"the latest run {e.rel} (runDateTimeSegment {e.segment})"
    if man.latest_run_path is not None and scope.here(man.latest_run_path) not in (run_rel, e.rel):
        unit.report(
            LATEST_RUN_DISAGREES,
            path,
            f"latestRunPath {man.latest_run_path!r} is not the run dir {run_rel!r} of {where}",
        )
    status, source, closed = closed_status(scope, e)
    if status is None:
        return
    if man.latest_run_status is not None and man.latest_run_status != status:
        unit.report(
            LATEST_RUN_DISAGREES,
            path,
            f"latestRunStatus is {man.latest_run_status!r}, but {source} for {where}",
        )
    if closed and man.current_status in rm.RUN_STATUSES and man.current_status != status:
        unit.report(
            LATEST_RUN_DISAGREES,
            path,
            f"currentStatus is {man.current_status!r}, but {source} for {where}",
        )
    checkpoint = man.workflow.last_safe_checkpoint if man.workflow is not None else None
    checkpoint = scope.here(checkpoint) if isinstance(checkpoint, str) else checkpoint
    # The contract leaves the checkpoint's shape open: only a checkpoint that names a run manifest is held to this.
    names_run = any(checkpoint == other.rel for other in executions)
    if closed and status == "completed" and names_run and checkpoint != e.rel:
        unit.report(
            LATEST_RUN_DISAGREES,
            path,
            f"workflow.lastSafeCheckpoint is {checkpoint!r}, but {where} is completed ({source}): "
            f"its run manifest is the last safe checkpoint",
        )


def _follows_unnamed_type(scope: TaskScope, executions: list[Execution]) -> bool:
    """Whether the task's latestRunPath or lastSafeCheckpoint names a run of a type the contract does not name."""
    man = scope.manifest
    assert man is not None
    checkpoint = man.workflow.last_safe_checkpoint if man.workflow is not None else None
    named = {scope.here(p) for p in (man.latest_run_path, checkpoint) if isinstance(p, str)}
    return any(
        {o.rel, scope.unit.rel(o.run.path)} & named
        for o in executions
        if o.run.task_type not in layout.KNOWN_TASK_TYPES
    )


# ---------------------------------------------------------------- fix cycles


def _fix_cycles(scope: TaskScope, timeline: tm.Timeline | None, executions: list[Execution]) -> None:
    """A fixCycleId (run manifest or timeline entry) names a cycle that history/fix-cycles.jsonl opened."""
    named: list[tuple[Path, str, str]] = [
        (e.art.path, "fixCycleId", e.manifest.fix_cycle_id) for e in executions if e.manifest.fix_cycle_id
    ]
    timeline_path = layout.timeline_path(scope.root)
    if timeline is not None:
        named += [
            (timeline_path, f"timeline entry {i} fixCycleId", entry.fix_cycle_id)
            for i, entry in enumerate(timeline.entries, 1)
            if entry.fix_cycle_id
        ]
    if not named:
        return
    unit = scope.unit
    log = layout.fix_cycles_path(scope.root)
    present = unit.entry(log) is not None
    events = [ev for _, ev in unit.jsonl(log, tm.FixCycleEvent)] if present else []
    opened = {ev.cycle_id for ev in events if ev.event == "opened" and ev.cycle_id}
    log_rel = unit.rel(log)
    for where, label, cycle in named:
        if cycle in opened:
            continue
        found = f"{log_rel} opens {_listing(sorted(opened))}" if present else f"{log_rel} does not exist"
        unit.report(FIX_CYCLE_UNKNOWN, where, f"{label} {cycle!r} names a cycle that was never opened ({found})")


def _listing(values: list[Any], limit: int = 6) -> str:
    shown = [str(v) for v in values[:limit]]
    if not shown:
        return "none"
    return ", ".join(shown) + (f" and {len(values) - limit} more" if len(values) > limit else "")
