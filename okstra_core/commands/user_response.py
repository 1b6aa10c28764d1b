"""``okstra user-response export``: write the user-response sidecar for a set of answers."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import reading
from ..store import Task
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


def cmd_user_response_export(args: argparse.Namespace) -> int:
    from ..workflows import user_response_export

    project = open_project(args)
    task = open_task(project, args.task)
    report = input_path(project, args.report)
    answers = read_answers(input_path(project, args.answers))
    before = _current_sidecar(task, report)
    path, superseded = user_response_export.export(
        project.root, task, report, answers, args.option, clock=clock_of(args)
    )
    after = reading.read_bytes(path, root=project.root)
    say(f"{rel(project, path)}: {'unchanged (same answers already exported)' if before == after else 'written'}")
    if superseded is not None:
        say(f"{rel(project, superseded)}: earlier export kept as a superseded copy")
    return 0


def _current_sidecar(task: Task, report: Path) -> bytes | None:
    from ..workflows.direction import sidecar_path_for
    from ..workflows.reports import report_by_path

    path = sidecar_path_for(report_by_path(task, report))
    data = reading.read_bytes(path, root=task.project.root)
    return data if isinstance(data, bytes) else None


def export_verb(task: str, report: str, answers: Mapping[str, str]) -> Verb:
    """The command line of :func:`cmd_user_response_export` for the write log (*report* project-relative)."""
    return task_verb(("user-response", "export"), task, ("--report", report), inputs=(answers_input(answers),))


def register(sub: Any) -> None:
    """Add the ``user-response`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "user-response", "user-response sidecars")
    p = d.add_parser("export", help="write user-responses/user-response-<task-type>-<seq>.md for these answers")
    add_task_args(p)
    p.add_argument("--report", required=True, metavar="PATH", help="the report's data.json")
    p.add_argument("--answers", required=True, metavar="FILE", help='JSON object {"CQ-001": "..."}')
    p.add_argument("--option", default=None, metavar="IO-NNN", help="selected option (comparison-mode reports)")
    add_at_option(p)
    p.set_defaults(func=named_refusals(cmd_user_response_export))
