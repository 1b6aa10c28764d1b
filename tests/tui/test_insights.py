"""The Insights view: charts of ``okstra_core.stats`` over the demo, the list behind each bar, the filters."""

from __future__ import annotations

import datetime as dt
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, OptionList

from okstra_core import stats as core_stats
from okstra_core.stats import Filters, compute
from okstra_core.store import Project
from okstra_tui.data.insights import PATTERNS, calendar, charts, describe_filters, parse_filters, runs_per_day
from okstra_tui.screens.insights import NOTES_LINES, AllNotes, InsightsScreen, TasksBehind, notes_text
from okstra_tui.screens.task import TaskScreen
from okstra_tui.screenshots import settle
from okstra_tui.widgets import chart as chart_widget
from okstra_tui.widgets.chart import ChartPlot

from .conftest import SIZE, make_app, open_view, plain, wait_until


def test_every_chart_has_a_title_axes_with_units_and_a_pattern_per_series(demo_root: Path) -> None:
    made = charts(compute(Project(demo_root)))
    assert [c.name for c in made] == ["runs", "phases", "funnel", "fix-cycles", "rounds", "sizes"]
    units = {"runs": "runs", "phases": "minutes", "funnel": "tasks", "fix-cycles": "tasks", "rounds": "runs"}
    for chart in made:
        assert chart.title and chart.x_label and chart.y_label
        assert chart.has_data, chart.name
        patterns = [s.pattern for s in chart.series]
        assert len(set(patterns)) == len(patterns) and set(patterns) <= set(PATTERNS)
        assert all(len(s.values) == len(chart.x) for s in chart.series)
        assert chart.items
    for chart in made[:-1]:
        assert chart.y_label == units[chart.name]
    assert made[-1].x_label == "KiB" and made[-1].horizontal


def test_each_item_names_the_tasks_behind_it(demo_root: Path) -> None:
    stats = compute(Project(demo_root))
    funnel = next(c for c in charts(stats) if c.name == "funnel")
    stops = [i for i in funnel.items if i.key.count(":") == 2]
    assert stops and all(len(stats.behind(i.key)) == int(i.value) for i in stops)
    runs = next(c for c in charts(stats) if c.name == "runs")
    assert {t.key for i in runs.items for t in stats.behind(i.key)} == {t.key for t in stats.tasks}
    first_day = {t.key for t in stats.behind(runs.items[0].key)}
    assert first_day == {"demo-shop:search:query-latency"}  # its flat legacy run, on 2026-10-01
    second_day = {t.key for t in stats.behind(runs.items[1].key)}
    assert second_day == {"demo-shop:platform:observability", "demo-shop:platform:ci-speedup"}


def test_days_without_runs_stay_on_the_time_axis(demo_root: Path) -> None:
    stats = compute(Project(demo_root))
    chart = runs_per_day(stats)
    assert chart.x == [d[5:] for d in calendar(sorted(stats.runs_per_day))]
    assert (chart.x[0], chart.x[-1], len(chart.x)) == ("10-01", "11-17", 48)
    saturday = chart.x.index("11-07")
    assert all(series.values[saturday] == 0 for series in chart.series)
    assert [item.key for item in chart.items] == [f"day:{day}" for day in sorted(stats.runs_per_day)]
    assert calendar([]) == [] and calendar(["2026-12-31", "2027-01-01"]) == ["2026-12-31", "2027-01-01"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", Filters()),
        ("since:2026-11-02", Filters(since=dt.datetime(2026, 11, 2, tzinfo=dt.UTC))),
        ("since:2026-11-02T10:30:00Z", Filters(since=dt.datetime(2026, 11, 2, 10, 30, tzinfo=dt.UTC))),
        ("type:analysis task:'payments/*'", Filters(task="payments/*", task_type="analysis")),
        (
            "--since 2026-11-02 --type=analysis",
            Filters(since=dt.datetime(2026, 11, 2, tzinfo=dt.UTC), task_type="analysis"),
        ),
    ],
)
def test_filter_line(text: str, expected: Filters) -> None:
    assert parse_filters(text) == expected
    assert parse_filters(describe_filters(expected)) == expected


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("since:yesterday", "since: 'yesterday' is not a date (2026-11-30), a UTC time"),
        ("owner:me", "unknown filter 'owner:me'"),
        ("type:", "unknown filter 'type:'"),
        ("task:'open", "cannot read the filter"),
    ],
)
def test_bad_filter_line_says_why(text: str, said: str) -> None:
    result = parse_filters(text)
    assert isinstance(result, str) and result.startswith(said)


async def open_insights(pilot: Any) -> InsightsScreen:
    screen = await open_view(pilot, "I", InsightsScreen)
    await wait_until(pilot, lambda: screen.stats is not None, "the statistics shown")
    return screen


