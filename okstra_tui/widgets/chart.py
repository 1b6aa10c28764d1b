"""One Insights chart drawn with textual-plotext: title, axis labels with units, a pattern per series.

Series differ by fill pattern (``█ ▒ ░``) as well as colour, and the legend
(a line under the plot) names each pattern, so a chart reads on a monochrome
terminal. The value axis runs to the data's top; counts get whole-number
ticks.

A plotext build takes tens of milliseconds, so a chart is built once per
chart, size and theme: :meth:`ChartPlot.build_all` builds them off the UI
thread (each build on a plot object of its own), and the first paint only
shows the result.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import plotext._utility as _plotext_utility  # type: ignore[import-untyped]
from rich.text import Text
from textual.geometry import Size
from textual_plotext import Plot, PlotextPlot

from ..data.insights import Chart
from .shown import cut

#: What a built chart is kept under: the chart, the size it was built for, the plotext theme.
BuildKey = tuple[int, Size, str]


def _ordered_unique(data: Any) -> list[Any]:
    return list(dict.fromkeys(data))


# plotext removes duplicate points and tick labels through a set, whose order follows the process's string
# hash seed: where two tick labels meet, which one wins changed from one run to the next. The same removal,
# keeping the first occurrence in order, draws the same picture every time.
_plotext_utility.no_duplicates = _ordered_unique


def build(chart: Chart, size: Size, theme: str) -> Text:
    """*chart* drawn by plotext at *size* in the plotext *theme* (any thread: the plot is its own).

    The legend is a line of its own under the plot (plotext would draw it over the bars), so the plot's
    axis runs to the data's top and nothing hides a bar.
    """
    plot = Plot()
    height = max(size.height - 1, 1)
    draw(plot, chart, Size(size.width, height))
    plot.plotsize(size.width, height)
    plot._set_size(size.width, height)  # as PlotextPlot.render does: plotsize alone does not always take
    plot.theme(theme)
    return Text.assemble(Text.from_ansi(plot.build().rstrip("\n")), "\n", legend(chart, size.width))


def legend(chart: Chart, width: int) -> Text:
    """One line naming each series by its pattern (``██ median  ▒▒ 75th percentile``), cut to *width*."""
    parts = [f"{s.pattern * 2} {s.label}" for s in chart.series]
    return cut(Text(" " + "  ".join(parts)), width)


#: A bar's share of its slot: the gap keeps neighbouring bars of one height apart.
BAR_WIDTH = 0.5

#: Rows a vertical chart spends on things other than its plot: title, frame, tick labels, axis labels.
CHART_CHROME_ROWS = 6


def draw(plot: Plot, chart: Chart, size: Size) -> None:
    """Put *chart*'s bars, title, axis labels and ticks on *plot*, for a plot of *size*.

    The value axis runs from 0 to the data's top, with at most a tick every third row so that no label
    sits on another.
    """
    # textual-plotext's stubs name one marker for multiple bars; plotext itself takes a marker per series
    # (what lets each series have its own pattern).
    plt: Any = plot
    values = [s.values for s in chart.series]
    markers = [s.pattern for s in chart.series]
    orientation = "horizontal" if chart.horizontal else "vertical"
    rows = max(size.height - CHART_CHROME_ROWS, 4)
    if chart.stacked:
        _stacked(plt, chart, orientation)
    elif len(chart.series) > 1 and chart.horizontal and rows < len(chart.x) * len(chart.series):
        _overlaid(plt, chart, orientation)
    elif len(chart.series) == 1:
        plt.bar(chart.x, values[0], marker=markers[0], orientation=orientation, width=BAR_WIDTH)
    else:
        plt.multiple_bar(chart.x, values, marker=markers, orientation=orientation)
    if not chart.horizontal:
        _thin_labels(plt, chart.x, size.width)
    plt.title(chart.title)
    plt.xlabel(chart.x_label)
    plt.ylabel(chart.y_label)
    if chart.stacked:
        top = max((sum(col) for col in zip(*values, strict=True)), default=0)
    else:
        top = max((max(v, default=0) for v in values), default=0)
    if top > 0:
        (plt.xlim if chart.horizontal else plt.ylim)(0, top)
    if all(float(v).is_integer() for s in values for v in s):  # counts: whole-number ticks
        most = max(2, (size.width if chart.horizontal else rows) // (8 if chart.horizontal else 3))
        step = max(1, math.ceil(top / most))
        ticks = list(range(0, int(top) + 1, step))
        (plt.xticks if chart.horizontal else plt.yticks)(ticks)


def _overlaid(plt: Any, chart: Chart, orientation: str) -> None:
    """Each item's bars on one line, the longest drawn first and the shorter over it from the same base.

    For a chart too short for a line per series and item (sizes by worker at 80x24): side by side, the
    series would share lines and hide one another.
    """
    n = len(chart.x)
    positions = list(range(1, n + 1))
    for j in range(n):
        for series in sorted(chart.series, key=lambda s: -s.values[j]):
            if series.values[j] > 0:
                bar = {"marker": series.pattern, "orientation": orientation, "width": BAR_WIDTH, "reset_ticks": False}
                plt.bar([positions[j]], [series.values[j]], **bar)
    _place_items(plt, chart, positions)


def _place_items(plt: Any, chart: Chart, positions: list[int]) -> None:
    """The item axis of bars drawn one at a time: its range and its labels."""
    n = len(positions)
    (plt.ylim if chart.horizontal else plt.xlim)(0.5, n + 0.5)
    (plt.yticks if chart.horizontal else plt.xticks)(positions, chart.x)


def _stacked(plt: Any, chart: Chart, orientation: str) -> None:
    """Stacked bars, each series drawn from its own base up, the topmost first.

    plotext's own stacked bars paint a series' empty bar over the bottom row of the series above it, so
    a bar standing on an empty one started a row above the axis. Here an empty part is not drawn at all.
    """
    n = len(chart.x)
    positions = list(range(1, n + 1))
    for i in reversed(range(len(chart.series))):
        series = chart.series[i]
        tops = [sum(s.values[j] for s in chart.series[: i + 1]) for j in range(n)]
        for j in range(n):
            if series.values[j] > 0:
                # One bar a call: plotext sizes a call's bars by the spacing of its positions.
                bar = {"marker": series.pattern, "orientation": orientation, "width": BAR_WIDTH, "reset_ticks": False}
                plt.bar([positions[j]], [tops[j]], **bar)
    _place_items(plt, chart, positions)


def _thin_labels(plt: Any, labels: list[str], width: int) -> None:
    """Label every n-th bar when every label would not fit along the axis (plotext drops colliding ones)."""
    if len(labels) < 2:
        return
    slot = max(width - 8, 1) / len(labels)  # the y tick labels and the frame aside, a bar's share of the width
    # Labels sit centred under their bars: two neighbours collide unless their halves and a space fit between.
    need = max((len(a) + len(b)) / 2 + 1 for a, b in itertools.pairwise(labels))
    step = math.ceil(need / slot)
    if step > 1:
        plt.xticks(list(range(1, len(labels) + 1, step)), labels[::step])


class ChartPlot(PlotextPlot):
    """Draws one :class:`~okstra_tui.data.insights.Chart` (or says why there is nothing to draw)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.chart: Chart | None = None
        self.message = "Reading the store…"
        self.built: dict[BuildKey, Text] = {}

    def key(self, chart: Chart, size: Size | None = None) -> BuildKey:
        return (id(chart), size or self.size, self._get_plotext_theme_name(self.app.theme))

    def build_all(self, charts: list[Chart]) -> dict[BuildKey, Text]:
        """Every chart of *charts* built at the widget's current size and theme (for a worker thread)."""
        size = self.size
        if not size.area:
            return {}
        return {self.key(c, size): build(c, size, self.key(c, size)[2]) for c in charts if c.has_data}

    def show(self, chart: Chart | None, message: str = "", built: dict[BuildKey, Text] | None = None) -> None:
        """Show *chart* (*built*: its pictures built already); without data say *message* (or the chart's own)."""
        self.chart = chart
        self.message = message
        if built is not None:
            self.built = built
        self.refresh()

    def render(self) -> Text:
        chart = self.chart
        if chart is None or not chart.has_data:
            said = self.message or (chart.empty if chart is not None else "")
            return Text(f"{chart.title}: {said}" if chart is not None else said, style="dim")
        key = self.key(chart)
        if key not in self.built:  # a new size or theme: built here, once
            self.built[key] = build(chart, self.size, key[2])
        return self.built[key]
