"""``okstra direction select``: record the confirmed option of a comparison-mode report."""

from __future__ import annotations

import argparse
from typing import Any

from .. import reading
from .common import (
    add_group,
    add_task_args,
    input_path,
    named_refusals,
    open_project,
    open_task,
    read_answers,
    rel,
    say,
)


def cmd_direction_select(args: argparse.Namespace) -> int:
    from ..models.sidecars import UserResponseHeader
    from ..workflows import direction

    project = open_project(args)
    task = open_task(project, args.task)
    report = input_path(project, args.report) if args.report else None
    answers = read_answers(input_path(project, args.answers)) if args.answers else None
    path = direction.select_direction(project.root, task, args.option, report_path=report, answers=answers)
    loaded = reading.load_sidecar(path, UserResponseHeader, root=project.root)
    header = loaded.header if not isinstance(loaded, reading.LoadError) else None
    digest = header.source_data_sha256 if isinstance(header, UserResponseHeader) else "?"
    say(f"{rel(project, path)}: selected {args.option} (source-data-sha256 {digest})")
    return 0


def register(sub: Any) -> None:
    """Add the ``direction`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "direction", "direction selection (comparison-mode user-response sidecar)")
    p = d.add_parser(
        "select", help="record the confirmed IO-NNN choice and the report digest; the report is never touched"
    )
    add_task_args(p)
    p.add_argument("--option", required=True, metavar="IO-NNN")
    p.add_argument("--report", default=None, metavar="PATH", help="option-selection data.json (default: the newest)")
    p.add_argument(
        "--answers", default=None, metavar="FILE", help='JSON object of clarification answers {"CQ-001": ...}'
    )
    p.set_defaults(func=named_refusals(cmd_direction_select))
