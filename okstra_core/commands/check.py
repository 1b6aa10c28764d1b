"""``okstra check`` and ``okstra-tui --check``: one parser, one engine, exit codes 0/1/2."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .. import layout
from ..check.catalog import RULES, markdown, text_table
from ..check.formats import FORMATS, STATISTICS_FORMATS, render, render_statistics
from ..progress import terminal_progress
from ..text import visible

if TYPE_CHECKING:
    from ..check.cache import CheckCache
    from ..check.findings import CheckReport
    from ..check.settings import CheckSettings

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_CANNOT_RUN = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_CANNOT_RUN)


def _ids(text: str) -> list[str]:
    return [p for p in (s.strip() for s in text.split(",")) if p]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The checker's flags, shared by both commands."""
    parser.add_argument(
        "project", nargs="?", default=".", help="project root holding .okstra/ (default: current folder)"
    )
    parser.add_argument(
        "--format",
        choices=(*FORMATS, "markdown"),
        default=None,
        help="output format (default: text; markdown only with --list-rules)",
    )
    parser.add_argument(
        "--select",
        action="append",
        type=_ids,
        default=[],
        metavar="IDS",
        help="only these rule ids or prefixes (comma-separated, repeatable)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        type=_ids,
        default=[],
        metavar="IDS",
        help="skip these rule ids or prefixes (comma-separated, repeatable)",
    )
    parser.add_argument(
        "--strict", action=argparse.BooleanOptionalAction, default=None, help="warnings fail the check too"
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        metavar="N",
        help="worker processes for the per-task part (default: all cores)",
    )
    parser.add_argument(
        "--home",
        type=Path,
        default=None,
        metavar="PATH",
        help="manager state root (default: $OKSTRA_HOME or ~/.okstra); checked when it exists",
    )
    parser.add_argument(
        "--output",
        "-o",
        default=None,
        metavar="FILE",
        help="write the report to FILE (a new file; relative to the current folder)",
    )
    parser.add_argument("--force", action="store_true", help="with -o: replace FILE when it is a regular file")
    parser.add_argument(
        "--colour",
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour text output (auto: on a terminal, unless NO_COLOR is set)",
    )
    parser.add_argument("--list-rules", action="store_true", help="print the rule catalog and exit")
    _add_cache_arguments(parser)
    _add_ci_arguments(parser)
    parser.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress display (it is shown only on a terminal's stderr, never in CI)",
    )


def _add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="PATH",
        help="where the incremental check keeps its cache (default: $OKSTRA_CACHE_DIR, else "
        "$XDG_CACHE_HOME/okstra, else ~/.cache/okstra); never inside the store or the manager home",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="check every task afresh, without reading or writing the cache"
    )
    parser.add_argument(
        "--no-watchman",
        action="store_true",
        help="look at every file of the cache's tasks instead of asking watchman what changed (also "
        "OKSTRA_WATCHMAN=off; without watchman installed, every file is looked at anyway)",
    )


