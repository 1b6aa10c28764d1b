"""A task's runs as a picture: one bar per run along time, one lane per phase, its status marked.

Lanes go in phase order (analysis at the top), so a fix cycle, which sends
work back to an earlier phase, shows as a bar back up a lane; a run attached
to a fix cycle starts with ``↺``. A bar's fill says its outcome and its last
cell marks it, so the picture reads without colour:

    ``█…✔`` completed · ``▒…✘`` error · ``░…▶`` in progress · ``▚…?`` other

A run with no readable start is left out (the title counts it); a run with
no end yet, or an end before its start, is one cell wide; a finished run too
short for a cell of its own beside the task's span (minutes in days) takes
two, its fill and its mark.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from okstra_core import layout
from okstra_core.text import visible

if TYPE_CHECKING:
    from okstra_core.stats import RunPoint

#: Outcome -> (fill, end mark, style).
MARKS = {
    "completed": ("█", "✔", "green"),
    "error": ("▒", "✘", "red"),
    "in-progress": ("░", "▶", "yellow"),
    "other": ("▚", "?", "magenta"),
}
LANE_NAMES = {
    "analysis": "analysis",
    "option-selection": "options",
    "implementation-planning": "planning",
    "implementation": "implement",
    "final-verification": "verify",
}
LABEL_WIDTH = 10
LEGEND = "█✔ done ▒✘ error ░▶ running ↺ fix cycle"
#: The one-line picture's legend: bars are spelled with their phase's initial.
COMPACT_LEGEND = "a o p i v: phase ✔ ✘ ▶"


def _timed(runs: list[RunPoint]) -> list[tuple[dt.datetime, RunPoint]]:
    return [(r.start, r) for r in runs if r.start is not None]


def lanes_of(runs: list[RunPoint]) -> list[str]:
    """The task types of *runs*, known phases in phase order first."""
    types = {r.task_type for _, r in _timed(runs)}
    known = [t for t in layout.KNOWN_TASK_TYPES if t in types]
    return known + sorted(types - set(known))


def returns(runs: list[RunPoint]) -> int:
    """How many runs go back to an earlier phase than the run before them (in time)."""
    order = {t: i for i, t in enumerate(layout.KNOWN_TASK_TYPES)}
    timed = sorted(((s, r) for s, r in _timed(runs) if r.task_type in order), key=lambda pair: pair[0])
    return sum(1 for (_, a), (_, b) in itertools.pairwise(timed) if order[b.task_type] < order[a.task_type])


Cells = list[tuple[str, str]]


def _bars(
    runs: list[RunPoint], plot: int, lane_of: Callable[[RunPoint], str], fill_of: Callable[[RunPoint], str]
) -> dict[str, Cells]:
    """Each lane's cells: every run a bar from its start to its end (its status mark in the last cell)."""
    timed = _timed(runs)
    first = min(s for s, _ in timed)
    last = max(max(s, r.end or s) for s, r in timed)
    span = max((last - first).total_seconds(), 1.0)

    def column(moment: dt.datetime) -> int:
        return min(plot - 1, max(0, round((moment - first).total_seconds() / span * (plot - 1))))

    rows: dict[str, Cells] = {}
    spans = []
    for start_time, run in timed:
        start = column(start_time)
        end = column(run.end) if run.end is not None and run.end >= start_time else start
        spans.append((run, start, end, rows.setdefault(lane_of(run), [(" ", "")] * plot)))
    spans = [(run, start, _widened(run, start, end, row, spans, plot), row) for run, start, end, row in spans]
    for run, start, end, row in spans:  # the fills first: a later bar never hides an earlier one's mark
        for col in range(start, end):
            row[col] = (fill_of(run), MARKS[run.outcome][2])
    marked: set[tuple[int, int]] = set()
    for run, _start, end, row in spans:
        _, mark, style = MARKS[run.outcome]
        row[end] = (mark, f"bold {style}")
        marked.add((id(row), end))
    for run, start, end, row in spans:
        at = start + 1 if (id(row), start) in marked else start  # the previous bar's mark stays
        if run.fix_cycle_id and at < end:
            row[at] = ("↺", f"bold {MARKS[run.outcome][2]}")
    return rows


