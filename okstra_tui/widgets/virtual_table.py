"""A virtualised table: only the rows on screen are ever rendered.

The catalog of a large project has tens of thousands of rows; building a widget
(or even a styled cell) per row costs seconds. This table keeps plain row
objects in a list and asks a cell function for the few rows in view, so its
cost per frame does not depend on the number of rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from okstra_core.text import has_controls, visible

from .list_keys import with_list_keys


@dataclass(frozen=True, slots=True)
class Column:
    """A column: ``width`` 0 means "take the remaining width" (at least ``min_width``).

    When the table is too narrow for every column, columns with a ``give_way``
    rank are hidden, rank 1 first, until the rest fit; a column without one
    (``give_way`` 0) is always shown.
    """

    key: str
    label: str
    width: int = 0
    give_way: int = 0
    min_width: int = 8


@dataclass(frozen=True, slots=True)
class GroupHeader:
    """A non-data row that titles the rows below it."""

    label: str
    count: int


CellFunction = Callable[[Any], Sequence[Text | str]]


def column_widths(columns: Sequence[Column], width: int) -> list[int]:
    """Widths of *columns* in *width* cells (one space between columns); 0 for a column that gave way."""
    shown = list(columns)
    giving_way = sorted((c for c in columns if c.give_way), key=lambda c: c.give_way)

    def needed() -> int:
        return sum((c.width or c.min_width) + 1 for c in shown)

    while giving_way and needed() > width:
        shown.remove(giving_way.pop(0))
    fixed = sum(c.width + 1 for c in shown if c.width)
    flexible = [c for c in shown if not c.width]
    rest = max(width - fixed - len(flexible), sum(c.min_width for c in flexible))
    share = rest // len(flexible) if flexible else 0
    return [(c.width or max(share, c.min_width)) if c in shown else 0 for c in columns]


class VirtualTable(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows of ``Any`` rendered through a cell function, with a cursor and a header line.

    Its columns always fit the width, so it does not take the scroll keys of
    ``ScrollView`` (sideways scrolling would do nothing): only its own below.
    """

    DEFAULT_CSS = """
    VirtualTable {
        height: 1fr;
        background: $surface;
        overflow-x: hidden;
    }
    VirtualTable > .virtual-table--header { text-style: bold; color: $text-accent; background: $panel; }
    VirtualTable > .virtual-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold;
    }
    VirtualTable:blur > .virtual-table--cursor {
        background: $block-cursor-blurred-background; color: $foreground; text-style: none;
    }
    VirtualTable > .virtual-table--group { color: $text-primary; text-style: bold; background: $boost; }
    """

    COMPONENT_CLASSES = {
        "virtual-table--header",
        "virtual-table--cursor",
        "virtual-table--group",
    }

    BINDINGS = with_list_keys([Binding("enter", "select", "Open", show=False)])

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class Highlighted(Message):
        """The cursor moved to ``row``."""

        def __init__(self, table: VirtualTable, index: int, row: Any) -> None:
            super().__init__()
            self.table = table
            self.index = index
            self.row = row

        @property
        def control(self) -> VirtualTable:
            return self.table

    class Selected(Highlighted):
        """Enter (or a double click) on ``row``."""

    class HeaderClicked(Message):
        """A click on a column title."""

        def __init__(self, table: VirtualTable, column: Column) -> None:
            super().__init__()
            self.table = table
            self.column = column

        @property
        def control(self) -> VirtualTable:
            return self.table

    class VisibleRangeChanged(Message):
        """Rows ``start`` to ``end`` (exclusive) are now on screen."""

        def __init__(self, table: VirtualTable, start: int, end: int) -> None:
            super().__init__()
            self.table = table
            self.start = start
            self.end = end

        @property
        def control(self) -> VirtualTable:
            return self.table

    def __init__(
        self,
        columns: Sequence[Column],
        cells: CellFunction,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.columns = list(columns)
        self.cells = cells
        self.rows: list[Any] = []
        self.row_style: Callable[[Any], Style | None] = lambda row: None
        # Rendered lines by (row index, is cursor, width); cleared when rows or their content change.
        self._vt_strips: dict[tuple[int, bool, int], Strip] = {}
        self._vt_styles: tuple[Style, Style, Style, Style] | None = None
        self._vt_widths: dict[int, list[int]] = {}

    # ------------------------------------------------------------------ data

    def set_rows(self, rows: list[Any], *, keep: Callable[[Any], object] | None = None, at: int = 0) -> None:
        """Replace the rows; with *keep*, the cursor stays on the row with the same key (else it goes to *at*).

        A row may be None: a line counted but not built yet (a large list's first frame), drawn blank."""
        previous = self.current_row
        self.rows = rows
        index = min(at, max(len(rows) - 1, 0))
        if keep is not None and previous is not None:
            wanted = keep(previous)
            for i, row in enumerate(rows):
                if keep(row) == wanted:
                    index = i
                    break
            else:
                index = min(self.cursor, max(len(rows) - 1, 0))
        # Columns always fit the width (they give way or narrow): nothing to scroll sideways.
        self.virtual_size = Size(0, len(rows) + 1)
        self._vt_strips.clear()
        self.cursor = index
        self.refresh()
        self._post_visible()

    def invalidate(self) -> None:
        """Row content changed (same rows): re-render what is on screen."""
        self._vt_strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._vt_styles = None
        self._vt_strips.clear()

    def _on_focus(self, event: events.Focus) -> None:
        self._vt_styles = None
        self._vt_strips.clear()
        super()._on_focus(event)

    def _on_blur(self, event: events.Blur) -> None:
        self._vt_styles = None
        self._vt_strips.clear()
        super()._on_blur(event)

    def _vt_component_styles(self) -> tuple[Style, Style, Style, Style]:
        if self._vt_styles is None:
            self._vt_styles = (
                self.rich_style,
                self.get_component_rich_style("virtual-table--header"),
                self.get_component_rich_style("virtual-table--group"),
                self.get_component_rich_style("virtual-table--cursor"),
            )
        return self._vt_styles

    @property
    def current_row(self) -> Any:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor]
        return None

    def visible_range(self) -> tuple[int, int]:
        start = int(self.scroll_y)
        return start, min(len(self.rows), start + max(self.size.height - 1, 1))

    def set_columns(self, columns: Sequence[Column]) -> None:
        """Replace the columns (the table is drawn again)."""
        self.columns = list(columns)
        self._vt_widths.clear()
        self.invalidate()

    def set_column_label(self, key: str, label: str) -> None:
        """Retitle the column *key* (the header is drawn again)."""
        self.columns = [replace(c, label=label) if c.key == key else c for c in self.columns]
        self.invalidate()

    # ------------------------------------------------------------- rendering

    def _column_widths(self, width: int) -> list[int]:
        """Each column's width at *width* cells; 0 for a column that gave way."""
        widths = self._vt_widths.get(width)
        if widths is None:
            widths = self._vt_widths[width] = column_widths(self.columns, width)
        return widths

    def _line(self, cells: Sequence[Text | str], widths: list[int]) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        for cell, width in zip(cells, widths, strict=False):
            if not width:
                continue
            if isinstance(cell, Text):
                text = Text(visible(cell.plain), style=cell.style) if has_controls(cell.plain) else cell.copy()
            else:
                text = Text(visible(str(cell)))
            text.truncate(width, overflow="ellipsis", pad=True)
            if line:
                line.append(" ")
            line.append_text(text)
        return line

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base, header, group, cursor = self._vt_component_styles()
        if y == 0:
            key = (-1, False, width)
            if key not in self._vt_strips:
                text = self._line([c.label for c in self.columns], self._column_widths(width))
                segments = list(Segment.apply_style(text.render(self.app.console), header))
                self._vt_strips[key] = Strip(segments).extend_cell_length(width, header).crop(0, width)
            return self._vt_strips[key]
        index = int(self.scroll_y) + y - 1
        if index >= len(self.rows) or self.rows[index] is None:  # None: a line not built yet
            return Strip.blank(width, base)
        key = (index, index == self.cursor, width)
        strip = self._vt_strips.get(key)
        if strip is None:
            if len(self._vt_strips) > 4096:  # bounded: a long scroll must not grow it without end
                self._vt_strips.clear()
            strip = self._vt_strips[key] = self._render_row(index, width, base, group, cursor)
        return strip

    def _render_row(self, index: int, width: int, base: Style, group: Style, cursor: Style) -> Strip:
        row = self.rows[index]
        if isinstance(row, GroupHeader):
            style = group
            text = Text(f"▾ {visible(row.label)}  ({row.count})", no_wrap=True, overflow="ellipsis")
            text.truncate(width)
        else:
            text = self._line(self.cells(row), self._column_widths(width))
            extra = self.row_style(row)
            style = base + extra if extra is not None else base
        if index == self.cursor:
            style = style + cursor
        segments = list(Segment.apply_style(text.render(self.app.console), style))
        return Strip(segments).extend_cell_length(width, style).crop(0, width)

    # ------------------------------------------------------------ navigation

    def watch_cursor(self, old: int, new: int) -> None:
        if not self.rows:
            return
        clamped = max(0, min(new, len(self.rows) - 1))
        if clamped != new:
            self.cursor = clamped
            return
        top = int(self.scroll_y)
        self._scroll_to_cursor()
        if int(self.scroll_y) == top:
            # Only the two rows whose cursor state changed need painting.
            self.refresh_line(old + 1)
            self.refresh_line(new + 1)
        else:
            self.refresh()
        self.post_message(self.Highlighted(self, new, self.rows[new]))

    def _scroll_to_cursor(self) -> None:
        height = max(self.size.height - 1, 1)
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._post_visible()

    def on_resize(self, event: events.Resize) -> None:
        self._post_visible()

    def _post_visible(self) -> None:
        start, end = self.visible_range()
        self.post_message(self.VisibleRangeChanged(self, start, end))

    def action_cursor_up(self) -> None:
        self.cursor = max(self.cursor - 1, 0)

    def action_cursor_down(self) -> None:
        self.cursor = min(self.cursor + 1, max(len(self.rows) - 1, 0))

    def action_page_up(self) -> None:
        self.cursor = max(self.cursor - max(self.size.height - 2, 1), 0)

    def action_page_down(self) -> None:
        self.cursor = min(self.cursor + max(self.size.height - 2, 1), max(len(self.rows) - 1, 0))

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = max(len(self.rows) - 1, 0)

    def action_select(self) -> None:
        row = self.current_row
        if row is not None:
            self.post_message(self.Selected(self, self.cursor, row))

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            widths = self._column_widths(self.size.width)
            x = event.x
            for column, width in zip(self.columns, widths, strict=False):
                if not width:
                    continue
                if x <= width:
                    self.post_message(self.HeaderClicked(self, column))
                    return
                x -= width + 1
            return
        index = int(self.scroll_y) + event.y - 1
        if 0 <= index < len(self.rows):
            self.cursor = index
            if event.chain >= 2:
                self.action_select()
