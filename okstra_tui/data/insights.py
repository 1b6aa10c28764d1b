"""What the Insights view draws: each chart of :mod:`okstra_core.stats` as data, before any widget.

A :class:`Chart` names its title, its axes (with units), its series (each with
a fill pattern, so that it reads without colour) and the items behind its bars,
each with the ``tasks_behind`` key of :class:`okstra_core.stats.Stats` that
lists the tasks behind it. The screen only draws them.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from okstra_core.text import visible
from okstra_core.times import since_text

if TYPE_CHECKING:
    from okstra_core.stats import Filters, Stats

#: Fill patterns, one per series: solid, dense, light, dotted (never colour alone).
PATTERNS = ("█", "▒", "░", "▚")

#: Short phase names: five bars and their labels fit an 80-column chart.
PHASE_SHORT = {
    "analysis": "analysis",
    "option-selection": "options",
    "implementation-planning": "planning",
    "implementation": "implement",
    "final-verification": "verify",
    "not-started": "all",
}


#: At most this many bars along a chart's axis (a year of days). The store decides the axes, and its
#: extremes (a run stamped in year 1 beside one in 9999, a convergence of 10^11 rounds) would otherwise ask
#: for millions of bars: past the limit an axis keeps only the values that occur, the last bar holding the rest.
MAX_BARS = 366
#: Bars of runs that ended without agreement, one per terminal state; past that, the rest share one.
MAX_STATES = 8

#: An outcome as the list beside the chart says it (short: the list is narrow).
OUTCOME_WORDS = {"completed": "completed", "error": "error", "in-progress": "running", "other": "other"}


@dataclass(frozen=True, slots=True)
class Series:
    """One series of bars: its legend label, its fill pattern and one value per x label."""

    label: str
    pattern: str
    values: Sequence[float]


@dataclass(frozen=True, slots=True)
class Item:
    """A row of the list beside a chart: what a bar (or part of one) stands for, and the tasks behind it."""

    label: str
    value: str
    key: str


@dataclass(slots=True)
class Chart:
    """One chart: ``stacked`` bars add up; otherwise a series' bars stand side by side."""

    name: str
    title: str
    x_label: str
    y_label: str
    x: list[str]
    series: list[Series] = field(default_factory=list)
    stacked: bool = False
    #: Bars along the y axis (long labels, such as worker ids, read there).
    horizontal: bool = False
    items: list[Item] = field(default_factory=list)
    #: Said when there is nothing to draw.
    empty: str = "nothing to draw"

    @property
    def has_data(self) -> bool:
        return bool(self.x) and any(v for s in self.series for v in s.values)


def charts(stats: Stats) -> list[Chart]:
    """Every chart of *stats*, in the order the view offers them."""
    return [runs_per_day(stats), phase_times(stats), funnel(stats), fix_cycles(stats), rounds(stats), sizes(stats)]