async def test_i_opens_insights_computed_in_a_worker(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[threading.Thread] = []
    real = core_stats.compute

    def recording(project: Project, filters: Filters | None = None) -> Any:
        threads.append(threading.current_thread())
        return real(project, filters)

    built: list[threading.Thread] = []
    real_build = chart_widget.build

    def building(*args: Any) -> Any:
        built.append(threading.current_thread())
        return real_build(*args)

    monkeypatch.setattr(core_stats, "compute", recording)
    monkeypatch.setattr(chart_widget, "build", building)
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_insights(pilot)
        assert threads and all(t is not threading.main_thread() for t in threads)
        # Every chart is drawn in the worker; the first paint only shows the picture.
        assert len(built) == 6 and all(t is not threading.main_thread() for t in built)
        assert "13 tasks, 24 runs" in plain(screen.query_one("#ins-summary"))
        plot = screen.query_one("#ins-chart", ChartPlot)
        assert plot.chart is not None and plot.chart.name == "runs"
        await pilot.press("3")
        assert plot.chart is not None and plot.chart.name == "funnel"
        await pilot.press("n")
        assert plot.chart is not None and plot.chart.name == "fix-cycles"
        await pilot.press("p", "p", "p", "p")
        assert plot.chart is not None and plot.chart.name == "sizes"


async def test_enter_on_a_bar_lists_its_tasks_and_opens_one(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_insights(pilot)
        await pilot.press("3")  # the funnel: its first stop row is analysis / error
        table = screen.query_one("#ins-items", DataTable)
        rows = screen.charts[2].items
        target = next(i for i, item in enumerate(rows) if item.key == "funnel:analysis:error")
        table.move_cursor(row=target)
        await pilot.press("enter")
        await settle(pilot)
        behind = app.screen
        assert isinstance(behind, TasksBehind)
        assert [t.key for t in behind.tasks] == ["demo-shop:platform:observability"]
        assert behind.query_one(OptionList).option_count == 1
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TaskScreen)
        assert app.screen.location.task_root.name == "observability"


def test_notes_show_in_full_or_as_a_count() -> None:
    notes = [f"note number {i}" for i in range(1, 6)]
    assert notes_text(notes[:NOTES_LINES]).plain.splitlines() == [f"note: {n}" for n in notes[:NOTES_LINES]]
    lines = notes_text(notes).plain.splitlines()
    assert len(lines) == NOTES_LINES
    assert lines[-1].startswith(f"+{len(notes) - NOTES_LINES + 1} more notes") and "o:" in lines[-1]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_every_note_shows_under_the_chart_and_o_lists_them(demo_root: Path, size: tuple[int, int]) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        screen = await open_insights(pilot)
        notes = list(screen.stats.notes)
        assert len(notes) == 2, "the demo has a run in progress and a run without a recorded end"
        box = screen.query_one("#ins-notes")
        assert box.size.height == len(notes)
        shown = plain(box)
        assert all(note in shown for note in notes)
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, AllNotes)
        listed = plain(app.screen.query_one("Static"))
        assert all(note.split("(")[0] in listed for note in notes)


async def test_the_filter_narrows_like_the_cli(demo_root: Path) -> None:
    expected = compute(Project(demo_root), Filters(task_type="analysis"))
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_insights(pilot)
        await pilot.press("slash")
        await pilot.press(*"type:analysis", "enter")
        await wait_until(pilot, lambda: screen.stats.filters.task_type == "analysis", "the filtered statistics")
        await settle(pilot)
        summary = plain(screen.query_one("#ins-summary"))
        assert f"{len(expected.tasks)} tasks, {len(expected.runs)} runs" in summary
        assert "filter type:analysis" in summary
        await pilot.press("slash")
        box = screen.query_one("#ins-filter")
        box.value = "since:never"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await settle(pilot)
        assert screen.stats.filters.task_type == "analysis"  # a bad line changes nothing


async def test_an_empty_store_says_there_is_nothing_to_draw(tmp_path: Path) -> None:
    (tmp_path / ".okstra").mkdir()
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_insights(pilot)
        assert "0 tasks, 0 runs" in plain(screen.query_one("#ins-summary"))
        plot = screen.query_one("#ins-chart", ChartPlot)
        assert plot.render().plain == "Runs per day, by outcome: no run starts in view"
        for key in "23456":
            await pilot.press(key)
            assert plot.chart is not None and not plot.chart.has_data
            assert plot.render().plain.startswith(plot.chart.title + ": ")
        await pilot.press("enter")  # no row: nothing happens
        assert isinstance(app.screen, InsightsScreen)


def _entries(doc: Any) -> list[dict[str, Any]]:
    return doc["entries"] if isinstance(doc, dict) else doc  # type: ignore[no-any-return]


