"""``okstra search PROJECT QUERY``: find what the agents wrote, through the project's full-text index.

Exit 0 when something matched, 1 when nothing did (as ``grep`` and ``rg``), 2
when the search cannot run (a malformed query, no store, an unusable cache
folder): one line on standard error saying why. Text output lists the hits
best first, each as a line naming the task, the kind (and the finding,
question or design item) and the file, then the snippet around the match;
``--json`` prints ``{"version": 1, "project", "query", "total", "hits": [...],
"notices": [...]}`` with each hit ``{task, taskFolder, taskType, kind, label,
path, snippet, matches, capped, modified, score}`` (``matches``: the
``[start, end)`` character offsets of the matched words in ``snippet``).

Everything printed from the index is store text made inert when it was
indexed (:func:`okstra_core.text.visible`); the JSON is ASCII.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import layout
from ..progress import terminal_progress
from ..text import visible
from .projects import add_all_args, check_all_args, say, selected_projects

if TYPE_CHECKING:
    from ..search.index import Hit, Results
    from ..search.projects import ProjectHits
    from ..search.query import Query

SEARCH_JSON_VERSION = 1
EXIT_FOUND = 0
EXIT_NOTHING = 1
EXIT_CANNOT_RUN = 2
DEFAULT_LIMIT = 50

_MATCH_STYLE = "\x1b[1;31m"
_TASK_STYLE = "\x1b[1m"
_RESET = "\x1b[0m"


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: at least 1 process")
    return value


def register(sub: Any) -> None:
    p = sub.add_parser(
        "search",
        help="search what the agents wrote (reports, findings, questions, prompts …) through a full-text index",
        description='Words must all match; "exact phrases", prefix*, OR, NOT (or -word), parentheses; filters '
        "kind:KIND, task:GLOB, type:TASK-TYPE, since:DATE|TIME|AGE (7d; the recorded time). "
        "Exit 0: hits, 1: none, 2: cannot run.",
    )
    p.add_argument(
        "project", metavar="PROJECT", help="project root holding .okstra/ (with --all: the query's first word)"
    )
    p.add_argument("query", nargs="*", help="the query (its words are joined with spaces)")
    p.add_argument("--json", action="store_true", help=f"print the hits as JSON (version {SEARCH_JSON_VERSION})")
    p.add_argument("--limit", type=_limit, default=DEFAULT_LIMIT, metavar="N", help="at most N hits (default 50)")
    p.add_argument("--reindex", action="store_true", help="rebuild the index from scratch first")
    p.add_argument(
        "--include-logs", action="store_true", help="index and search agent transcripts (*.log) too; they are large"
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="PATH",
        help="where the index is kept (default: $OKSTRA_CACHE_DIR, else $XDG_CACHE_HOME/okstra, else "
        "~/.cache/okstra); never inside the store or the manager home",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="index the store afresh in a temporary folder, used for this search only (the answer is the same)",
    )
    p.add_argument(
        "--no-watchman",
        action="store_true",
        help="look at every folder and file of the index instead of asking watchman what changed (also "
        "OKSTRA_WATCHMAN=off; without watchman installed, everything is looked at anyway)",
    )
    p.add_argument("--colour", "--color", choices=("auto", "always", "never"), default="auto", help="highlight matches")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display while the index is built")
    p.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=None,
        metavar="N",
        help="processes for the look at the store that keeps the index exact (default: all cores)",
    )
    add_all_args(p, "search the store")
    p.set_defaults(func=run, parser=p)


def _fail(message: str) -> int:
    print(f"okstra search: {visible(message)}", file=sys.stderr)
    return EXIT_CANNOT_RUN


def run(args: argparse.Namespace) -> int:
    from ..search.index import SearchError, SearchIndex
    from ..search.query import QueryError, parse
    from ..watchman import setting

    words = [args.project, *args.query] if args.all else args.query
    check_all_args(args, args.parser, not args.all)
    text = " ".join(words)
    query = None
    if text.strip() or not args.reindex:
        try:
            query = parse(text)
        except QueryError as exc:
            return _fail(f"bad query: {exc}")
    include_logs = args.include_logs or (query is not None and query.wants_logs)
    if args.all:
        return run_all(args, query, text, include_logs)
    root = Path(args.project)
    if not layout.store_is_folder(root):
        return _fail(f"{root}: no .okstra/ store in this folder")
    root = Path(os.path.realpath(root))
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    with contextlib.ExitStack() as scratch:
        # Without the cache, the index is built afresh in a folder of this run's own, removed at its end.
        folder = Path(scratch.enter_context(tempfile.TemporaryDirectory())) if args.no_cache else args.cache_dir
        wanted = "off" if args.no_watchman or args.no_cache else setting()
        try:
            index = SearchIndex(
                root, layout.okstra_cache_dir(folder), include_logs=include_logs, jobs=jobs, watchman=wanted != "off"
            )
            with index:
                if args.reindex:
                    index.rebuild()
                with terminal_progress("indexing", "files", quiet=args.quiet or args.json) as progress:
                    index.update(progress)
                results = index.search(query, limit=args.limit) if query is not None else None
        except SearchError as exc:
            return _fail(str(exc))
        except QueryError as exc:  # one SQLite's FTS5 parser cannot read
            return _fail(f"bad query: {exc}")
    if wanted == "on" and index.watchman_problem is not None:
        index.notices.append(f"watchman not used ({index.watchman_problem}): looking at every file")
    for notice in index.notices:
        print(f"okstra search: notice: {visible(notice)}", file=sys.stderr)
    if results is None:
        stats = index_stats(index)
        print(f"index rebuilt: {stats}")
        return EXIT_FOUND
    if args.json:
        _print_json(root, text, results, index.notices)
    else:
        _print_text(results, args.limit, wants_colour(args.colour))
    return EXIT_FOUND if results.hits else EXIT_NOTHING


def index_stats(index: Any) -> str:
    stats = index.stats()
    return f"{stats['files']:,} files, {stats['sections']:,} sections, {stats['bytes']:,} bytes"


def hit_json(hit: Hit) -> dict[str, Any]:
    plain, matches = "", []
    for piece, matched in hit.snippet_parts():
        if matched:
            matches.append([len(plain), len(plain) + len(piece)])
        plain += piece
    modified = dt.datetime.fromtimestamp(hit.modified_ns / 1e9, dt.UTC).isoformat().replace("+00:00", "Z")
    return {
        "task": hit.task,
        "taskFolder": hit.task_folder,
        "taskType": hit.task_type,
        "kind": hit.kind,
        "label": hit.label,
        "path": hit.path,
        "snippet": plain,
        "matches": matches,
        "capped": hit.capped,
        "modified": modified,
        "score": round(hit.score, 6),
    }


def _print_json(root: Path, text: str, results: Results, notices: list[str]) -> None:
    doc = {
        "version": SEARCH_JSON_VERSION,
        "project": str(root),
        "query": text,
        "total": results.total,
        "hits": [hit_json(h) for h in results.hits],
        "notices": notices,
    }
    print(json.dumps(doc, indent=2, ensure_ascii=True))


def _print_text(results: Results, limit: int, colour: bool) -> None:
    for hit in results.hits:
        print_hit(hit, colour)
    count = results.total
    if not results.hits:
        print("no matches")
    elif count > len(results.hits):
        print(f"showing the best {len(results.hits):,} of {count:,} hits (--limit {count} shows all)")
    else:
        print(f"{count:,} hit{'s' if count != 1 else ''}")


def print_hit(hit: Hit, colour: bool, project: str = "") -> None:
    """A hit's two lines: the task, the kind and the file (after *project*, when given); the snippet."""
    from ..search.extract import INDEX_CHARS

    what = hit.kind + (f" {hit.label}" if hit.label else "")
    task = f"{_TASK_STYLE}{visible(hit.task)}{_RESET}" if colour else visible(hit.task)
    capped = f"  (only the first {INDEX_CHARS:,} characters are indexed)" if hit.capped else ""
    where = f"{visible(project)}  " if project else ""
    print(f"{where}{task}  {visible(what)}  {visible(hit.path)}{capped}")
    snippet = ""
    for piece, matched in hit.snippet_parts():
        # Whitespace runs (a line break inside a snippet) read as one space on a result line.
        piece = visible(" ".join(piece.replace("\n", " ").replace("\t", " ").split(" ")))
        snippet += f"{_MATCH_STYLE}{piece}{_RESET}" if matched and colour else piece
    print(f"    {_one_line_keep(snippet)}")