def _add_ci_arguments(parser: argparse.ArgumentParser) -> None:
    """The settings file and the report shapes a CI pipeline asks for."""
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="read the settings from FILE ([tool.okstra.check] in a pyproject.toml, else [check]) instead of "
        "the project's .okstra.toml, okstra.toml or pyproject.toml",
    )
    parser.add_argument("--isolated", action="store_true", help="read no settings file")
    parser.add_argument(
        "--show-settings", action="store_true", help="print the resolved settings and where each came from, and exit"
    )
    parser.add_argument(
        "--statistics", action="store_true", help="print the number of findings per rule instead of the findings"
    )
    parser.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when findings fail the check (2 still means it could not run)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the check for parsed *args*; returns the exit status."""
    if args.list_rules:
        if args.format == "markdown":
            text = markdown()
        elif args.format == "json":
            text = (
                json.dumps(
                    [
                        {
                            "id": r.id,
                            "severity": r.severity,
                            "topic": r.topic,
                            "title": r.title,
                            "explanation": r.explanation,
                        }
                        for r in RULES
                    ],
                    indent=2,
                )
                + "\n"
            )
        else:
            text = text_table()
        return _emit(args, text)
    if args.format == "markdown":
        print("okstra check: error: --format markdown is for --list-rules", file=sys.stderr)
        return EXIT_CANNOT_RUN
    settings = _settings(args)
    if settings is None:
        return EXIT_CANNOT_RUN
    if args.show_settings:
        return _emit(args, settings.show(as_json=settings.format in ("json", "json-lines")))
    if args.statistics and settings.format not in STATISTICS_FORMATS:
        print(
            f"okstra check: error: --statistics prints {', '.join(STATISTICS_FORMATS)}, not {settings.format}",
            file=sys.stderr,
        )
        return EXIT_CANNOT_RUN
    refusal = _output_refusal(args) if args.output is not None else None
    if refusal is not None:  # refused before the check runs, not after
        print(f"okstra check: {visible(str(args.output))}: {refusal}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    report = _checked(args, settings)
    if report is None:
        return EXIT_CANNOT_RUN
    out = args.output
    if args.colour == "always":
        colour = True
    elif args.colour == "never" or out is not None:
        colour = False
    else:
        colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    _unmatched_warnings(settings, Path(args.project), report)
    report = settings.apply(report)  # rule selection and per-path ignores
    if not args.no_cache:
        _keep_verdict(args, settings, report)
    if args.statistics:
        code = _emit(args, render_statistics(report, settings.format))
    else:
        code = _emit(args, render(report, settings.format, colour=colour, strict=settings.strict))
    if code:
        return code
    return EXIT_CLEAN if args.exit_zero else report.exit_code(strict=settings.strict)


def _checked(args: argparse.Namespace, settings: CheckSettings) -> CheckReport | None:
    """The check's report, its cache's warnings said on stderr; None (said on stderr) when it cannot run."""
    # The engine (rules, models, worker pool) and the cache are imported when a check runs, not at every
    # ``okstra`` command's start (nor for --list-rules).
    from ..check.cache import CheckCache
    from ..check.engine import CheckError, cores, run_check
    from ..watchman import setting

    if settings.jobs > cores():
        _say_jobs_bounded(settings, cores())
    check_cache = None if args.no_cache else CheckCache(layout.okstra_cache_dir(settings.cache_dir))
    wanted = "off" if args.no_watchman else setting()
    try:
        with terminal_progress("checking", "tasks", quiet=args.quiet) as progress:
            report = run_check(
                Path(args.project),
                jobs=settings.jobs,
                home=args.home,
                progress=progress,
                check_cache=check_cache,
                watchman=wanted != "off",
            )
    except CheckError as exc:
        print(f"okstra check: {exc}", file=sys.stderr)
        return None
    if check_cache is not None:
        _cache_warnings(check_cache)
        problem = check_cache.watchman_problem
        if wanted == "on" and problem is not None:
            print(
                f"okstra check: notice: watchman not used ({visible(problem)}): looking at every file", file=sys.stderr
            )
    return report


def _keep_verdict(args: argparse.Namespace, settings: CheckSettings, report: CheckReport) -> None:
    """Keep this check's verdict beside its cache, for the workbench's Home to show without checking."""
    from ..check.cache import CheckCache, Verdict, save_verdict

    check_cache = CheckCache(layout.okstra_cache_dir(settings.cache_dir))
    now = dt.datetime.now(dt.UTC)
    verdict = Verdict(now, report.errors, report.warnings, report.infos, report.files, bool(settings.strict))
    save_verdict(check_cache, report.root, args.home, verdict)


def _settings(args: argparse.Namespace) -> CheckSettings | None:
    """The run's settings: the flags over the settings file over the defaults; None (said on stderr) when unusable."""
    from ..check.settings import Flags, SettingsError, resolve

    if args.config is not None and args.isolated:
        print("okstra check: error: --config and --isolated exclude each other", file=sys.stderr)
        return None
    flags = Flags(
        select=[i for group in args.select for i in group],
        ignore=[i for group in args.ignore for i in group],
        strict=args.strict,
        jobs=args.jobs,
        cache_dir=args.cache_dir,
        format=args.format,
    )
    try:
        return resolve(Path(args.project), flags, config=args.config, isolated=args.isolated)
    except SettingsError as exc:
        print(f"okstra check: {visible(str(exc))}", file=sys.stderr)
        return None