def test_hostile_extremes_give_bounded_axes_that_draw(fresh_demo: Path) -> None:
    """A convergence of 10^11 rounds, runs stamped in year 1 and in 9999, fix cycles past any axis: every
    chart keeps at most MAX_BARS bars (the rest shares the last), counts nothing twice, and draws. The huge
    count is shown as it is, as the one bar after the others (the axis skips the numbers no run took)."""
    import json

    from textual.geometry import Size

    from okstra_tui.data.insights import MAX_BARS, MAX_STATES, histogram

    # Chosen by content, not by the order a folder lists its entries in (which differs between file systems
    # and between a tree and its copy): a convergence that agreed, a timeline with a first and a last run.
    finals = sorted(fresh_demo.glob(".okstra/tasks/*/*/runs/*/state/convergence-analysis-001.json"))
    convergence = next(p for p in finals if json.loads(p.read_text())["terminalState"] == "converged")
    doc = json.loads(convergence.read_text())
    doc["rounds"] = 100_000_000_000
    convergence.write_text(json.dumps(doc))
    timelines = sorted(fresh_demo.glob(".okstra/tasks/*/*/history/timeline.json"))
    timeline = next(p for p in timelines if len(_entries(json.loads(p.read_text()))) >= 2)
    doc = json.loads(timeline.read_text())
    entries = _entries(doc)
    entries[0]["runDateTimeSegment"] = entries[0]["runTimestamp"] = "0001-01-01T00:00:00Z"
    entries[-1]["runDateTimeSegment"] = entries[-1]["runTimestamp"] = "9999-12-31T23:59:59Z"
    timeline.write_text(json.dumps(doc))
    stats = compute(Project(fresh_demo))
    assert 100_000_000_000 in stats.rounds and {"0001-01-01", "9999-12-31"} <= set(stats.runs_per_day)
    stats.fix_cycles.update({n * n * 1000: 1 for n in range(1, 2 * MAX_BARS)})
    stats.not_converged.update({f"state-{n}": 1 for n in range(3 * MAX_STATES)})
    made = {c.name: c for c in charts(stats)}
    for chart in made.values():
        assert len(chart.x) <= MAX_BARS + MAX_STATES, (chart.name, len(chart.x))
        assert chart_widget.build(chart, Size(80, 24), "dark")
    runs = made["runs"]
    assert sum(sum(s.values) for s in runs.series) == sum(sum(d.values()) for d in stats.runs_per_day.values())
    assert runs.x[0] == "0001-01-01" and runs.x[-1] == "9999-12-31"  # the days with runs, named in full
    rounds = made["rounds"]
    assert rounds.x[: len(stats.rounds)] == [str(n) for n in sorted(stats.rounds)]
    assert rounds.x[len(stats.rounds) - 1] == "100000000000" and rounds.series[0].values[len(stats.rounds) - 1] == 1
    assert sum(rounds.series[1].values) == sum(stats.not_converged.values())
    fixes = made["fix-cycles"]
    assert len(fixes.x) == MAX_BARS and fixes.x[-1].endswith("+")
    assert sum(fixes.series[0].values) == sum(stats.fix_cycles.values())
    # A short histogram keeps every number, a gap included.
    assert histogram({1: 2, 3: 1}) == [("1", 2), ("2", 0), ("3", 1)]
    assert histogram({2: 1}, start=0) == [("0", 0), ("1", 0), ("2", 1)]


def _axis_ticks(picture: str) -> list[float]:
    """The numbers on the value axis of a vertical chart's picture (the labels left of ``┤``)."""
    return [float(m.group(1)) for m in re.finditer(r"^\s*(-?[\d.]+)┤", picture, flags=re.MULTILINE)]


@pytest.mark.parametrize("size", [SIZE, (80, 24)], ids=["120x40", "80x24"])
async def test_every_chart_scales_to_its_data_and_stands_every_series_on_the_axis(
    demo_root: Path, size: tuple[int, int]
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        screen = await open_view(pilot, "I", InsightsScreen)
        plot = screen.query_one(ChartPlot)
        for index, chart in enumerate(screen.charts):
            screen.action_chart(index)
            await pilot.pause()
            picture = plot.render().plain
            lines = picture.splitlines()
            assert len(lines) <= plot.size.height, chart.name
            if not chart.horizontal:
                _assert_scaled_and_standing(chart, picture)
            body = "\n".join(lines[:-1])
            shown = [s.label for s in chart.series if any(s.values) and s.pattern not in body]
            assert not shown, (chart.name, "series hidden by another", shown)
            # The legend, a line of its own under the plot, names every series by its pattern.
            assert all(f"{s.pattern * 2} {s.label}" in lines[-1] for s in chart.series), lines[-1]


def _assert_scaled_and_standing(chart: Any, picture: str) -> None:
    """The value axis ends at the data's top; a stacked series standing on an empty one touches the axis."""
    lines = picture.splitlines()
    columns = zip(*(s.values for s in chart.series), strict=True)
    top = max(sum(col) if chart.stacked else max(col) for col in columns)
    ticks = _axis_ticks(picture)
    assert ticks and max(ticks) <= top, (chart.name, ticks, top)  # no axis past the data
    if not chart.stacked:
        return
    axis_row = next(line for line in lines if re.match(r"^\s*0(\.0)?┤", line))
    for i, series in enumerate(chart.series):
        on_axis = any(v > 0 and not any(s.values[j] for s in chart.series[:i]) for j, v in enumerate(series.values))
        if on_axis:
            assert series.pattern in axis_row, (chart.name, series.label, axis_row)
