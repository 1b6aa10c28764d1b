"""Long text drawn a row at a time: only the rows on screen are highlighted and rendered.

A ``Static`` holding a ``Syntax`` lays out, highlights and wraps the whole
text whenever it is measured or drawn: for the 200,000 characters a preview
may show that is seconds on the UI thread and a copy of every styled line.
This widget only measures the lines (their cell widths) to know its height;
a line is highlighted when it first comes into view, and folds onto as many
rows as the width needs (cut at the cell, not at a word, so no space is lost).
With a gutter, each row starts with two cells: blank on a line's first row,
a dim ``↪`` on the rows it continues onto, so that one line of the file never
looks like two (the wizards' review of the exact bytes).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from itertools import accumulate

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

#: Highlighted lines kept for redrawing (a screenful is a few dozen; scrolling back reuses them).
CACHED_LINES = 512

#: Tabs are drawn as this many cells, as ``Syntax`` does.
TAB_SIZE = 4

#: The gutter of a row a line continues onto, and of a line's first row.
CONTINUED = Strip([Segment("↪ ", Style(dim=True))], 2)
FIRST_ROW = Strip([Segment("  ")], 2)

#: How a search match is drawn, and the match the view is at.
MARK_STYLE = "reverse"
CURRENT_MARK_STYLE = "bold black on yellow"

#: A search match: line index, and start and end offsets in that line (tabs expanded).
Mark = tuple[int, int, int]


class TextLines(Widget):
    """Text given as lines already made visible (see ``okstra_core.text.visible``), optionally highlighted.

    *lexer* is a Pygments lexer name; each line is highlighted on its own, which
    is exact for JSON and JSONL and close for Markdown and shell. *marks* are
    search matches drawn over it; :attr:`current` is the one the view is at.
    """

    DEFAULT_CSS = """
    TextLines { height: auto; }
    """

    def __init__(
        self,
        text: str,
        lexer: str | None = None,
        *,
        gutter: bool = False,
        id: str | None = None,
        marks: list[Mark] | None = None,
    ) -> None:
        super().__init__(id=id)
        self.marks: list[Mark] = sorted(marks or [])
        self._marks_by_line: dict[int, list[int]] = {}
        for i, (line, _, _) in enumerate(self.marks):
            self._marks_by_line.setdefault(line, []).append(i)
        #: The index in :attr:`marks` of the match the view is at (None: none is).
        self.current: int | None = None
        self._syntax = (
            Syntax("", lexer, theme="ansi_dark", background_color="default", tab_size=TAB_SIZE)
            if lexer is not None
            else None
        )
        #: Cells before each row: the continuation gutter, when asked for.
        self.continued_gutter = 2 if gutter else 0
        self._set_lines(text)

    def _set_lines(self, text: str) -> None:
        self.lines = [line.expandtabs(TAB_SIZE) for line in text.split("\n")]
        if len(self.lines) > 1 and self.lines[-1] == "":
            self.lines.pop()
        self._cells = [cell_len(line) for line in self.lines]
        self._width = 0
        #: Row where each line starts at ``_width``, plus the total row count at the end.
        self._starts: list[int] = [0]
        self._cache: OrderedDict[int, Strip] = OrderedDict()

    def update(self, text: str) -> None:
        """Show *text* instead (already made visible)."""
        self._set_lines(text)
        self.refresh(layout=True)

    def set_current(self, index: int | None) -> None:
        """Make match *index* the current one (drawn apart from the others)."""
        for mark in (self.current, index):
            if mark is not None:
                self._cache.pop(self.marks[mark][0], None)
        self.current = index
        self.refresh()

    def row_of(self, index: int) -> int:
        """The row (at the current width) where match *index* starts."""
        line, start, _ = self.marks[index]
        self._fold(self.content_size.width or self.size.width or 80)
        return self._starts[line] + cell_len(self.lines[line][:start]) // self._width

    @property
    def text(self) -> str:
        """The text shown (tabs expanded)."""
        return "\n".join(self.lines)

    def _fold(self, width: int) -> None:
        """Work out where each line starts when lines fold at *width* cells (the gutter's taken off)."""
        width = max(width - self.continued_gutter, 1)
        if width == self._width:
            return
        self._width = width
        self._starts = [0, *accumulate(max(1, -(-cells // width)) for cells in self._cells)]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._fold(width)
        return self._starts[-1]

    def _line_strip(self, index: int) -> Strip:
        """Line *index* highlighted and rendered on one (unbounded) row."""
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        line = self.lines[index]
        if self._syntax is not None:
            text = self._syntax.highlight(line)
            if text.plain.endswith("\n"):
                text.right_crop(1)
        else:
            text = Text(line)
        for i in self._marks_by_line.get(index, ()):
            _, start, end = self.marks[i]
            text.stylize(CURRENT_MARK_STYLE if i == self.current else MARK_STYLE, start, end)
        text.no_wrap = True
        text.end = ""
        strip = Strip(text.render(self.app.console))
        self._cache[index] = strip
        if len(self._cache) > CACHED_LINES:
            self._cache.popitem(last=False)
        return strip

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        self._fold(width)
        index = bisect_right(self._starts, y) - 1
        if not 0 <= index < len(self.lines):
            return Strip.blank(width)
        row = y - self._starts[index]
        offset = row * self._width
        body = self._line_strip(index).crop(offset, offset + self._width)
        if not self.continued_gutter:
            return body.extend_cell_length(width)
        return Strip.join([CONTINUED if row else FIRST_ROW, body]).extend_cell_length(width)
