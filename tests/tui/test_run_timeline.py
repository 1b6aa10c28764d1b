"""The task view's picture of its runs: lanes by phase, a bar per run, its status marked, fix cycles visible."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from okstra_core.stats import RunPoint, TaskItem
from okstra_tui.navigation import Location, View
from okstra_tui.screens.task import TaskScreen
from okstra_tui.screenshots import settle
from okstra_tui.widgets.run_timeline import RunTimeline, draw, draw_compact, lanes_of, returns

from .conftest import SIZE, make_app

T0 = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.UTC)
TASK = TaskItem("p:g:t", Path("/nowhere"))


def run(task_type: str, start: int | None, end: int | None, status: str | None, fix: str | None = None) -> RunPoint:
    """A run starting *start* minutes after T0 and ending *end* minutes after it."""
    at = None if start is None else T0 + dt.timedelta(minutes=start)
    until = None if end is None else T0 + dt.timedelta(minutes=end)
    return RunPoint(TASK, task_type, None, status, at, until, fix)


RUNS = [
    run("analysis", 0, 10, "completed"),
    run("option-selection", 10, 20, "completed"),
    run("analysis", 20, 30, "error", fix="fc-1"),  # back to analysis: a fix cycle
    run("option-selection", 30, None, "prepared"),  # still running: one cell
    run("implementation", None, None, "completed"),  # no start: left out
]


def test_lanes_in_phase_order_and_returns_counted() -> None:
    assert lanes_of(RUNS) == ["analysis", "option-selection"]
    assert returns(RUNS) == 1


def test_each_run_is_a_bar_in_its_phases_lane_with_its_status_mark() -> None:
    lines = [t.plain for t in draw(RUNS, 11 + 31)]  # a 31-cell plot: one cell per minute
    assert lines[0] == "analysis   " + "█" * 10 + "✔" + " " * 9 + "↺" + "▒" * 9 + "✘"
    assert lines[1] == "options    " + " " * 10 + "█" * 10 + "✔" + " " * 9 + "▶"
    assert lines[2].split() == ["11-02", "09:00", "11-02", "09:30"]


def test_compact_picture_is_one_line_of_phase_initials() -> None:
    (line,) = draw_compact(RUNS, 31)
    # Marks win over fills; the running option-selection's mark covers the errored analysis' at minute 30.
    assert line.plain == "a" * 10 + "✔" + "o" * 9 + "✔↺" + "a" * 8 + "▶"


def test_skew_and_no_runs() -> None:
    skewed = [run("analysis", 10, 5, "completed")]  # ends before it starts: one cell
    assert draw(skewed, 11 + 10)[0].plain.strip() == "analysis   ✔".strip()
    assert [t.plain for t in draw([], 40)] == ["no run with a start time yet"]


async def test_task_view_draws_the_picture_above_the_table(demo_root: Path, demo_home: Path) -> None:
    app = make_app(demo_root)
    root = demo_root / ".okstra/tasks/payments/retry-policy"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.navigate(Location(View.TASK, root))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TaskScreen)
        picture = screen.query_one("#task-picture", RunTimeline)
        assert len(picture.runs) == 9 and not picture.compact
        assert picture.region.y < screen.query_one("#task-timeline").region.y
        assert picture.region.height == 5 + 1 + 2  # five phases, the time axis, the border
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert picture.compact and picture.region.height == 3
