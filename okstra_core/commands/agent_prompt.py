"""``okstra agent-prompt``: agent invocations outside a task run (start, complete, verify-completion)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import layout
from ..store import Project
from .common import add_group, input_path, named, named_refusals, open_project, read_input, rel, say, write_stdout


def _add_invocation_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--purpose", required=True, help="canonical slug, e.g. code-review")
    p.add_argument("--id", required=True, dest="invocation_id", help="invocation id (canonical slug)")


def _slugs(project: Project, args: argparse.Namespace) -> None:
    with named(layout.agent_invocations_dir(project.root)):
        layout.invocation_paths(project.root, args.purpose, args.invocation_id)


def cmd_agent_start(args: argparse.Namespace) -> int:
    from ..workflows import invocations

    project = open_project(args)
    _slugs(project, args)
    instructions = read_input(input_path(project, args.instructions), "instructions file")
    prompt = read_input(input_path(project, args.prompt), "prompt file")
    paths = invocations.start(project.root, args.purpose, args.invocation_id, instructions, prompt)
    for path in (paths.instructions, paths.prompt, paths.meta):
        say(f"{rel(project, path)}: published")
    return 0


def cmd_agent_complete(args: argparse.Namespace) -> int:
    from ..workflows import invocations

    project = open_project(args)
    _slugs(project, args)
    source = input_path(project, args.body) if args.body != "-" else Path("-")
    body = read_input(source, "returned body")
    marker = invocations.complete(project.root, args.purpose, args.invocation_id, body)
    paths = layout.invocation_paths(project.root, args.purpose, args.invocation_id)
    say(f"{rel(project, paths.result)}: result envelope")
    say(f"{rel(project, marker)}: completion marker")
    return 0


def cmd_agent_verify(args: argparse.Namespace) -> int:
    from ..workflows import invocations

    project = open_project(args)
    _slugs(project, args)
    body = invocations.verify_completion(project.root, args.purpose, args.invocation_id)
    # Consumers parse exactly returnedBody: nothing else goes to stdout, not even a newline.
    write_stdout(body)
    return 0


def register(sub: Any) -> None:
    """Add the ``agent-prompt`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "agent-prompt", "agent invocations outside a task run")
    p = d.add_parser("start", help="publish instructions, prompt and metadata")
    _add_invocation_args(p)
    p.add_argument("--instructions", required=True, metavar="FILE")
    p.add_argument("--prompt", required=True, metavar="FILE")
    p.set_defaults(func=named_refusals(cmd_agent_start))
    p = d.add_parser("complete", help="publish the result envelope, then the completion marker")
    _add_invocation_args(p)
    p.add_argument("--body", required=True, metavar="FILE", help="the returned body ('-': stdin)")
    p.set_defaults(func=named_refusals(cmd_agent_complete))
    p = d.add_parser("verify-completion", help="print only returnedBody when the whole chain holds")
    _add_invocation_args(p)
    p.set_defaults(func=named_refusals(cmd_agent_verify))
