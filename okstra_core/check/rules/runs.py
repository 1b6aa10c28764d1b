"""Executions across files: run identity, the timeline, seqs against run times and the task's latest-run pointers.

Every rule here holds one file against another. A rule whose inputs are not
there (no timeline, no status file, a segment that is no time) says nothing:
the single-file rules report what is missing or malformed.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import layout, times
from ...models import run as rm
from ...models import task as tm
from ..catalog import (
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
    for run in scope.runs:
        _segments(scope, run, [e for e in executions if e.run is run])
    timeline = _timeline(scope)
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


def _segments(scope: TaskScope, run: RunScope, executions: list[Execution]) -> None:
    """Each run-level JSON artifact belongs to an execution; one execution, one seq per folder, in time order."""
    unit = scope.unit
    known = [e.segment for e in executions]
    known_text = set(known)
    known_moments = {e.moment for e in executions if e.moment is not None}
    rows: dict[str, dict[str, list[Artifact]]] = {}  # category -> segment -> artifacts (seq'd, not flat)
    for art, seg in run.segments:
        if (
            art.kind in _TIED_TO_MANIFEST
            and known
            and seg not in known_text
            and times.parse_time(seg) not in known_moments
        ):
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
