"""``okstra convergence seed``: seed or resume the convergence working state."""

from __future__ import annotations

import argparse
from typing import Any

from .. import layout, names, reading
from .common import (
    add_group,
    add_run_args,
    add_task_args,
    find_artifact,
    find_run_dir,
    named_refusals,
    open_project,
    open_task,
    rel,
    say,
)


def cmd_convergence_seed(args: argparse.Namespace) -> int:
    from ..workflows import convergence

    project = open_project(args)
    task = open_task(project, args.task)
    rd = find_run_dir(task, args.run_type, args.stage)
    groups = find_artifact(rd, "convergence-groups", args.seq)
    parsed = names.parse_in_category(layout.STATE_DIR, groups.name)
    assert parsed is not None and parsed.seq is not None
    before = reading.read_bytes(
        convergence.state_path(rd.path, "convergence-work", rd.task_type, parsed.seq), root=project.root
    )
    work = convergence.seed_work(
        project.root, rd.path, rd.task_type, parsed.seq, restart_from_round0=args.restart_from_round0
    )
    after = reading.read_bytes(work, root=project.root)
    if isinstance(before, reading.LoadError):
        state = "seeded from Round 0"
    elif before == after:
        state = "resumed (matching valid working state; nothing written)"
    else:
        state = "restarted from Round 0 (previous state archived under state/migrations/)"
    say(f"{rel(project, work)}: {state}")
    return 0


def register(sub: Any) -> None:
    """Add the ``convergence`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "convergence", "convergence state")
    p = d.add_parser("seed", help="seed the working state from the groups file")
    add_task_args(p)
    add_run_args(p)
    p.add_argument("--seq", type=int, default=None, help="convergence-groups seq (default: the newest)")
    p.add_argument(
        "--restart-from-round0",
        action="store_true",
        help="archive invalid or partial state under state/migrations/ and start again from Round 0",
    )
    p.set_defaults(func=named_refusals(cmd_convergence_seed))