def wants_colour(choice: str) -> bool:
    return choice == "always" or (choice == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))


def _one_line_keep(text: str) -> str:
    """*text* with runs of spaces squeezed to one (escape sequences of the highlight untouched)."""
    while "  " in text:
        text = text.replace("  ", " ")
    return text.strip()


# ------------------------------------------------------------------ --all
#
# ``okstra search --all [--project ID]... QUERY``: search every project of the registry.
#
# Each project is searched through its own index (as ``okstra search PROJECT``);
# the hits are merged best first and cut to ``--limit``. Text output names the
# project before each hit; ``--json`` prints ``{"version": 1, "all": true,
# "query", "total", "hits": [...], "projects": [...], "notices": [...]}``, each
# hit an ``okstra search --json`` hit with ``project`` and ``projectRoot``, each
# project ``{project, projectRoot, health, read, problem, total}``. Exit 0 when
# something matched, 1 when nothing did, 2 when the query is malformed; a
# project that could not be searched is one line on standard error and does not
# change the status when others matched.

VERB = "search"


def run_all(args: argparse.Namespace, query: Query | None, text: str, include_logs: bool) -> int:
    from ..search.projects import merged, search_project, total

    if query is None:
        args.parser.error("--reindex with --all needs a query (it rebuilds the index of each project searched)")
        return EXIT_CANNOT_RUN
    entries, _registry = selected_projects(args, VERB)
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    cache = layout.okstra_cache_dir(args.cache_dir)
    per_project = [
        search_project(e, cache, query, limit=args.limit, include_logs=include_logs, jobs=jobs, reindex=args.reindex)
        for e in entries
    ]
    for ph in per_project:
        for notice in ph.notices:
            say(VERB, f"notice: project {ph.entry.project_id!r}: {notice}")
        if ph.problem is not None and ph.entry.readable:
            say(VERB, f"project {ph.entry.project_id!r}: {ph.problem}")
    best = merged(per_project, args.limit)
    if args.json:
        print(json.dumps(all_document(text, per_project, args.limit), indent=2, ensure_ascii=True))
    else:
        colour = wants_colour(args.colour)
        for entry, hit in best:
            print_hit(hit, colour, entry.project_id)
        count = total(per_project)
        if not best:
            print("no matches")
        elif count > len(best):
            print(f"showing the best {len(best):,} of {count:,} hits (--limit {count} shows all)")
        else:
            print(f"{count:,} hit{'s' if count != 1 else ''} in {len(entries)} projects")
    return EXIT_FOUND if best else EXIT_NOTHING


def all_document(text: str, per_project: list[ProjectHits], limit: int) -> dict[str, Any]:
    """The ``--all --json`` document."""
    from ..search.projects import merged, total

    return {
        "version": SEARCH_JSON_VERSION,
        "all": True,
        "query": text,
        "total": total(per_project),
        "hits": [
            {**hit_json(hit), "project": entry.project_id, "projectRoot": str(entry.root)}
            for entry, hit in merged(per_project, limit)
        ],
        "projects": [
            {
                "project": ph.entry.project_id,
                "projectRoot": str(ph.entry.root),
                "health": ph.entry.health,
                "read": ph.results is not None,
                "problem": ph.problem,
                "total": 0 if ph.results is None else ph.results.total,
            }
            for ph in per_project
        ],
        "notices": [f"{ph.entry.project_id}: {n}" for ph in per_project for n in ph.notices],
    }
