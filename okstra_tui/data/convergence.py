"""Convergence trails: one execution's groups, rounds, working and terminal state, and migrations."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okstra_core import layout
from okstra_core.store import RunDir, Task


@dataclass(slots=True)
class ConvergenceTrail:
    """One execution's convergence files (they share the ``state/`` seq)."""

    run: RunDir
    seq_text: str
    groups: Any = None
    work: Any = None
    plans: dict[int, Any] = field(default_factory=dict)
    results: dict[int, Any] = field(default_factory=dict)
    final: Any = None
    migrations: list[Path] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)


CONVERGENCE_KINDS = (
    "convergence-groups",
    "convergence-work",
    "convergence-round-plan",
    "convergence-round-results",
    "convergence-final",
)


def load_convergence(task: Task) -> list[ConvergenceTrail]:
    """Every convergence trail of the task, by run dir and seq."""
    trails: list[ConvergenceTrail] = []
    for rd in task.run_dirs:
        by_seq: dict[str, ConvergenceTrail] = {}
        for art in rd.artifacts("state"):
            if art.kind not in CONVERGENCE_KINDS:
                continue
            seq_text = art.name.seq_text or "?"
            trail = by_seq.setdefault(seq_text, ConvergenceTrail(rd, seq_text))
            trail.paths.append(art.path)
            loaded = art.load()
            if art.kind == "convergence-groups":
                trail.groups = loaded
            elif art.kind == "convergence-work":
                trail.work = loaded
            elif art.kind == "convergence-final":
                trail.final = loaded
            elif art.kind == "convergence-round-plan":
                trail.plans[art.name.round or 0] = loaded
            else:
                trail.results[art.name.round or 0] = loaded
        migrations = rd.path / layout.STATE_DIR / layout.MIGRATIONS_DIR
        archived = sorted(migrations.iterdir()) if migrations.is_dir() else []
        for trail in by_seq.values():
            trail.migrations = archived
        if archived and not by_seq:
            trail = ConvergenceTrail(rd, "-")
            trail.migrations = archived
            by_seq["-"] = trail
        trails.extend(by_seq[k] for k in sorted(by_seq))
    return trails
