"""``okstra direction select``: record the confirmed option of a comparison-mode report."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from .. import reading
from ..write_log import Verb
from .common import (
    add_at_option,
    add_group,
    add_task_args,
    answers_input,
    clock_of,
    input_path,
    named_refusals,
    open_project,
    open_task,
    read_answers,
    rel,
    say,
    task_verb,
)


def cmd_direction_select(args: argparse.Namespace) -> int:
    from ..models.sidecars import UserResponseHeader
    from ..workflows import direction

    project = open_project(args)
    task = open_task(project, args.task)
    report = input_path(project, args.report) if args.report else None
    answers = read_answers(input_path(project, args.answers)) if args.answers else None
    path = direction.select_direction(
        project.root, task, args.option, report_path=report, answers=answers, clock=clock_of(args)
    )
    loaded = reading.load_sidecar(path, UserResponseHeader, root=project.root)
    header = loaded.header if not isinstance(loaded, reading.LoadError) else None
    digest = header.source_data_sha256 if isinstance(header, UserResponseHeader) else "?"
    say(f"{rel(project, path)}: selected {args.option} (source-data-sha256 {digest})")
    return 0


def select_verb(task: str, option: str, report: str, answers: Mapping[str, str] | None) -> Verb:
    """The command line of :func:`cmd_direction_select` for the write log (*report* project-relative)."""
    inputs = (answers_input(answers),) if answers else ()
    return task_verb(("direction", "select"), task, ("--option", option), ("--report", report), inputs=inputs)


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
    add_at_option(p)
    p.set_defaults(func=named_refusals(cmd_direction_select))
