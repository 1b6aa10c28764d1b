"""Label/value lines: the two-column layout of an overview, without a table's measuring passes.

A Rich ``Table`` measures every cell twice per render (once for the widget's
height, once to draw); an overview shown on every "open a task" pays that on
each step. This renderable lays the lines out in one pass: labels padded to the
widest label, values wrapped to the rest of the width with a hanging indent (a long word folds, never cut).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from okstra_core.text import has_controls, visible

Cell = Text | str


class KeyValues:
    """Rows of (label, value); a value may hold several lines and wraps under itself."""

    def __init__(
        self,
        rows: Iterable[tuple[Cell, Cell]],
        *,
        label_style: str = "bold",
        gap: int = 2,
        title: Cell | None = None,
        header: tuple[Cell, Cell] | None = None,
        indent: int = 0,
    ) -> None:
        self.rows = [(_text(label, label_style), _text(value, "")) for label, value in rows]
        self.gap = gap
        self.title = _text(title, "bold") if title is not None else None
        self.header = (_text(header[0], "bold"), _text(header[1], "bold")) if header is not None else None
        self.indent = indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        width = options.max_width
        labels = [label for label, _ in self.rows] + ([self.header[0]] if self.header else [])
        label_width = min(max((cell_len(label.plain) for label in labels), default=0), max(width // 2, 1))
        value_width = max(width - self.indent - label_width - self.gap, 1)
        pad = " " * self.indent
        if self.title is not None:
            yield from _line(console, self.title.copy(), width)
        rows = ([self.header] if self.header else []) + self.rows
        for label, value in rows:
            head = label.copy()
            head.truncate(label_width, overflow="ellipsis", pad=True)
            # A word wider than the column (a task key, a path) folds onto the next line rather than being cut.
            lines = value.wrap(console, value_width, overflow="fold") if value.plain else [Text("")]
            for i, part in enumerate(lines):
                line = Text(pad)
                line.append_text(head if i == 0 else Text(" " * label_width))
                line.append(" " * self.gap)
                line.append_text(part)
                yield from _line(console, line, width)


def _line(console: Console, text: Text, width: int) -> Iterator[Segment]:
    text.truncate(width, overflow="ellipsis")
    yield from text.render(console)
    yield Segment.line()


def _text(cell: Cell, style: str) -> Text:
    """A cell as Text; store text shows its control characters as visible stand-ins."""
    if isinstance(cell, Text) and has_controls(cell.plain, multiline=True):
        cell = Text(visible(cell.plain, multiline=True), style=cell.style)
    if isinstance(cell, Text):
        if style and not cell.style:
            out = cell.copy()
            out.stylize(Style.parse(style), 0, len(out))
            return out
        return cell
    return Text(visible(cell, multiline=True), style=style)
