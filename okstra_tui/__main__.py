"""``okstra-tui [PROJECT...]``, ``--all``, ``--demo [--all]``, ``--serve``, ``--read-only``,
``okstra-tui --check [PROJECT] [flags...]``."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from okstra_core import layout
from okstra_core.version import VersionAction

from .notices import NOTIFY_ENV, NOTIFY_MODES

if TYPE_CHECKING:
    from .app import OkstraApp

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


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of sessions (1-1000)")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 1 <= value <= 30 * 86400:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (1 to 2592000)")
    return value


def _host_name(text: str) -> str:
    import re

    if not re.fullmatch(r"[A-Za-z0-9.-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a host name (name or name:port)")
    return text


#: The demo project's folder inside its temporary folder (the breadcrumbs show the whole path).
DEMO_FOLDER = "shop"

#: The options that only mean something with --serve.
SERVE_ONLY = ("host", "port", "token_file", "no_token", "max_sessions", "idle_timeout", "allow_host")


def build_parser() -> argparse.ArgumentParser:
    from okstra_core.commands.completion import instructions

    parser = argparse.ArgumentParser(
        prog="okstra-tui",
        description="Browse an okstra project's store: catalog, tasks, runs, artifacts, reports, checks, managers.",
        epilog="okstra-tui --check [PROJECT] [flags] runs the checker headless (see `okstra check --help`).\n\n"
        + instructions("okstra-tui"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "project",
        nargs="*",
        metavar="PROJECT",
        help="project root holding .okstra/ (default: .); with several, the workbench opens on Home, which lists "
        "them with every project the manager home registers and every project opened in the workbench",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="open on Home: every project (the manager home's, those opened in the workbench, the PROJECTs "
        "named) with the decisions waiting in each; Enter opens one, ctrl+f searches them all, I compares their "
        "insights",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="generate a fresh demo project in a new temporary folder ($TMPDIR, else /tmp) and open it; "
        "its path is shown at the top and said on quit, and it is kept for the okstra commands; with --all, "
        "the demo of three projects and their manager home (okstra demo --projects), opened on Home",
    )
    parser.add_argument(
        "--discard-demo", action="store_true", help="with --demo: remove the demo project when the workbench quits"
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
        "reachable by whoever can reach the port (and holds the token)",
    )
    parser.add_argument("--port", type=_port, default=None, metavar="N", help="with --serve: port (default: 8000)")
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="open the workbench with every write refused (wizards show what they would write and write nothing)",
    )
    parser.add_argument(
        "--notify",
        choices=NOTIFY_MODES,
        default=None,
        help="how to tell you when a decision starts waiting (in any project Home lists) or a run ends: a toast "
        "(default), also the terminal bell, also the terminal's desktop notification (OSC 9 / OSC 777), or off",
    )
    _serve_access_arguments(parser)
    parser.add_argument("--version", action=VersionAction)
    parser.add_argument("--check", action="store_true", help="run the contract checker headless and exit with its code")
    parser.add_argument(
        "--print-completion",
        choices=("bash", "zsh", "fish"),
        default=None,
        metavar="SHELL",
        help="print okstra-tui's shell completion script for bash, zsh or fish, and exit",
    )
    return parser


def completion_parser() -> argparse.ArgumentParser:
    """The parser okstra-tui's completion is generated from: its own flags and, for ``--check``, the checker's."""
    from okstra_core.commands.check import add_arguments

    parser = build_parser()
    checker = argparse.ArgumentParser(add_help=False)
    add_arguments(checker)
    taken = set(parser._option_string_actions)
    for action in checker._actions:
        if action.option_strings and not taken & set(action.option_strings):
            parser._add_action(action)
    return parser


def _serve_access_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --serve: require the token held by FILE (mode 600) instead of a generated one; "
        "OKSTRA_SERVE_TOKEN may hold it instead",
    )
    parser.add_argument(
        "--no-token",
        action="store_true",
        help="with --serve on a loopback address only: require no token (every user of this machine can connect)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        type=_host_name,
        default=None,
        metavar="NAME",
        help="with --serve on a loopback address: also answer to this Host (a TLS proxy's public name); repeatable",
    )
    parser.add_argument(
        "--max-sessions",
        type=_count,
        default=None,
        metavar="N",
        help="with --serve: browser sessions (one workbench process each) open at once (default: 8)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="with --serve: end a session after this long without input (default: never)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``okstra-tui``; a reader that closes the pipe early ends it quietly (as ``okstra``)."""
    from okstra_core.cli import quiet_on_broken_pipe

    return quiet_on_broken_pipe(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    from okstra_core.malloc import fewer_arenas

    fewer_arenas()  # before any thread starts: the workbench runs for hours
    args_list = list(sys.argv[1:] if argv is None else argv)
    if "--check" in args_list:
        # Everything but the flag itself belongs to the checker.
        rest = list(args_list)
        rest.remove("--check")
        return _check(rest)
    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.print_completion is not None:
        from okstra_core.commands.completion import script

        sys.stdout.write(script(completion_parser(), args.print_completion))
        return 0
    if not args.serve:
        given = [name for name in SERVE_ONLY if getattr(args, name) not in (None, False)]
        if given:
            parser.error(f"--{given[0].replace('_', '-')} goes with --serve")
    if args.demo_tasks is not None:
        from okstra_core.demo import MAX_TASKS

        if not args.demo:
            parser.error("--demo-tasks goes with --demo")
        if args.all:
            parser.error("--demo-tasks goes with the single-project demo (without --all)")
        if not 0 <= args.demo_tasks <= MAX_TASKS:
            parser.error(f"--demo-tasks must be between 0 and {MAX_TASKS:,}")
    home = args.all or len(args.project) > 1
    if home and args.serve:
        parser.error("--serve opens one project (without --all, with one PROJECT)")
    if args.demo and args.project:
        parser.error("--demo opens the demo only (without PROJECT)")
    if not args.demo:
        if args.discard_demo:
            parser.error("--discard-demo goes with --demo")
        if home:
            return _open_home([Path(p) for p in args.project], args)
        return _open(Path(args.project[0] if args.project else "."), args, None)
    return _demo(args)


def _demo(args: argparse.Namespace) -> int:
    """``--demo``: write a fresh demo in a new temporary folder, open it, and say on quit where it is kept.

    The demo is kept (a newcomer points the ``okstra`` commands at what they just saw) unless
    ``--discard-demo`` asks otherwise; a demo whose writing did not finish is always removed.
    """
    # A stop request (SIGTERM) or a closed terminal (SIGHUP) unwinds to the finally below (which removes a
    # half-written or discarded demo), which then puts the earlier handlers back (a caller of main(), or a
    # process it forks later, keeps its own), even when a second signal cuts the removal short.
    handlers: dict[signal.Signals, Any] = {}
    demo_parent: Path | None = None
    root: Path | None = None
    leave = _Leave()
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            handlers[sig] = signal.signal(sig, leave)
        try:
            demo_parent = Path(tempfile.mkdtemp(prefix="okstra-demo-"))
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            print(f"okstra-tui: cannot make a folder for the demo: {where}{exc.strerror or exc}", file=sys.stderr)
            return 1
        root = _write_demo(demo_parent, args)
        return _open(root, args, demo_parent, leave)
    finally:
        try:
            if demo_parent is not None and (root is None or args.discard_demo):
                shutil.rmtree(demo_parent, ignore_errors=True)
            if root is not None:
                farewell = _demo_farewell if not args.all else _projects_farewell
                with contextlib.suppress(OSError):  # the terminal may be gone (closed under the workbench)
                    print(farewell(root, kept=not args.discard_demo), flush=True)
        finally:
            for sig, handler in handlers.items():
                # None: the earlier handler was not set from Python; the default is the closest to it.
                signal.signal(sig, signal.SIG_DFL if handler is None else handler)


def _write_demo(demo_parent: Path, args: argparse.Namespace) -> Path:
    """Write the demo under *demo_parent* (with a progress line on a terminal); its project root (with
    ``--all``, the shop's, beside the two other projects and their manager home)."""
    from okstra_core.demo import generate
    from okstra_core.demo.projects import HOME_DIR, SHOP_DIR, generate_projects
    from okstra_core.progress import terminal_progress

    with terminal_progress("writing the demo", "tasks", rate=True) as progress:
        if args.all:
            base = generate_projects(demo_parent, progress=progress)
            os.environ["OKSTRA_HOME"] = str(base / HOME_DIR)
            return base / SHOP_DIR
        root = Path(generate(demo_parent / DEMO_FOLDER, tasks=args.demo_tasks, progress=progress))
    os.environ["OKSTRA_HOME"] = str(layout.demo_home(root))
    return root


def _demo_farewell(root: Path, *, kept: bool) -> str:
    """The one line said when the demo's workbench quits: where the demo is, or that it is gone."""
    from okstra_core.text import visible

    shown = visible(str(root))
    if not kept:
        return f"okstra-tui: the demo project at {shown} was removed (without --discard-demo it is kept)"
    return f"okstra-tui: the demo project is kept at {shown} (try: okstra inbox {shown}; --discard-demo removes it)"


def _projects_farewell(shop: Path, *, kept: bool) -> str:
    """The one line said when the demo of three projects quits: where it is, or that it is gone."""
    from okstra_core.demo.projects import HOME_DIR
    from okstra_core.text import visible

    base = visible(str(shop.parent))
    if not kept:
        return f"okstra-tui: the demo projects at {base} were removed (without --discard-demo they are kept)"
    return (
        f"okstra-tui: the demo projects are kept at {base} (try: okstra inbox --all --home {base}/{HOME_DIR}; "
        "--discard-demo removes them)"
    )


class _Leave:
    """The demo's handler of SIGTERM and SIGHUP: the workbench, once running, is asked to leave as on ``q``
    (its loop then unwinds in order); before it runs, after it has run, or on a second signal, SystemExit is
    raised where the signal landed."""

    def __init__(self) -> None:
        self.app: OkstraApp | None = None
        self._asked = False

    def __call__(self, signum: int, frame: object) -> None:
        app = self.app
        if app is not None and not self._asked and app.leave_from_signal(signum):
            self._asked = True
            return
        raise SystemExit(128 + signum)


def _open(root: Path, args: argparse.Namespace, demo_parent: Path | None, leave: _Leave | None = None) -> int:
    """Open the project at *root* in the workbench, or serve it (``--serve``); *leave*: the demo's signal
    handler, told of the workbench it is to ask to leave."""
    from okstra_core.errors import LoadError
    from okstra_core.store import Project

    project = Project.open(root.resolve() if root.exists() else root)
    if isinstance(project, LoadError):
        print(f"okstra-tui: {project}", file=sys.stderr)
        return EXIT_USAGE
    if args.notify is not None:
        os.environ[NOTIFY_ENV] = args.notify  # the sessions of --serve inherit it
    if demo_parent is None:
        _remember(project.root)
    if args.serve:
        return _serve(project.root, args)
    if args.read_only:
        from okstra_core.writes import enable_read_only

        enable_read_only()
    from okstra_core.preferences import load as load_preferences

    from .data.catalog import KeptWaiting

    # The demo of three projects opens on Home, which lists the demo's projects only (not the ones opened before).
    home = demo_parent is not None and args.all
    # The catalog's count of what waits starts before the workbench's modules are imported (a third of a second):
    # on a large store it is then in by the first frame or just after.
    waiting = None if home else KeptWaiting(project.root, early=True)

    from .app import OkstraApp

    app = OkstraApp(
        project,
        demo_dir=demo_parent,
        preferences=load_preferences(),
        start_home=home,
        remembered=not home,
        waiting=waiting,
    )
    if leave is not None:
        leave.app = app
    app.run()
    return app.return_code or 0


def _open_home(named: list[Path], args: argparse.Namespace) -> int:
    """``--all`` or several PROJECTs: open on Home, with the first PROJECT that opens as the current project (with
    ``--all``, else the working folder when it is a project, else the first project of the registry that opens)."""
    from okstra_core.errors import LoadError
    from okstra_core.projects import discover
    from okstra_core.store import Project

    candidates = [p.resolve() if p.exists() else p for p in named]
    if args.all:
        candidates.append(Path.cwd())
        candidates += [e.root for e in discover(named=()).entries if e.readable]
    project: Project | None = None
    first: LoadError | None = None
    for root in candidates:
        opened = Project.open(root)
        if not isinstance(opened, LoadError):
            project = opened
            break
        first = first or opened
    if project is None:
        if not args.all:
            print(f"okstra-tui: none of the projects named can be opened: {first}", file=sys.stderr)
        else:
            print(
                "okstra-tui: no project to open: the working folder has no store and no registered project "
                "can be read (okstra inbox --all says why)",
                file=sys.stderr,
            )
        return EXIT_USAGE
    if args.notify is not None:
        os.environ[NOTIFY_ENV] = args.notify
    _remember(project.root)
    if args.read_only:
        from okstra_core.writes import enable_read_only

        enable_read_only()
    from okstra_core.preferences import load as load_preferences

    from .app import OkstraApp

    app = OkstraApp(project, preferences=load_preferences(), named_roots=named, start_home=True)
    app.run()
    return app.return_code or 0


def _remember(root: Path) -> None:
    """Add *root* to the projects opened in the workbench (``okstra inbox --all`` reads them); a state file
    that cannot be written is one line on stderr, and the project opens all the same."""
    from okstra_core.errors import OkstraError
    from okstra_core.projects import remember_root

    try:
        remember_root(root)
    except OkstraError as exc:
        print(f"okstra-tui: notice: {exc}", file=sys.stderr)


def _serve(root: Path, args: argparse.Namespace) -> int:
    """``--serve``: check the access options, then serve until interrupted."""
    from .serve import DEFAULT_HOST, DEFAULT_MAX_SESSIONS, DEFAULT_PORT, ServeOptions, ServeRefused, choose_token

    host = args.host or DEFAULT_HOST
    try:
        token = choose_token(args.token_file, args.no_token, host)
    except ServeRefused as exc:
        print(f"okstra-tui: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        from .serve_server import serve
    except ImportError as exc:
        print(
            f"okstra-tui: --serve needs textual-serve ({exc.name} is missing): pip install 'okstra-workbench[serve]'",
            file=sys.stderr,
        )
        return EXIT_USAGE
    options = ServeOptions(
        host=host,
        port=args.port or DEFAULT_PORT,
        token=token,
        read_only=args.read_only,
        max_sessions=args.max_sessions or DEFAULT_MAX_SESSIONS,
        idle_timeout=args.idle_timeout,
        extra_hosts=tuple(args.allow_host or ()),
    )
    return serve(root, options)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
