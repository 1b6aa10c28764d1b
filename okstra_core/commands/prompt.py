"""``okstra prompt publish``: publish a run-backed prompt and its metadata."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import layout
from .common import (
    add_group,
    add_run_args,
    add_task_args,
    find_artifact,
    find_run_dir,
    input_path,
    named_refusals,
    open_project,
    open_task,
    read_input,
    rel,
    say,
)


def cmd_prompt_publish(args: argparse.Namespace) -> int:
    from ..workflows import prompts

    project = open_project(args)
    task = open_task(project, args.task)
    if args.manifest:
        manifest_path = input_path(project, args.manifest)
    else:
        manifest_path = find_artifact(find_run_dir(task, args.run_type, args.stage), "run-manifest", args.seq)
    body_path = input_path(project, args.body) if args.body != "-" else Path("-")
    body = read_input(body_path, "prompt body")
    instruction = args.instruction or layout.rel(
        layout.instruction_set_dir(task.root) / "analysis-packet.md", task.project.root
    )
    published = prompts.publish_prompt(
        project.root, manifest_path, args.assignment, body, duty_id=args.duty, instruction_rel=instruction
    )
    note = " (recovered the identical prompt of an interrupted publication)" if published.recovered_orphan else ""
    say(f"{rel(project, published.prompt)}: published{note}")
    say(f"{rel(project, published.meta)}: metadata (completion marker)")
    return 0


def register(sub: Any) -> None:
    """Add the ``prompt`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "prompt", "run-backed prompt publication")
    p = d.add_parser("publish", help="publish a prompt (create-only) and then its metadata (the completion marker)")
    add_task_args(p)
    add_run_args(p)
    p.add_argument("--seq", type=int, default=None, help="run-manifest seq (default: the newest)")
    p.add_argument(
        "--manifest", default=None, metavar="PATH", help="run manifest (instead of --run-type/--stage/--seq)"
    )
    p.add_argument("--assignment", required=True, metavar="REF", help="assignmentRef in the run manifest")
    p.add_argument("--body", required=True, metavar="FILE", help="prompt text ('-': stdin)")
    p.add_argument("--duty", required=True, metavar="ID", help="duty id in the run's duty catalog")
    p.add_argument(
        "--instruction",
        default=None,
        metavar="REL",
        help="instruction file (project-relative; default: analysis-packet.md)",
    )
    p.set_defaults(func=named_refusals(cmd_prompt_publish))
