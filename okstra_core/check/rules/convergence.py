"""Convergence trail under a run's ``state/``: rounds, results, the final, migrations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import names
from ...models.convergence import ConvergenceFinal, ConvergenceGroups, ConvergenceWork, RoundPlan
from ...workflows.convergence import round_problems
from ..catalog import (
    CONVERGENCE_ROUNDS_GAP,
    FINAL_GROUP_UNKNOWN,
    FINAL_REPLACED_UNARCHIVED,
    PLAN_OUTSIDE_ROSTER,
    ROUND_WITHOUT_RESULTS,
)
from .scope import Artifact, RunScope, TaskScope

if TYPE_CHECKING:
    from ..unit import Unit


def check_run(scope: TaskScope, run: RunScope) -> None:
    """Per convergence (one state seq): contiguous rounds, results for every closed round."""
    unit = scope.unit
    by_seq: dict[int, dict[str, list[Artifact]]] = {}
    for art in run.of_kind(
        "convergence-round-plan",
        "convergence-round-results",
        "convergence-work",
        "convergence-final",
        "convergence-groups",
    ):
        if art.name.seq is not None and not art.flat:
            by_seq.setdefault(art.name.seq, {}).setdefault(art.kind, []).append(art)
    for seq, kinds in sorted(by_seq.items()):
        plans = [a.name.round for a in kinds.get("convergence-round-plan", []) if a.name.round is not None]
        results = [a.name.round for a in kinds.get("convergence-round-results", []) if a.name.round is not None]
        works = kinds.get("convergence-work", [])
        work = unit.doc(works[0].path, ConvergenceWork) if works else None
        is_open = work is not None and work.status == "open" and not kinds.get("convergence-final")
        anchor = (kinds.get("convergence-work") or kinds.get("convergence-round-plan") or next(iter(kinds.values())))[
            0
        ].path
        for problem in round_problems(run.path, plans, results, is_open):
            rule = ROUND_WITHOUT_RESULTS if "no results" in problem else CONVERGENCE_ROUNDS_GAP
            unit.report(rule, anchor, f"convergence seq {seq:03d}: {problem}")
        _migrations(scope, run, seq, kinds)
        _against_groups(unit, kinds)


def _against_groups(unit: Unit, kinds: dict[str, list[Artifact]]) -> None:
    """The final's groups and each round plan's analysers and groups are ones the lead's groups file holds."""
    files = kinds.get("convergence-groups", [])
    groups_doc = unit.doc(files[0].path, ConvergenceGroups) if len(files) == 1 else None
    if groups_doc is None:
        return
    name = files[0].entry.name
    written = {g.group_id for g in groups_doc.groups if g.group_id}
    for art in kinds.get("convergence-final", []):
        final = unit.doc(art.path, ConvergenceFinal)
        for i, outcome in enumerate(final.groups if final is not None else []):
            if outcome.group_id and outcome.group_id not in written:
                unit.report(
                    FINAL_GROUP_UNKNOWN,
                    art.path,
                    f"groups[{i}] holds group {outcome.group_id!r}, which the lead never wrote in {name} "
                    f"(it holds: {_some(written)})",
                )
    roster = set(groups_doc.roster)
    for art in kinds.get("convergence-round-plan", []):
        plan = unit.doc(art.path, RoundPlan)
        for i, dispatch in enumerate(plan.dispatches if plan is not None else []):
            if roster and dispatch.analyser_id and dispatch.analyser_id not in roster:
                unit.report(
                    PLAN_OUTSIDE_ROSTER,
                    art.path,
                    f"dispatches[{i}] goes to analyser {dispatch.analyser_id!r}, outside the roster of {name} "
                    f"({_some(roster)})",
                )
            unknown = [g for g in dispatch.group_ids if g not in written]
            if roster and unknown:
                unit.report(
                    PLAN_OUTSIDE_ROSTER,
                    art.path,
                    f"dispatches[{i}] plans group(s) {_some(set(unknown))}, which the lead never wrote in {name} "
                    f"(it holds: {_some(written)})",
                )


def _some(values: set[str], limit: int = 8) -> str:
    shown = sorted(values)
    return (", ".join(shown[:limit]) or "none") + (f" and {len(shown) - limit} more" if len(shown) > limit else "")


def _archived_value(unit: Unit, path: Path | str) -> Any:
    """The JSON value an archive holds, or None. Archives are byte-for-byte copies of state that
    was replaced because it was invalid or partial, so bad bytes in them are expected, not findings."""
    raw = unit.data(path)
    if raw is None:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _migrations(scope: TaskScope, run: RunScope, seq: int, kinds: dict[str, list[Artifact]]) -> None:
    """Archives under ``state/migrations/``: a restart that replaced a final must have archived it."""
    unit = scope.unit
    if run.migrations is None:
        return
    archived = [e for e in unit.entries(run.migrations) if e.kind == "file"]
    work_names = {a.entry.name for a in kinds.get("convergence-work", [])}
    final_names = (
        {names.build("convergence-final", task_type=run.task_type, seq=seq)} if run.task_type and seq else set()
    )
    final_archives = [e for e in archived if any(e.name.startswith(f + ".") for f in final_names)]
    for e in archived:
        base = e.name.split(".json.", 1)[0] + ".json"
        if base in work_names:
            value = _archived_value(unit, e.path)
            was_terminal = isinstance(value, dict) and value.get("status") == "terminal"
            if was_terminal and not final_archives and kinds.get("convergence-final"):
                unit.report(
                    FINAL_REPLACED_UNARCHIVED,
                    e.path,
                    "the restarted working state was terminal, but the final it replaced has no archive in "
                    "state/migrations/",
                )
        elif base in final_names:
            value = _archived_value(unit, e.path)
            if value is not None and unit.validate_quiet(value, ConvergenceFinal):
                unit.report(
                    FINAL_REPLACED_UNARCHIVED,
                    e.path,
                    "a valid terminal final was replaced (a valid final is reused unchanged)",
                )
