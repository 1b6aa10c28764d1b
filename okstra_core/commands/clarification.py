"""``okstra clarification attach``: attach the user-response sidecars to the clarification response."""

from __future__ import annotations

import argparse
from typing import Any

from ..write_log import Verb
from .common import add_group, add_task_args, named_refusals, open_project, open_task, rel, say, task_verb


def cmd_clarification_attach(args: argparse.Namespace) -> int:
    from ..workflows import user_response_export

    project = open_project(args)
    task = open_task(project, args.task)
    target, attached = user_response_export.attach_clarification(project.root, task)
    if attached:
        for sidecar in attached:
            say(f"{rel(project, target)}: attached {sidecar}")
    else:
        say(f"{rel(project, target)}: up to date (every sidecar already attached)")
    return 0


def attach_verb(task: str) -> Verb:
    """The command line of :func:`cmd_clarification_attach` for the write log (it records no time)."""
    return task_verb(("clarification", "attach"), task, timed=False)


def register(sub: Any) -> None:
    """Add the ``clarification`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "clarification", "clarification responses")
    p = d.add_parser(
        "attach", help="attach the task's user-response sidecars to instruction-set/clarification-response.md"
    )
    add_task_args(p)
    p.set_defaults(func=named_refusals(cmd_clarification_attach))
