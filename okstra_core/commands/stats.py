"""``okstra stats PROJECT [--json] [--since DATE] [--task GLOB] [--type TYPE]``: how the agents are working.

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
from typing import Any

from ..text import visible
from .common import add_index_args, open_index, open_project, say_index_notices


def register(sub: Any) -> None:
    p = sub.add_parser(
        "stats", help="how the agents are working: runs per day, time per phase, funnel, fix cycles, sizes"
    )
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON (version 1)")
    p.add_argument("--since", metavar="DATE", help="only runs that started on or after DATE (YYYY-MM-DD, UTC)")
    p.add_argument("--task", metavar="GLOB", help="only tasks whose key, group/task or task id matches GLOB")
    p.add_argument("--type", metavar="TYPE", dest="task_type", help="only runs of task type TYPE (and their tasks)")
    add_index_args(p)
    p.set_defaults(func=run, parser=p)


def run(args: argparse.Namespace) -> int:
    from ..stats import Filters, compute, parse_since

    since = None
    if args.since is not None:
        since = parse_since(args.since)
        if since is None:
            args.parser.error(f"--since: {visible(args.since)!r} is not a date (YYYY-MM-DD)")
    project = open_project(args)
    filters = Filters(since=since, task=args.task, task_type=args.task_type)
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
    out.extend(_table(["DAY", *(o.upper() for o in OUTCOMES)], rows))
    out.append("Time per phase (minutes: median, quartiles, least, most)")
    rows = [
        [visible(s.task_type), str(s.runs), *(_minutes(v) for v in (s.median, s.p25, s.p75, s.least, s.most))]
        for s in stats.phases
    ]
    out.extend(_table(["PHASE", "RUNS", "MEDIAN", "P25", "P75", "MIN", "MAX"], rows))
    out.append("Funnel (tasks reaching each phase; where those that went no further stop)")
    rows = []
    for row in stats.funnel:
        stops = ", ".join(f"{STOP_LABELS[s]} {row.stops[s]}" for s in STOPS if row.stops.get(s))
        rows.append([row.phase, str(row.reached), str(row.stopped_here), stops or "-"])
    out.extend(_table(["PHASE", "REACHED", "STOPPED", "WHERE THEY STOP"], rows))
    out.append("Fix cycles per task")
    out.extend(_table(["CYCLES", "TASKS"], [[str(k), str(v)] for k, v in sorted(stats.fix_cycles.items())]))
    out.append("Convergence rounds until agreement")
    rows = [[str(k), str(v)] for k, v in sorted(stats.rounds.items())]
    rows += [[f"no agreement ({visible(state)})", str(v)] for state, v in sorted(stats.not_converged.items())]
    out.extend(_table(["ROUNDS", "RUNS"], rows))
    out.append("Prompt and transcript sizes by worker (bytes)")
    rows = [
        [visible(w.worker), str(w.prompts), str(w.prompt_bytes), str(w.transcripts), str(w.transcript_bytes)]
        for w in stats.workers
    ]
    out.extend(_table(["WORKER", "PROMPTS", "PROMPT BYTES", "TRANSCRIPTS", "TRANSCRIPT BYTES"], rows))
    out.extend(f"note: {note}" for note in stats.notes)
    return "\n".join(out) + "\n"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return ["  (none)", ""]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        parts = [c.rjust(w) if _numeric(c) else c.ljust(w) for c, w in zip(cells, widths, strict=True)]
        return ("  " + "  ".join(parts)).rstrip()

    return [line(head), *(line(r) for r in rows), ""]


def _numeric(cell: str) -> bool:
    return cell.replace(".", "", 1).isdigit()
