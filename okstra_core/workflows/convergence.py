"""Convergence state: groups, seeded working state, round plans and results, the terminal final,
and the explicit Round 0 restart that archives replaced state byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from .. import layout, names, reading, writes
from ..digests import pretty_json
from ..errors import ValidationFailed, WriteRefused
from ..models import convergence as cm
from ..times import compact_stamp, iso
from .common import SYSTEM_CLOCK, Clock, update_json

MIGRATIONS = layout.MIGRATIONS_DIR


def state_path(run_dir: Path, kind: str, task_type: str, seq: int, round: int | None = None) -> Path:
    return run_dir / layout.STATE_DIR / names.build(kind, task_type=task_type, seq=seq, round=round)


def write_groups(project_root: Path, run_dir: Path, task_type: str, seq: int, groups: cm.ConvergenceGroups) -> Path:
    path = state_path(run_dir, "convergence-groups", task_type, seq)
    writes.create_only_json(project_root, path, groups.dump())
    return path


def _seed(groups: cm.ConvergenceGroups, groups_rel: str) -> cm.ConvergenceWork:
    return cm.ConvergenceWork(
        schema_version="1.2",
        task_key=groups.task_key,
        status="open",
        queue=[g.group_id for g in groups.groups],
        findings={g.group_id: cm.FindingState(state="open") for g in groups.groups},
        rounds=[cm.RoundRecord(round=0, status="reduced")],
        seeded_from=groups_rel,
        run_date_time_segment=groups.run_date_time_segment,
    )


def seed_work(
    project_root: Path,
    run_dir: Path,
    task_type: str,
    seq: int,
    *,
    restart_from_round0: bool = False,
    clock: Clock = SYSTEM_CLOCK,
) -> Path:
    """Seed the engine's working state from the groups file.

    A matching valid working state resumes (no write). Invalid or partial state
    fails closed unless *restart_from_round0*; then it is archived byte for byte
    under ``state/migrations/`` before it is replaced. An existing final is
    handled first: a valid terminal final refuses the restart (it is reused
    unchanged), an invalid one is archived and removed only while its archive
    still matches its bytes. A refusal writes nothing.
    """
    groups_path = state_path(run_dir, "convergence-groups", task_type, seq)
    groups = reading.load_model(groups_path, cm.ConvergenceGroups, root=project_root)
    if isinstance(groups, reading.LoadError):
        raise WriteRefused(groups.path, groups.reason)
    work_path = state_path(run_dir, "convergence-work", task_type, seq)
    groups_rel = layout.rel(groups_path, project_root)
    seeded = _seed(groups, groups_rel).dump()
    existing = reading.read_bytes(work_path, root=project_root) if os.path.lexists(work_path) else None
    if isinstance(existing, reading.LoadError):
        raise WriteRefused(existing.path, existing.reason)
    if existing is None:
        writes.create_only_json(project_root, work_path, seeded)
        return work_path
    try:
        current = cm.ConvergenceWork.model_validate_json(existing)
        if current.seeded_from == groups_rel:
            return work_path  # a matching valid working state resumes
        problem = "working state was seeded from other groups"
    except (ValidationError, ValueError) as exc:
        problem = f"working state is invalid or partial ({str(exc).splitlines()[0]})"
    if not restart_from_round0:
        raise WriteRefused(work_path, f"{problem}; refusing to continue (use --restart-from-round0)")
    final_path = state_path(run_dir, "convergence-final", task_type, seq)
    final_bytes = reading.read_bytes(final_path, root=project_root) if os.path.lexists(final_path) else None
    if isinstance(final_bytes, reading.LoadError):
        raise WriteRefused(final_bytes.path, final_bytes.reason)
    if final_bytes is not None and _valid_final(final_bytes):
        raise WriteRefused(final_path, "a valid terminal final is reused unchanged; it is not replaced by a restart")
    archive(project_root, run_dir, work_path, existing, clock)
    if final_bytes is not None:
        replace_final_guard(project_root, run_dir, final_path, clock)
    new_bytes = pretty_json(seeded)

    def restart(current_bytes: bytes | None) -> bytes:
        # Replace only the exact bytes that were archived; anything else changed under us.
        if current_bytes != existing:
            raise WriteRefused(
                work_path, "working state changed while restarting; its archive no longer matches, not replacing it"
            )
        return new_bytes

    writes.replace_locked(project_root, work_path, restart)
    return work_path


def _valid_final(data: bytes) -> bool:
    try:
        cm.ConvergenceFinal.model_validate_json(data)
    except (ValidationError, ValueError):
        return False
    return True


def archive_path(run_dir: Path, original: Path, stamp: str) -> Path:
    return run_dir / layout.STATE_DIR / MIGRATIONS / f"{original.name}.{stamp}.orig"


def archive(project_root: Path, run_dir: Path, original: Path, data: bytes, clock: Clock = SYSTEM_CLOCK) -> Path:
    """Byte-for-byte copy of replaced state under ``state/migrations/``.

    An archive already holding exactly these bytes is reused, so a retried
    restart does not pile up copies.
    """
    for known in archives_for(run_dir, original):
        if reading.read_bytes(known, root=project_root) == data:
            return known
    path = archive_path(run_dir, original, compact_stamp(clock.now()))
    writes.create_only(project_root, path, data)
    return path


def archives_for(run_dir: Path, original: Path) -> list[Path]:
    folder = run_dir / layout.STATE_DIR / MIGRATIONS
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.startswith(original.name + ".") and p.name.endswith(".orig"))


def replace_final_guard(project_root: Path, run_dir: Path, final_path: Path, clock: Clock = SYSTEM_CLOCK) -> None:
    """An existing final is replaced only when its archive still matches its original bytes.

    A valid terminal final is reused unchanged and never replaced.
    """
    data = reading.read_bytes(final_path, root=project_root)
    if isinstance(data, reading.LoadError):
        raise WriteRefused(final_path, data.reason)
    if _valid_final(data):
        raise WriteRefused(final_path, "a valid terminal final is reused unchanged; it is not replaced")
    saved = archive(project_root, run_dir, final_path, data, clock)
    # The invalid final survives in its archive; removing it lets the restarted run finalise again.
    writes.remove_archived(project_root, final_path, saved)


def write_round_plan(project_root: Path, run_dir: Path, task_type: str, seq: int, plan: cm.RoundPlan) -> Path:
    path = state_path(run_dir, "convergence-round-plan", task_type, seq, plan.round)
    writes.create_only_json(project_root, path, plan.dump())

    def mark(doc: cm.ConvergenceWork | None) -> cm.ConvergenceWork | None:
        if doc is None:
            return None
        doc.rounds.append(cm.RoundRecord(round=plan.round, status="planned"))
        return doc

    update_json(project_root, state_path(run_dir, "convergence-work", task_type, seq), cm.ConvergenceWork, mark)
    return path


def reduce_votes(votes: Mapping[str, str], roster_size: int) -> cm.Verdict:
    """Majority of the roster decides; otherwise the finding stays disputed."""
    agree = sum(1 for v in votes.values() if v == "agree")
    disagree = sum(1 for v in votes.values() if v == "disagree")
    if agree * 2 > roster_size:
        return "confirmed"
    if disagree * 2 > roster_size:
        return "rejected"
    return "disputed"


def write_round_results(
    project_root: Path, run_dir: Path, task_type: str, seq: int, results: cm.RoundResults, roster: list[str]
) -> Path:
    path = state_path(run_dir, "convergence-round-results", task_type, seq, results.round)
    writes.create_only_json(project_root, path, results.dump())
    work_path = state_path(run_dir, "convergence-work", task_type, seq)

    def reduce(doc: cm.ConvergenceWork | None) -> cm.ConvergenceWork | None:
        if doc is None:
            return None
        for outcome in results.outcomes:
            for vote in outcome.votes:
                if vote.group_id is None or outcome.analyser_id is None or vote.vote is None:
                    raise ValidationFailed(work_path, f"a vote of round {results.round} lacks its group, voter or vote")
                state = doc.findings.setdefault(vote.group_id, cm.FindingState(state="open"))
                state.votes[outcome.analyser_id] = vote.vote
        for state in doc.findings.values():
            state.state = reduce_votes(state.votes, len(roster))
        doc.queue = [gid for gid, s in doc.findings.items() if s.state == "disputed"]
        for record in doc.rounds:
            if record.round == results.round:
                record.status = "reduced"
        return doc

    update_json(project_root, work_path, cm.ConvergenceWork, reduce)
    return path


def finalize(
    project_root: Path, run_dir: Path, task_type: str, seq: int, terminal_state: str, clock: Clock = SYSTEM_CLOCK
) -> cm.ConvergenceFinal:
    """Write the terminal schema 1.2 state and close the working state."""
    work_path = state_path(run_dir, "convergence-work", task_type, seq)
    groups = reading.load_model(
        state_path(run_dir, "convergence-groups", task_type, seq), cm.ConvergenceGroups, root=project_root
    )
    work = reading.load_model(work_path, cm.ConvergenceWork, root=project_root)
    for doc in (groups, work):
        if isinstance(doc, reading.LoadError):
            raise WriteRefused(doc.path, doc.reason)
    assert isinstance(groups, cm.ConvergenceGroups) and isinstance(work, cm.ConvergenceWork)
    final = cm.ConvergenceFinal(
        schema_version="1.2",
        task_key=groups.task_key,
        terminal_state=terminal_state,
        rounds=max((r.round for r in work.rounds if r.round is not None), default=0),
        roster=groups.roster,
        groups=[
            cm.GroupOutcome(group_id=gid, verdict=("disputed" if s.state == "open" else s.state), votes=s.votes)
            for gid, s in work.findings.items()
        ],
        finalized_at=iso(clock.now()),
        run_date_time_segment=groups.run_date_time_segment,
    )
    writes.create_only_json(project_root, state_path(run_dir, "convergence-final", task_type, seq), final.dump())

    def close(doc: cm.ConvergenceWork | None) -> cm.ConvergenceWork | None:
        if doc is None:
            return None
        doc.status = "terminal"
        return doc

    update_json(project_root, work_path, cm.ConvergenceWork, close)
    return final


def round_problems(run_dir: Path, plans: list[int], results: list[int], is_open: bool) -> list[str]:
    """Rounds contiguous from 1; each plan has its results unless the run is still open (last round only)."""
    problems = []
    if plans and sorted(plans) != list(range(1, max(plans) + 1)):
        problems.append(f"round plans are not contiguous from 1: {sorted(plans)}")
    missing = sorted(set(plans) - set(results))
    if missing and (not is_open or missing != [max(plans)]):
        problems.append(f"round(s) {missing} have a plan but no results")
    orphan = sorted(set(results) - set(plans))
    if orphan:
        problems.append(f"round(s) {orphan} have results but no plan")
    return problems
