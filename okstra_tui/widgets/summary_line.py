"""A one-line summary whose less important parts give way when the line is too narrow."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget

#: A part of the line (carrying its own leading separator) and its rank: rank 1 gives way first, 0 never.
Part = tuple[Text, int]


def fit_parts(parts: Sequence[Part], width: int) -> Text:
    """The parts that fit in *width* cells, in their order; ranked parts are left out, rank 1 first."""
    kept = list(parts)
    for _text, _rank in sorted((p for p in parts if p[1]), key=lambda p: p[1]):
        if sum(text.cell_len for text, _ in kept) <= width:
            break
        kept = [p for p in kept if p[0] is not _text]
    line = Text(no_wrap=True, overflow="ellipsis")
    for text, _rank in kept:
        line.append_text(text)
    return line


class SummaryLine(Widget):
    """Shows :func:`fit_parts` of its parts at its current width (again after a resize)."""

    DEFAULT_CSS = """
    SummaryLine { height: 1; }
    """

    def __init__(self, placeholder: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.parts: list[Part] = [(Text(placeholder), 0)]

    def show(self, parts: Sequence[Part]) -> None:
        self.parts = list(parts)
        self.refresh()

    @property
    def content(self) -> Text:
        """Every part, as on a line wide enough for all of them."""
        return fit_parts(self.parts, 10**6)

    def render(self) -> Text:
        return fit_parts(self.parts, self.size.width)
