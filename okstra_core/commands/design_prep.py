"""``okstra design-prep``: materialise requests, confirm inputs, resolve the authoritative revisions."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import layout, names
from ..errors import OkstraError
from ..write_log import Input, Verb
from .common import (
    add_at_option,
    add_group,
    add_task_args,
    clock_of,
    input_path,
    named_refusals,
    open_project,
    open_task,
    read_input,
    rel,
    say,
    task_verb,
    write_json,
)


def cmd_design_prep_materialize(args: argparse.Namespace) -> int:
    from ..workflows import design_prep
    from ..writes import Outcome

    project = open_project(args)
    task = open_task(project, args.task)
    report = design_prep.approved_snapshot(task)
    if design_prep.is_markerless(report):
        say(f"{report.rel()}: {design_prep.LEGACY_UNASSESSED}: markerless legacy plan, no requests to materialise")
        return 0
    done = design_prep.materialize(project.root, task)
    if not done:
        say(f"{report.rel()}: no provisional or blocked design items; nothing to materialise")
    for m in done:
        say(
            f"{rel(project, m.path)}: "
            f"{'written' if m.outcome is Outcome.CREATED else 'unchanged (already materialised)'}"
        )
    return 0


def cmd_design_prep_confirm(args: argparse.Namespace) -> int:
    from ..workflows import design_prep

    project = open_project(args)
    task = open_task(project, args.task)
    source = input_path(project, args.input) if args.input != "-" else Path("-")
    text = read_input(source, "answer file")
    path = design_prep.confirm(
        project.root, task, args.item, text, confirmed_by=args.by, answer_path=source, clock=clock_of(args)
    )
    parsed = names.parse_in_category(layout.DESIGN_PREP_INPUTS, path.name)
    rev = f"r{parsed.revision}" if parsed and parsed.revision else "?"
    say(f"{rel(project, path)}: confirmed {args.item} {rev}")
    return 0


def cmd_design_prep_resolve(args: argparse.Namespace) -> int:
    from ..workflows import design_prep

    project = open_project(args)
    task = open_task(project, args.task)
    res = design_prep.resolve(task)
    if args.json:
        write_json(res.to_json(project.root))
        return 0 if res.error is None else 1
    if res.report is None:
        say(f"{task.rel}: no implementation-planning report; nothing to resolve")
        return 0
    if res.error is not None:
        raise OkstraError(res.report, res.error)
    say(f"approved snapshot: {rel(project, res.report)}")
    if res.legacy_unassessed:
        say(f"{design_prep.LEGACY_UNASSESSED}: the plan has no assessment markers; it proceeds unassessed")
    for item in res.items:
        auth = item.authoritative
        verdict = (
            f"r{auth.revision} {rel(project, auth.path)}"
            if auth
            else ("legacy-unassessed" if res.legacy_unassessed else "no authoritative input")
        )
        say(f"{item.prep_id} [{item.status}] {item.title}: {verdict}")
        for v in item.inputs:
            if v.verdict != "authoritative":
                say(f"  {v.verdict}: {v.path.name} ({v.reason})")
    return 0


def materialize_verb(task: str) -> Verb:
    """The command line of :func:`cmd_design_prep_materialize` for the write log (it records no time)."""
    return task_verb(("design-prep", "materialize"), task, timed=False)


def confirm_verb(task: str, item: str, text: str, by: str) -> Verb:
    """The command line of :func:`cmd_design_prep_confirm` for the write log; *text* becomes its ``--input`` file."""
    return task_verb(
        ("design-prep", "confirm"), task, ("--item", item), ("--by", by), inputs=(Input("--input", ".md", text),)
    )


def register(sub: Any) -> None:
    """Add the ``design-prep`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "design-prep", "design preparation requests, confirmed inputs and the resolver")
    p = d.add_parser("materialize", help="write the deterministic request of every provisional or blocked item")
    add_task_args(p)
    p.set_defaults(func=named_refusals(cmd_design_prep_materialize))
    p = d.add_parser("confirm", help="check an answer against the item, then append a new revision")
    add_task_args(p)
    p.add_argument("--item", required=True, metavar="PREP-NNN")
    p.add_argument(
        "--input",
        required=True,
        metavar="FILE",
        help="answer file with one '## <field>' section per field ('-': stdin)",
    )
    p.add_argument("--by", default="user", help="who confirmed (recorded as confirmed-by)")
    add_at_option(p)
    p.set_defaults(func=named_refusals(cmd_design_prep_confirm))
    p = d.add_parser("resolve", help="per item: the authoritative revision and every skipped file with its reason")
    add_task_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=named_refusals(cmd_design_prep_resolve))