def _say_jobs_bounded(settings: CheckSettings, limit: int) -> None:
    """One line on stderr: the jobs asked for (and where) are more than the *limit* cores."""
    where = visible(settings.sources.get("jobs", "--jobs"))
    print(
        f"okstra check: warning: jobs = {settings.jobs} ({where}) is more than the {limit} cores: "
        f"using at most {limit} worker processes",
        file=sys.stderr,
    )


def _unmatched_warnings(settings: CheckSettings, root: Path, report: CheckReport) -> None:
    """One line on stderr per ``per-path-ignores`` glob that matches nothing in the store (as ruff warns of an
    unused ``noqa``): a typo or a leftover would otherwise ignore nothing, silently."""
    for glob in settings.unmatched_globs(root, report):
        where = visible(str(settings.file)) if settings.file is not None else "settings"
        print(
            f"okstra check: warning: {where}: per-path-ignores {visible(json.dumps(glob, ensure_ascii=False))} "
            f"matches no file in {layout.OKSTRA_DIR}/ (globs match the paths findings print)",
            file=sys.stderr,
        )


def _cache_warnings(check_cache: CheckCache) -> None:
    """At most one line per cache problem of this run, on stderr (never per task)."""
    for line in check_cache.problems():
        print(f"okstra check: warning: {visible(line)}", file=sys.stderr)


def _emit(args: argparse.Namespace, text: str) -> int:
    if args.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return EXIT_CLEAN
    refusal = _output_refusal(args)
    if refusal is not None:
        print(f"okstra check: {visible(str(args.output))}: {refusal}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    from ..errors import OkstraError
    from .output import write_output_file

    out: str = args.output
    try:
        # Whole or not at all with --force (never through a symlink); create-only otherwise.
        write_output_file(out, text.encode("utf-8", "replace"), replace=args.force)
    except (OkstraError, OSError) as exc:
        reason = exc.reason if isinstance(exc, OkstraError) else (exc.strerror or str(exc))
        print(f"okstra check: {visible(str(out))}: cannot write: {reason}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    return EXIT_CLEAN


def _output_refusal(args: argparse.Namespace) -> str | None:
    """Why ``-o FILE`` may not be written, or None.

    The checker is read-only: the report is created (``--force``: replaces a
    regular file), never written inside the store or the manager home, never
    through a symlink, and never into a FIFO or device (which could block).
    """
    from .output import names_no_file, output_path

    given: str = args.output
    if names_no_file(given):
        return "does not name a file"
    path = output_path(given)  # relative to the working folder, as the write resolves it
    real = Path(os.path.realpath(path.parent)) / path.name
    roots = [layout.okstra_home(args.home)]
    if getattr(args, "project", None) is not None:
        roots.append(layout.okstra_dir(Path(args.project)))
    for root in roots:
        if real.is_relative_to(os.path.realpath(root)):
            return "lies inside the store; the checker never writes there"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot inspect: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink; the report is never written through one"
    if not stat.S_ISREG(st.st_mode):
        return "exists and is not a regular file"
    if not args.force:
        return "exists; pass --force to replace it"
    return None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``check`` verb to ``okstra``."""
    parser = subparsers.add_parser(
        "check",
        help="check a project's .okstra/ store against the storage contract",
        description="Check a project's .okstra/ store against the storage contract (read-only). Settings are read "
        "from [tool.okstra.check] in the project's pyproject.toml, or [check] in its .okstra.toml or okstra.toml "
        "(the first found); a flag overrides them. --show-settings shows what applies.",
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def main_check(argv: list[str]) -> int:
    """``okstra-tui --check [PROJECT] [flags]``: the same flags, engine and exit codes as ``okstra check``."""
    parser = _Parser(prog="okstra-tui --check", description="Check a project's .okstra/ store (read-only).")
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_CANNOT_RUN
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
