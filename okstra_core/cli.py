"""``okstra``: the core's operations as verbs for scripts and agents.

Each verb group is one module of :mod:`okstra_core.commands`, listed in
:data:`COMMAND_MODULES`; it exposes ``register(subparsers)`` and sets ``func``
on its parser. A run of one verb builds that verb's parser alone. A refusal prints one
line naming the file and the reason and exits non-zero; nothing ends in a
traceback. A reader that stops early (``okstra check | head -1``) ends the
command quietly with :data:`EXIT_BROKEN_PIPE`, as a program killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from .errors import OkstraError
from .text import visible
from .version import VersionAction

#: Modules that contribute verbs, in help order, with the verbs each registers. A run of one verb imports only
#: that verb's module (``tests/core/test_lazy_imports.py`` keeps the names true to what each module registers).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "okstra_core.commands.demo": ("demo",),
    "okstra_core.commands.check": ("check",),
    "okstra_core.commands.render": ("render-final-report", "render-task-index", "log-report"),
    "okstra_core.commands.direction": ("direction",),
    "okstra_core.commands.planning": ("planning",),
    "okstra_core.commands.design_prep": ("design-prep",),
    "okstra_core.commands.user_response": ("user-response",),
    "okstra_core.commands.clarification": ("clarification",),
    "okstra_core.commands.team_state": ("team-state",),
    "okstra_core.commands.prompt": ("prompt",),
    "okstra_core.commands.agent_prompt": ("agent-prompt",),
    "okstra_core.commands.migrate_legacy": ("migrate-legacy",),
    "okstra_core.commands.convergence": ("convergence",),
    "okstra_core.commands.task": ("task",),
    "okstra_core.commands.inbox": ("inbox",),
    "okstra_core.commands.completion": ("completion",),
    "okstra_core.commands.search": ("search",),
    "okstra_core.commands.stats": ("stats",),
}
#: Verbs that need every verb's parser: the completion script is generated from the whole of it.
WHOLE_PARSER_VERBS: frozenset[str] = frozenset({"completion"})

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
#: Standard output closed by its reader: the shell's status of a program killed by SIGPIPE (128 + 13).
EXIT_BROKEN_PIPE = 141


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The ``okstra`` parser: every verb's, or only *verb*'s when it names one (a run imports one verb module).

    A parser of one verb parses that verb's arguments exactly as the whole parser does: a verb's flags and
    help are its own subparser's. Anything else (no verb, an unknown one, ``--help``) gets the whole parser.
    """
    parser = _Parser(prog="okstra", description="Operate on an okstra store (.okstra/) safely.")
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    modules = [name for name, verbs in COMMAND_MODULES.items() if verb in verbs and verb not in WHOLE_PARSER_VERBS]
    for name in modules or COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    parser.set_defaults(okstra_parser=parser)  # `okstra completion` generates its script from the whole parser
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return quiet_on_broken_pipe(lambda: _dispatch(argv))


def quiet_on_broken_pipe(run: Callable[[], int]) -> int:
    """*run*'s exit status; :data:`EXIT_BROKEN_PIPE`, and no message, when its reader closed standard output.

    The one handler of a closed pipe for the ``okstra`` and ``okstra-tui`` entry points.
    """
    try:
        try:
            return run()
        finally:
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_BROKEN_PIPE


def _stdout_to_devnull() -> None:
    """Point standard output at the null device, so the interpreter's last flush cannot fail again."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):
        return  # not a real file (a test's capture): nothing is flushed to a descriptor at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _dispatch(argv: Sequence[str] | None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(given[0] if given else None)
    args = parser.parse_args(given)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    from . import layout

    try:
        with layout.store_looked_once():  # one command's run: the store folder is looked at once
            code = args.func(args)
    except OkstraError as exc:
        print(f"okstra: {visible(str(exc))}", file=sys.stderr)
        return EXIT_REFUSED
    except BrokenPipeError:
        raise  # the reader went away: no refusal to report (see main)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"okstra: {visible(f'{where}{exc.strerror or exc}')}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
