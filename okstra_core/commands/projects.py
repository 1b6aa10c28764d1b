"""What the ``--all`` verbs share: the options that pick projects from the registry, and its one-line notes.

``okstra inbox --all``, ``okstra search --all`` and ``okstra stats --all``
read every project of :func:`okstra_core.projects.discover` (managers under
``--home``, roots opened in the workbench, ``--root`` paths), or those named
by ``--project ID``. A project that cannot be read, a registry cut short, a
symlink followed: each is one line on standard error, ``okstra VERB: ...``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..text import visible

if TYPE_CHECKING:
    from ..projects import ProjectEntry, Registry

#: ``--project ID`` names no project of the registry.
EXIT_UNKNOWN_PROJECT = 2


def add_all_args(p: argparse.ArgumentParser, what: str) -> None:
    """``--all``, ``--project ID``, ``--root PATH`` and ``--home PATH``."""
    p.add_argument(
        "--all",
        action="store_true",
        help=f"{what} of every project: those registered with a manager, those opened in the workbench "
        "and those given with --root",
    )
    p.add_argument(
        "--project",
        action="append",
        default=[],
        dest="project_ids",
        metavar="ID",
        help="with --all: only the project ID (repeatable; --all --json lists the ids)",
    )
    p.add_argument(
        "--root",
        action="append",
        default=[],
        type=Path,
        metavar="PATH",
        help="with --all: the project at PATH too (repeatable)",
    )
    p.add_argument(
        "--home",
        type=Path,
        default=None,
        metavar="PATH",
        help="with --all: the manager home whose managers' projects are read (default: $OKSTRA_HOME or ~/.okstra)",
    )


def check_all_args(args: argparse.Namespace, parser: argparse.ArgumentParser, given_project: bool) -> None:
    """A usage error for ``--project``/``--root``/``--home`` without ``--all``, and for a PROJECT with it."""
    if args.all and given_project:
        parser.error("give either PROJECT or --all (add more projects to --all with --root PATH)")
    if not args.all and not given_project:
        parser.error("give a PROJECT (a project root holding .okstra/), or --all")
    if not args.all and (args.project_ids or args.root or args.home is not None):
        parser.error("--project, --root and --home go with --all")


def selected_projects(args: argparse.Namespace, verb: str) -> tuple[list[ProjectEntry], Registry]:
    """The projects ``--all`` reads (``--project`` narrows them), each problem said once on stderr.

    An id ``--project`` names that no project has is a usage error (exit 2), said in one line.
    """
    from ..projects import discover  # the models it reads are loaded only when a verb runs --all

    registry = discover(args.home, named=args.root)
    entries, unknown = registry.select(args.project_ids)
    if unknown:
        known = ", ".join(e.project_id for e in registry.entries) or "none"
        names = ", ".join(repr(u) for u in unknown)
        print(f"okstra {verb}: no project {visible(names)} (the projects: {visible(known)})", file=sys.stderr)
        raise SystemExit(EXIT_UNKNOWN_PROJECT)
    for line in [*registry.notes, *(e.line() for e in entries)]:
        if line:
            print(f"okstra {verb}: {visible(line)}", file=sys.stderr)
    return entries, registry


def say(verb: str, line: str) -> None:
    print(f"okstra {verb}: {visible(line)}", file=sys.stderr)