def calendar(days: list[str]) -> list[str]:
    """Every UTC day from the first of *days* (``YYYY-MM-DD``, sorted) to the last: a day without runs stays
    on the time axis, as a gap. Over a span of :data:`MAX_BARS` days or more, only *days* themselves."""
    import datetime as dt

    if not _to_scale(days):
        return list(days)
    first, last = dt.date.fromisoformat(days[0]), dt.date.fromisoformat(days[-1])
    return [(first + dt.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]


def _to_scale(days: list[str]) -> bool:
    """Whether the span of *days* (sorted) is short enough to draw every day of it."""
    import datetime as dt

    return bool(days) and (dt.date.fromisoformat(days[-1]) - dt.date.fromisoformat(days[0])).days < MAX_BARS


def histogram(counts: dict[int, int], *, start: int | None = None) -> list[tuple[str, int]]:
    """The bars of a histogram of whole numbers: ``(label, count)`` for every number from *start* (default: the
    least) to the most; over more than :data:`MAX_BARS` numbers, only those that occur, and past
    ``MAX_BARS - 1`` of them one last bar ``N+`` holding every number from N up."""
    if not counts:
        return []
    low, high = min(counts) if start is None else min(start, min(counts)), max(counts)
    if high - low < MAX_BARS:
        return [(str(x), counts.get(x, 0)) for x in range(low, high + 1)]
    present = sorted(counts)
    bars = [(str(x), counts[x]) for x in present[: MAX_BARS - 1]]
    rest = present[MAX_BARS - 1 :]
    if rest:
        bars.append((f"{rest[0]}+" if len(rest) > 1 else str(rest[0]), sum(counts[x] for x in rest)))
    return bars


def runs_per_day(stats: Stats) -> Chart:
    from okstra_core.stats import OUTCOMES

    days = sorted(stats.runs_per_day)
    axis = calendar(days)
    per_day = {d: stats.runs_per_day.get(d, {}) for d in axis}
    to_scale = _to_scale(days)
    if len(axis) > MAX_BARS:  # only days with runs, and too many of them: the earliest share the first bar
        earlier = axis[: len(axis) - MAX_BARS + 1]
        axis = [f"to {earlier[-1]}", *axis[len(earlier) :]]
        per_day[axis[0]] = {o: sum(per_day[d].get(o, 0) for d in earlier) for o in OUTCOMES}
    shown = [o for o in OUTCOMES if any(stats.runs_per_day[d].get(o) for d in days)]
    chart = Chart(
        "runs",
        "Runs per day, by outcome",
        "day (UTC, MM-DD)" if to_scale else "day (UTC; only the days with runs)",
        "runs",
        [d[5:] for d in axis] if to_scale else axis,
        [Series(o.replace("-", " "), PATTERNS[OUTCOMES.index(o)], [per_day[d].get(o, 0) for d in axis]) for o in shown],
        stacked=True,
        empty="no run starts in view",
    )
    for day in days:
        counts = stats.runs_per_day[day]
        parts = ", ".join(f"{counts[o]} {OUTCOME_WORDS[o]}" for o in OUTCOMES if counts.get(o))
        chart.items.append(Item(day, parts, f"day:{day}"))
    return chart


def phase_times(stats: Stats) -> Chart:
    chart = Chart(
        "phases",
        "Time per phase: median and quartiles",
        "phase (task type)",
        "minutes",
        [PHASE_SHORT.get(s.task_type, visible(s.task_type)) for s in stats.phases],
        [
            Series("25th percentile", PATTERNS[2], [round(s.p25 / 60, 1) for s in stats.phases]),
            Series("median", PATTERNS[0], [round(s.median / 60, 1) for s in stats.phases]),
            Series("75th percentile", PATTERNS[1], [round(s.p75 / 60, 1) for s in stats.phases]),
        ],
        empty="no run with a start and an end in view",
    )
    for s in stats.phases:
        value = f"median {_minutes(s.median)}, {_minutes(s.p25)}–{_minutes(s.p75)} ({s.runs} runs)"
        chart.items.append(Item(visible(s.task_type), value, f"phase:{s.task_type}"))
    return chart


def funnel(stats: Stats) -> Chart:
    from okstra_core.stats import NOT_STARTED, STOP_LABELS, STOPS

    rows = stats.funnel
    chart = Chart(
        "funnel",
        "Funnel: tasks by phase reached",
        "furthest phase (first bar: every task)",
        "tasks",
        [PHASE_SHORT.get(r.phase, r.phase) for r in rows],
        [
            Series("went further", PATTERNS[0], [r.reached - r.stopped_here for r in rows]),
            Series("stopped here", PATTERNS[2], [r.stopped_here for r in rows]),
        ],
        stacked=True,
        empty="no task in view",
    )
    for r in rows:
        label = "all tasks" if r.phase == NOT_STARTED else r.phase
        value = f"{r.reached}; {r.stopped_here} without a run" if r.phase == NOT_STARTED else f"{r.reached} reached"
        chart.items.append(Item(label, value, f"funnel:{r.phase}"))
        for stop in STOPS:
            if r.stops.get(stop):
                chart.items.append(Item(f"  {STOP_LABELS[stop]}", str(r.stops[stop]), f"funnel:{r.phase}:{stop}"))
    return chart


def fix_cycles(stats: Stats) -> Chart:
    counts = stats.fix_cycles
    bars = histogram(counts, start=0)
    chart = Chart(
        "fix-cycles",
        "Fix cycles per task",
        "fix cycles",
        "tasks",
        [label for label, _ in bars],
        [Series("tasks", PATTERNS[0], [float(n) for _, n in bars])],
        empty="no task in view",
    )
    chart.items = [
        Item(f"{k} cycle{'s' if k != 1 else ''}", f"{v} tasks", f"fix:{k}") for k, v in sorted(counts.items())
    ]
    return chart


def rounds(stats: Stats) -> Chart:
    counts = stats.rounds
    bars = histogram(counts)
    states = sorted(stats.not_converged)
    if len(states) > MAX_STATES:  # the rest share the last bar
        kept, others = states[: MAX_STATES - 1], states[MAX_STATES - 1 :]
        ended = [(f"no agr. ({visible(s)})", stats.not_converged[s]) for s in kept]
        ended.append((f"no agr. ({len(others)} other states)", sum(stats.not_converged[s] for s in others)))
    else:
        ended = [(f"no agr. ({visible(s)})", stats.not_converged[s]) for s in states]
    labels = [label for label, _ in bars] + [label for label, _ in ended]
    agreed = [n for _, n in bars] + [0] * len(ended)
    failed = [0] * len(bars) + [n for _, n in ended]
    chart = Chart(
        "rounds",
        "Convergence rounds until agreement",
        "rounds",
        "runs",
        labels,
        [Series("agreed", PATTERNS[0], agreed), Series("no agreement", PATTERNS[2], failed)],
        stacked=True,
        empty="no finished convergence in view",
    )
    chart.items = [
        Item(f"{k} round{'s' if k != 1 else ''}", f"{v} runs", f"rounds:{k}") for k, v in sorted(counts.items())
    ]
    chart.items += [
        Item(f"no agreement: {visible(s)}", f"{v} runs", f"not-converged:{s}")
        for s, v in sorted(stats.not_converged.items())
    ]
    return chart


def sizes(stats: Stats) -> Chart:
    workers = stats.workers[:6]
    chart = Chart(
        "sizes",
        "Transcript and prompt sizes by worker",
        "KiB",
        "worker",
        [visible(w.worker)[:16] for w in workers],
        [
            Series("transcripts", PATTERNS[0], [round(w.transcript_bytes / 1024, 1) for w in workers]),
            Series("prompts", PATTERNS[2], [round(w.prompt_bytes / 1024, 1) for w in workers]),
        ],
        horizontal=True,
        empty="no prompt or transcript in view",
    )
    chart.items = [
        Item(visible(w.worker), f"{_kib(w.transcript_bytes)} / {_kib(w.prompt_bytes)}", f"worker:{w.worker}")
        for w in stats.workers
    ]
    return chart


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _kib(count: int) -> str:
    return f"{count / 1024:.1f} KiB"


def parse_filters(text: str) -> Filters | str:
    """Filters from the view's filter line (``since:DATE type:TYPE task:GLOB``, or the CLI's options), or why not."""
    from okstra_core.stats import Filters
    from okstra_core.times import SINCE_EXPECTED, parse_since

    try:
        words = shlex.split(text)
    except ValueError as exc:
        return f"cannot read the filter: {exc}"
    values: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and "=" not in word and i + 1 < len(words):
            name, value = word[2:], words[i + 1]
            i += 2
        else:
            name, _, value = word.removeprefix("--").replace("=", ":", 1).partition(":")
            i += 1
        if name not in ("since", "type", "task") or not value:
            return f"unknown filter {visible(word)!r}: use since:WHEN, type:TYPE, task:GLOB"
        values[name] = value
    since = None
    if "since" in values:
        since = parse_since(values["since"])
        if since is None:
            return f"since: {visible(values['since'])!r} is not {SINCE_EXPECTED}"
    return Filters(since=since, task=values.get("task"), task_type=values.get("type"))


def describe_filters(filters: Filters) -> str:
    """The filter line that gives *filters* (empty without any)."""
    parts = []
    if filters.since is not None:
        parts.append(f"since:{since_text(filters.since)}")
    if filters.task_type:
        parts.append(f"type:{shlex.quote(filters.task_type)}")
    if filters.task:
        parts.append(f"task:{shlex.quote(filters.task)}")
    return " ".join(parts)
