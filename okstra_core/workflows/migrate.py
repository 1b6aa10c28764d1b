"""Legacy migration: flat artifacts at the top of a task-type run dir move into their category folders.

A file keeps its seq when that number is free in the target folder (so the
execution's files stay together); otherwise it gets a newly allocated seq.
Nothing is ever overwritten.

The migration takes a seq by creating its claim (``<category>/.seq/<seq>``)
with the content :data:`MIGRATION_CLAIM`; a seq claimed that way stays
available to the rest of the same legacy execution, so a migration that was
interrupted and retried keeps the files of one execution together. One
migration at a time per run dir (a lock beside it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import layout, names, writes
from ..store import RunDir, Task


@dataclass(frozen=True)
class Move:
    source: Path
    target: Path
    reallocated: bool


def claim_content(original_seq: int) -> bytes:
    """Content of a seq claim made by a migration (an execution's own claims are empty)."""
    return f"migrate-legacy from {names.format_seq(original_seq)}\n".encode()


def _claim(folder: Path, seq: int) -> Path:
    return folder / layout.SEQ_CLAIMS_DIR / names.format_seq(seq)


def _migration_claims(folder: Path) -> dict[int, int]:
    """Original legacy seq -> seq the migration took for it in *folder* (from the claims' content)."""
    out: dict[int, int] = {}
    claims = folder / layout.SEQ_CLAIMS_DIR
    try:
        entries = os.listdir(claims)
    except OSError:
        return out
    for entry in entries:
        if not names.is_canonical_seq(entry):
            continue
        try:
            with open(claims / entry, "rb") as fh:
                text = fh.read(64).decode("ascii", "replace")
        except OSError:
            continue
        if text.startswith("migrate-legacy from ") and names.is_canonical_seq(text[20:].strip()):
            out[int(text[20:].strip())] = int(entry)
    return out


def _seq_free(folder: Path, seq: int) -> bool:
    if _claim(folder, seq).exists():
        return False
    if not folder.is_dir():
        return True
    for entry in folder.iterdir():
        parsed = names.parse_in_category(folder.name, entry.name)
        if parsed is not None and parsed.seq == seq:
            return False
    return True


def plan_moves(rd: RunDir) -> list[Move]:
    """What :func:`migrate_run_dir` would do, without doing it.

    Per category, every flat file of one legacy seq lands on one seq: the seq
    a previous (interrupted) migration already took for it, else the same
    number when it is free, else one past the highest seq in use (artifacts and
    claims alike).
    """
    moves: list[Move] = []
    chosen: dict[tuple[str, int], int] = {}
    taken: dict[str, set[int]] = {}
    for source, parsed in sorted(rd.flat_legacy(), key=lambda sp: sp[0].name):
        folder = rd.path / parsed.category
        assert parsed.seq is not None
        key = (parsed.category, parsed.seq)
        if key not in chosen:
            used = taken.setdefault(parsed.category, set())
            earlier = _migration_claims(folder).get(parsed.seq)
            if earlier is not None:
                seq = earlier
            elif parsed.seq not in used and _seq_free(folder, parsed.seq):
                seq = parsed.seq
            else:
                seq = max([layout.seqs_in_use(folder), *used]) + 1
            used.add(seq)
            chosen[key] = seq
        seq = chosen[key]
        target = folder / names.build(
            parsed.kind, task_type=parsed.task_type, seq=seq, worker_id=parsed.worker_id, round=parsed.round
        )
        moves.append(Move(source, target, seq != parsed.seq))
    return moves


def migrate_run_dir(project_root: Path, rd: RunDir, dry_run: bool = False) -> list[Move]:
    """Move every flat legacy artifact of *rd* into its category folder."""
    if dry_run:
        return plan_moves(rd)
    writes.ensure_dir(project_root, rd.path)
    with writes.locked(rd.path / ".migrate-legacy"):
        return _migrate(project_root, plan_moves(rd))


def _migrate(project_root: Path, moves: list[Move]) -> list[Move]:
    done: list[Move] = []
    claimed: set[tuple[str, int]] = set()
    for move in moves:
        parsed = names.parse_in_category(move.target.parent.name, move.target.name)
        assert parsed is not None and parsed.seq is not None
        key = (parsed.category, parsed.seq)
        if key not in claimed:
            original = names.parse_in_category(parsed.category, move.source.name) or names.classify_flat(
                move.source.name
            )
            assert original is not None and original.seq is not None
            claim = _claim(move.target.parent, parsed.seq)
            writes.ensure_dir(project_root, claim.parent)
            writes.create_only(project_root, claim, claim_content(original.seq))
            claimed.add(key)
        writes.move_no_overwrite(project_root, move.source, move.target)
        done.append(move)
    return done


def migrate_task(project_root: Path, task: Task, dry_run: bool = False) -> list[Move]:
    """Migrate every run dir of *task*; returns the moves made (or planned, with *dry_run*)."""
    out: list[Move] = []
    for rd in task.run_dirs:
        out += migrate_run_dir(project_root, rd, dry_run)
    return out
