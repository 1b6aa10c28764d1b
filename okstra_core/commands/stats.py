"""``okstra stats PROJECT [--json] [--since WHEN] [--task GLOB] [--type TYPE]``: how the agents are working.

The numbers behind the workbench's Insights view (see :mod:`okstra_core.stats`),
as tables: runs per day by outcome, time per phase (median and spread), the
funnel of tasks by phase reached and where they stop, fix cycles per task,
convergence rounds until agreement, and prompt and transcript bytes by worker.
Every number is read from the store at the time of the call: each task's
numbers through the store index (reused while the files they were read from
are as they were; ``--no-cache`` reads every task afresh, with the same
answer).

Exit 0 (1 only when the project cannot be opened; 2 for a bad option).
``--json`` prints ``{"version": 1, "project", "filters", "tasks", "runs",
"runsPerDay", "phaseDurations", "funnel", "fixCycles", "convergenceRounds",
"notConverged", "workers", "notes", "unreadable", "unreadablePaths"}``
(ASCII: store strings carry control characters only as ``\\u`` escapes). Text
output shows store strings through :func:`okstra_core.text.visible`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..text import visible
from .common import add_index_args, open_index, open_project, say_index_notices
from .projects import add_all_args, check_all_args, say, selected_projects

if TYPE_CHECKING:
    from ..projects import ProjectEntry
    from ..stats import Filters, Stats


def register(sub: Any) -> None:
    p = sub.add_parser(
        "stats", help="how the agents are working: runs per day, time per phase, funnel, fix cycles, sizes"
    )
    p.add_argument("project", type=Path, nargs="?", help="project root holding .okstra/ (or --all)")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON (version 1)")
    p.add_argument(
        "--since",
        metavar="WHEN",
        help="only runs the store records as started at or after WHEN: a date (2026-11-30, UTC), "
        "a UTC time (2026-11-30T04:15:00Z) or an age (12h, 7d, 2w)",
    )
    p.add_argument("--task", metavar="GLOB", help="only tasks whose key, group/task or task id matches GLOB")
    p.add_argument("--type", metavar="TYPE", dest="task_type", help="only runs of task type TYPE (and their tasks)")
    add_all_args(p, "the statistics, per project,")
    add_index_args(p)
    p.set_defaults(func=run, parser=p)


def run(args: argparse.Namespace) -> int:
    from ..stats import Filters, compute
    from ..times import SINCE_EXPECTED, parse_since

    since = None
    if args.since is not None:
        since = parse_since(args.since)
        if since is None:
            args.parser.error(f"--since: {visible(args.since)!r} is not {SINCE_EXPECTED}")
    check_all_args(args, args.parser, args.project is not None)
    filters = Filters(since=since, task=args.task, task_type=args.task_type)
    if args.all:
        return run_all(args, filters)
    project = open_project(args)
    index = open_index(args, project, "stats")
    if index is None:
        stats = compute(project, filters)
    else:
        with index:
            stats = compute(project, filters, index)
        say_index_notices(index, "stats")
    if args.json:
        print(json.dumps(stats.to_json(), indent=2, ensure_ascii=True))
        return 0
    print(render_text(stats), end="")
    return 0


def render_text(stats: Any) -> str:
    """The statistics as fixed-width tables for people."""
    from ..stats import OUTCOMES, STOP_LABELS, STOPS

    out: list[str] = []
    shown = ", ".join(f"{k} {visible(str(v))}" for k, v in stats.filters.to_json().items() if v is not None)
    out.append(f"{len(stats.tasks)} tasks, {len(stats.runs)} runs" + (f" ({shown})" if shown else ""))
    out.append("")
    out.append("Runs per day (UTC, by run start)")
    rows = [[day, *(str(c.get(o, 0)) for o in OUTCOMES)] for day, c in sorted(stats.runs_per_day.items())]
    out.extend(table(["DAY", *(o.upper() for o in OUTCOMES)], rows))
    out.append("Time per phase (minutes: median, quartiles, least, most)")
    rows = [
        [visible(s.task_type), str(s.runs), *(_minutes(v) for v in (s.median, s.p25, s.p75, s.least, s.most))]
        for s in stats.phases
    ]
    out.extend(table(["PHASE", "RUNS", "MEDIAN", "P25", "P75", "MIN", "MAX"], rows))
    out.append("Funnel (tasks reaching each phase; where those that went no further stop)")
    rows = []
    for row in stats.funnel:
        stops = ", ".join(f"{STOP_LABELS[s]} {row.stops[s]}" for s in STOPS if row.stops.get(s))
        rows.append([row.phase, str(row.reached), str(row.stopped_here), stops or "-"])
    out.extend(table(["PHASE", "REACHED", "STOPPED", "WHERE THEY STOP"], rows))
    out.append("Fix cycles per task")
    out.extend(table(["CYCLES", "TASKS"], [[str(k), str(v)] for k, v in sorted(stats.fix_cycles.items())]))
    out.append("Convergence rounds until agreement")
    rows = [[str(k), str(v)] for k, v in sorted(stats.rounds.items())]
    rows += [[f"no agreement ({visible(state)})", str(v)] for state, v in sorted(stats.not_converged.items())]
    out.extend(table(["ROUNDS", "RUNS"], rows))
    out.append("Prompt and transcript sizes by worker (bytes)")
    rows = [
        [visible(w.worker), str(w.prompts), str(w.prompt_bytes), str(w.transcripts), str(w.transcript_bytes)]
        for w in stats.workers
    ]
    out.extend(table(["WORKER", "PROMPTS", "PROMPT BYTES", "TRANSCRIPTS", "TRANSCRIPT BYTES"], rows))
    out.extend(f"note: {note}" for note in stats.notes)
    return "\n".join(out) + "\n"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def table(head: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return ["  (none)", ""]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        parts = [c.rjust(w) if _numeric(c) else c.ljust(w) for c, w in zip(cells, widths, strict=True)]
        return ("  " + "  ".join(parts)).rstrip()

    return [line(head), *(line(r) for r in rows), ""]


def _numeric(cell: str) -> bool:
    return cell.replace(".", "", 1).isdigit()


# ------------------------------------------------------------------ --all
#
# ``okstra stats --all [--project ID]...``: the statistics of every project of the registry, side by side.
#
# Text output starts with one row per project (tasks, runs by outcome, fix
# cycles, the funnel's last phase reached), then each project's tables as
# ``okstra stats PROJECT`` prints them under a heading. ``--json`` prints
# ``{"version": 1, "all": true, "filters", "tasks", "runs", "projects": [...]}``
# with ``tasks`` and ``runs`` summed over the projects read, and per project
# ``{project, projectRoot, health, read, problem, stats}`` (``stats``: the
# ``okstra stats --json`` document, null when the project could not be read).
# Exit 0 when every project was read, 1 otherwise.

VERB = "stats"


def run_all(args: argparse.Namespace, filters: Filters) -> int:
    from ..stats import compute_for

    entries, registry = selected_projects(args, VERB)
    per_project = [(e, compute_for(e, filters)) for e in entries]
    for entry, stats in per_project:
        if isinstance(stats, str) and entry.readable:
            say(VERB, f"project {entry.project_id!r}: {stats}")
    if args.json:
        print(json.dumps(all_document(filters, per_project), indent=2, ensure_ascii=True))
    else:
        print(render_all(per_project), end="")
    return 0 if all(not isinstance(s, str) for _, s in per_project) and not registry.notes else 1


def all_document(filters: Filters, per_project: list[tuple[ProjectEntry, Stats | str]]) -> dict[str, Any]:
    from ..stats import STATS_JSON_VERSION

    read = [s for _, s in per_project if not isinstance(s, str)]
    return {
        "version": STATS_JSON_VERSION,
        "all": True,
        "filters": filters.to_json(),
        "tasks": sum(len(s.tasks) for s in read),
        "runs": sum(len(s.runs) for s in read),
        "projects": [
            {
                "project": entry.project_id,
                "projectRoot": str(entry.root),
                "health": entry.health,
                "read": not isinstance(stats, str),
                "problem": stats if isinstance(stats, str) else None,
                "stats": None if isinstance(stats, str) else stats.to_json(),
            }
            for entry, stats in per_project
        ],
    }


def render_all(per_project: list[tuple[ProjectEntry, Stats | str]]) -> str:
    """The per-project table, then each project's tables under its heading."""
    from ..stats import OUTCOMES

    rows = []
    for entry, stats in per_project:
        if isinstance(stats, str):
            rows.append([visible(entry.project_id), "-", "-", *("-" for _ in OUTCOMES), "not read"])
            continue
        outcomes = stats.outcome_totals()
        rows.append([visible(entry.project_id), str(len(stats.tasks)), str(len(stats.runs))])
        rows[-1] += [*(str(outcomes[o]) for o in OUTCOMES), f"{stats.fix_cycles_total()} fix cycles"]
    out = ["Projects"]
    out.extend(table(["PROJECT", "TASKS", "RUNS", *(o.upper() for o in OUTCOMES), "NOTE"], rows))
    for entry, stats in per_project:
        if not isinstance(stats, str):
            out.append(f"== {visible(entry.project_id)}  {visible(str(entry.root))}")
            out.append(render_text(stats).rstrip("\n"))
            out.append("")
    return "\n".join(out) + "\n"
