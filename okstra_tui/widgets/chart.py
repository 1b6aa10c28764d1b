"""One Insights chart drawn with textual-plotext: title, axis labels with units, a pattern per series.

Series differ by fill pattern (``█ ▒ ░``) as well as colour, and the legend
names each pattern, so a chart reads on a monochrome terminal. Counts get
whole-number ticks.
"""

from __future__ import annotations

import math
from typing import Any

from textual_plotext import PlotextPlot

from ..data.insights import Chart


class ChartPlot(PlotextPlot):
    """Draws one :class:`~okstra_tui.data.insights.Chart` (or says why there is nothing to draw)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.chart: Chart | None = None
        self.message = "Reading the store…"

    def show(self, chart: Chart | None, message: str = "") -> None:
        """Draw *chart*; without one (or with nothing in it) the title says *message* (or the chart's own)."""
        self.chart = chart
        self.message = message
        plt = self.plt
        plt.clear_figure()
        if chart is None or not chart.has_data:
            title = chart.title if chart is not None else ""
            said = message or (chart.empty if chart is not None else "")
            plt.title(f"{title}: {said}" if title else said)
            plt.xticks([])
            plt.yticks([])
            self.refresh()
            return
        self._draw(chart)
        self.refresh()

    def _draw(self, chart: Chart) -> None:
        # textual-plotext's stubs name ``label``/one marker for stacked and multiple bars; plotext itself takes
        # ``labels`` and a marker per series (what lets each series have its own pattern).
        plt: Any = self.plt
        values = [s.values for s in chart.series]
        labels = [f"{s.label}" for s in chart.series]
        markers = [s.pattern for s in chart.series]
        orientation = "horizontal" if chart.horizontal else "vertical"
        if len(chart.series) == 1:
            plt.bar(chart.x, values[0], marker=markers[0], label=labels[0], orientation=orientation)
        elif chart.stacked:
            plt.stacked_bar(chart.x, values, marker=markers, labels=labels, orientation=orientation)
        else:
            plt.multiple_bar(chart.x, values, marker=markers, labels=labels, orientation=orientation)
        plt.title(chart.title)
        plt.xlabel(chart.x_label)
        plt.ylabel(chart.y_label)
        top = (
            max((sum(col) for col in zip(*values, strict=True)), default=0)
            if chart.stacked
            else max((max(v, default=0) for v in values), default=0)
        )
        if all(float(v).is_integer() for s in values for v in s):  # counts: whole-number ticks
            step = max(1, math.ceil(top / 6))
            ticks = list(range(0, int(top) + step, step))
            (plt.xticks if chart.horizontal else plt.yticks)(ticks)