def _widened(run: RunPoint, start: int, end: int, row: Cells, spans: list[Any], plot: int) -> int:
    """A finished run short beside the task's span (minutes in days) takes a second cell, for its phase and
    its mark, when no other bar of its row needs that cell."""
    finished = run.end is not None and run.start is not None and run.end >= run.start
    if end != start or not finished or start + 1 >= plot:
        return end
    taken = any(o is not run and r is row and s <= start + 1 <= e for o, s, e, r in spans)
    return end if taken else start + 1


def _line(label: str, cells: Cells) -> Text:
    line = Text(label, style="bold")
    for char, style in cells:
        line.append(char, style=style)
    return line


def draw(runs: list[RunPoint], width: int) -> list[Text]:
    """The picture's lines for *width* cells: a lane per phase, then the time axis."""
    timed = _timed(runs)
    if not timed or width < LABEL_WIDTH + 8:
        return [Text("no run with a start time yet", style="dim")]
    plot = width - LABEL_WIDTH - 1
    rows = _bars(runs, plot, lambda r: r.task_type, lambda r: MARKS[r.outcome][0])
    out = [
        _line(visible(LANE_NAMES.get(lane, lane))[:LABEL_WIDTH].ljust(LABEL_WIDTH + 1), rows[lane])
        for lane in lanes_of(runs)
    ]
    out.append(_axis(timed, width, LABEL_WIDTH + 1))
    return out


def draw_compact(runs: list[RunPoint], width: int) -> list[Text]:
    """One line for a small terminal: each run's bar spelled with its phase's initial (``a o p i v``)."""
    timed = _timed(runs)
    if not timed or width < 8:
        return [Text("no run with a start time yet", style="dim")]
    rows = _bars(runs, width, lambda r: "all", lambda r: visible(LANE_NAMES.get(r.task_type, r.task_type))[:1])
    return [_line("", rows["all"])]


def _axis(timed: list[tuple[dt.datetime, RunPoint]], width: int, indent: int) -> Text:
    first = min(s for s, _ in timed)
    last = max(max(s, r.end or s) for s, r in timed)
    left, right = _stamp(first), _stamp(last)
    axis = " " * indent + left
    gap = width - len(axis) - len(right)
    return Text(axis + (" " * gap + right if gap > 0 else ""), style="dim")


def _stamp(moment: dt.datetime) -> str:
    return moment.strftime("%m-%d %H:%M")


class RunTimeline(Widget):
    """The picture of one task's runs (see the module doc); as tall as its lanes plus the time axis."""

    DEFAULT_CSS = """
    RunTimeline { height: auto; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.runs: list[RunPoint] = []
        self.notes: list[str] = []
        #: One line instead of a lane per phase (a small terminal).
        self.compact = False

    def set_compact(self, compact: bool) -> None:
        if compact != self.compact:
            self.compact = compact
            self.border_subtitle = COMPACT_LEGEND if compact else LEGEND
            self.refresh(layout=True)

    def show(self, runs: list[RunPoint], notes: list[str]) -> None:
        self.runs = runs
        self.notes = notes
        back = returns(runs)
        title = (
            f"Runs over time · {back} return{'s' if back != 1 else ''} to an earlier phase"
            if back
            else "Runs over time"
        )
        left_out = sum(1 for r in runs if r.start is None)
        if left_out:
            title += f" · {left_out} without a start time"
        self.border_title = title
        self.border_subtitle = COMPACT_LEGEND if self.compact else LEGEND
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.compact or not _timed(self.runs):
            return 1
        return len(lanes_of(self.runs)) + 1

    def render(self) -> Text:
        paint = draw_compact if self.compact else draw
        return Text("\n").join(paint(self.runs, self.content_size.width))
