"""``okstra-tui [PROJECT]``, ``--demo``, ``--serve`` and ``okstra-tui --check [PROJECT] [checker flags...]``."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from okstra_core import layout
from okstra_core.version import VersionAction

from .notices import NOTIFY_ENV, NOTIFY_MODES

EXIT_USAGE = 2


def _check(argv: list[str]) -> int:
    """Run the checker headless: the same flags and exit codes as ``okstra check``."""
    from okstra_core.commands.check import main_check

    return int(main_check(argv) or 0)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="okstra-tui",
        description="Browse an okstra project's store: catalog, tasks, runs, artifacts, reports, checks, managers.",
        epilog="okstra-tui --check [PROJECT] [flags] runs the checker headless (see `okstra check --help`).",
    )
    parser.add_argument("project", nargs="?", default=".", help="project root holding .okstra/ (default: .)")
    parser.add_argument(
        "--demo", action="store_true", help="generate a fresh demo project in a temporary folder and open it"
    )
    parser.add_argument(
        "--demo-tasks", type=int, default=None, metavar="N", help="with --demo: scale the demo up to N tasks"
    )
    parser.add_argument(
        "--serve", action="store_true", help="serve the workbench to a web browser instead (needs textual-serve)"
    )
    parser.add_argument(
        "--host",
        default=None,
        metavar="ADDRESS",
        help="with --serve: address to bind (default: 127.0.0.1, this machine only); another address is "
        "reachable by whoever can reach the port, writes included",
    )
    parser.add_argument("--port", type=_port, default=None, metavar="N", help="with --serve: port (default: 8000)")
    parser.add_argument(
        "--notify",
        choices=NOTIFY_MODES,
        default=None,
        help="how to tell you when a decision starts waiting or a run ends: a toast (default), also the "
        "terminal bell, also the terminal's desktop notification (OSC 9 / OSC 777), or off",
    )
    parser.add_argument("--version", action=VersionAction)
    parser.add_argument("--check", action="store_true", help="run the contract checker headless and exit with its code")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``okstra-tui``; a reader that closes the pipe early ends it quietly (as ``okstra``)."""
    from okstra_core.cli import quiet_on_broken_pipe

    return quiet_on_broken_pipe(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if "--check" in args_list:
        # Everything but the flag itself belongs to the checker.
        rest = list(args_list)
        rest.remove("--check")
        return _check(rest)
    parser = build_parser()
    args = parser.parse_args(args_list)
    if not args.serve and (args.host is not None or args.port is not None):
        parser.error("--host and --port go with --serve")
    if args.demo_tasks is not None:
        from okstra_core.demo import MAX_TASKS

        if not args.demo:
            parser.error("--demo-tasks goes with --demo")
        if not 0 <= args.demo_tasks <= MAX_TASKS:
            parser.error(f"--demo-tasks must be between 0 and {MAX_TASKS:,}")
    demo_parent: Path | None = None
    if args.demo:
        from okstra_core.demo import generate

        # A stop request (SIGTERM) or a closed terminal (SIGHUP), while the demo is written or open,
        # still removes it: the handler unwinds to the finally below.
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        signal.signal(signal.SIGHUP, _exit_on_sigterm)
        demo_parent = Path(tempfile.mkdtemp(prefix="okstra-demo-"))
    try:
        if demo_parent is not None:
            from okstra_core.progress import terminal_progress

            with terminal_progress("writing the demo", "tasks", rate=True) as progress:
                root = Path(generate(demo_parent / "project", tasks=args.demo_tasks, progress=progress))
            os.environ["OKSTRA_HOME"] = str(layout.demo_home(root))
        else:
            root = Path(args.project)
        return _open(root, args, demo_parent)
    finally:
        if demo_parent is not None:
            shutil.rmtree(demo_parent, ignore_errors=True)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _open(root: Path, args: argparse.Namespace, demo_parent: Path | None) -> int:
    """Open the project at *root* in the workbench, or serve it (``--serve``)."""
    from okstra_core.errors import LoadError
    from okstra_core.store import Project

    project = Project.open(root.resolve() if root.exists() else root)
    if isinstance(project, LoadError):
        print(f"okstra-tui: {project}", file=sys.stderr)
        return EXIT_USAGE
    if args.notify is not None:
        os.environ[NOTIFY_ENV] = args.notify  # the sessions of --serve inherit it
    if args.serve:
        from .serve import DEFAULT_HOST, DEFAULT_PORT, serve

        return serve(project.root, args.host or DEFAULT_HOST, args.port or DEFAULT_PORT)
    from .app import OkstraApp

    OkstraApp(project, demo_dir=demo_parent).run()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
