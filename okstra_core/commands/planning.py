"""``okstra planning prepare``: snapshot the selected direction for implementation planning."""

from __future__ import annotations

import argparse
from typing import Any

from .. import reading
from ..errors import OkstraError
from ..write_log import Verb
from .common import (
    add_at_option,
    add_group,
    add_task_args,
    clock_of,
    named_refusals,
    open_project,
    open_task,
    rel,
    say,
    task_verb,
)


def cmd_planning_prepare(args: argparse.Namespace) -> int:
    from ..models.report import SelectedDirection
    from ..workflows import direction

    project = open_project(args)
    task = open_task(project, args.task)
    path = direction.planning_prepare(project.root, task, clock_of(args))
    snap = reading.load_model(path, SelectedDirection, root=project.root)
    if isinstance(snap, reading.LoadError):
        raise OkstraError(snap.path, snap.reason)
    say(f"{rel(project, path)}: {snap.option_id} ({snap.mode}) sourceDataSha256 {snap.source_data_sha256}")
    return 0


def prepare_verb(task: str) -> Verb:
    """The command line of :func:`cmd_planning_prepare` for the write log."""
    return task_verb(("planning", "prepare"), task)


def register(sub: Any) -> None:
    """Add the ``planning`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "planning", "implementation-planning preparation")
    p = d.add_parser(
        "prepare", help="verify the option report digest and write instruction-set/selected-direction.json"
    )
    add_task_args(p)
    add_at_option(p)
    p.set_defaults(func=named_refusals(cmd_planning_prepare))
