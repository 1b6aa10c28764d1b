"""Legacy migration: flat artifacts at the top of a task-type run dir move into their category folders.

A file keeps its seq when that number is free in the target folder (so the
execution's files stay together); otherwise it gets a newly allocated seq.
Nothing is ever overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import layout, names, writes
from ..store import RunDir, Task


@dataclass(frozen=True)
class Move:
    source: Path
    target: Path
    reallocated: bool


def _seq_free(folder: Path, seq: int) -> bool:
    if (folder / layout.SEQ_CLAIMS_DIR / layout.format_seq(seq)).exists():
        return False
    if not folder.is_dir():
        return True
    for entry in folder.iterdir():
        parsed = names.parse_in_category(folder.name, entry.name)
        if parsed is not None and parsed.seq == seq:
            return False
    return True


def plan_moves(rd: RunDir) -> list[Move]:
    """What :func:`migrate_run_dir` would do, without doing it."""
    moves: list[Move] = []
    fresh: dict[tuple[str, int], int] = {}
    planned_free: set[tuple[str, int]] = set()
    next_seq: dict[str, int] = {}
    for source, parsed in sorted(rd.flat_legacy(), key=lambda sp: sp[0].name):
        folder = rd.path / parsed.category
        assert parsed.seq is not None
        key = (parsed.category, parsed.seq)
        if key in planned_free or (key not in fresh and _seq_free(folder, parsed.seq)):
            planned_free.add(key)
            seq, reallocated = parsed.seq, False
        else:
            if key not in fresh:
                base = next_seq.get(parsed.category) or (max(
                    [p.seq or 0 for p in (names.parse_in_category(parsed.category, e.name) for e in folder.iterdir()) if p]
                    if folder.is_dir() else [0], default=0) + 1)
                fresh[key] = base
                next_seq[parsed.category] = base + 1
            seq, reallocated = fresh[key], True
        target = folder / names.build(parsed.kind, task_type=parsed.task_type, seq=seq, worker_id=parsed.worker_id,
                                      round=parsed.round)
        moves.append(Move(source, target, reallocated))
    return moves


def migrate_run_dir(project_root: Path, rd: RunDir, dry_run: bool = False) -> list[Move]:
    """Move every flat legacy artifact of *rd* into its category folder."""
    moves = plan_moves(rd)
    if dry_run:
        return moves
    done: list[Move] = []
    claimed: set[tuple[str, int]] = set()
    for move in moves:
        parsed = names.parse_in_category(move.target.parent.name, move.target.name)
        assert parsed is not None and parsed.seq is not None
        key = (parsed.category, parsed.seq)
        if key not in claimed:
            claim = move.target.parent / layout.SEQ_CLAIMS_DIR / layout.format_seq(parsed.seq)
            writes.ensure_dir(project_root, claim.parent)
            writes.create_only(project_root, claim, b"")
            claimed.add(key)
        writes.move_no_overwrite(project_root, move.source, move.target)
        done.append(move)
    return done


def migrate_task(project_root: Path, task: Task, dry_run: bool = False) -> list[Move]:
    out: list[Move] = []
    for rd in task.run_dirs:
        out += migrate_run_dir(project_root, rd, dry_run)
    return out
