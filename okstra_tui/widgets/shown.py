"""Store text as a Rich ``Text``: control characters made visible by the core, never read as markup."""

from __future__ import annotations

from rich.cells import cell_len, get_character_cell_size
from rich.text import Text

from okstra_core.text import visible


def shown(value: object, style: str = "") -> Text:
    """One line of store text (a title, a file name, a table cell)."""
    return Text(visible(str(value)), style=style)


def shown_block(value: str, style: str = "") -> Text:
    """Several lines of store text (newlines and tabs kept)."""
    return Text(visible(value, multiline=True), style=style)


#: The mark of text cut to fit: every view cuts with it, at the end or in the middle.
CUT_MARK = "…"


def cut(text: Text | str, width: int, *, middle: bool = False) -> Text:
    """*text* fitted to *width* cells: whole when it fits, else cut with "…".

    At the end by default; with *middle*, in the middle, keeping what follows
    the last "/" (a path's file name) when that leaves room for a head, and
    otherwise as much of the end as of the start (a file name's seq and
    suffix). Styles are kept. Store text is made visible first.
    """
    text = shown(text) if isinstance(text, str) else text
    if text.cell_len <= width:
        return text
    if width <= 1:
        return Text(CUT_MARK[:width])
    if not middle:
        out = text.copy()
        out.truncate(width, overflow="ellipsis")
        return out
    room = width - 1
    plain = text.plain
    tail = len(plain) - plain.rfind("/") if "/" in plain else 0
    if not tail or cell_len_of(plain[-tail:]) > room - min(8, room // 3):
        tail = _fitting_tail(plain, room - room // 2)
    head = _fitting_head(plain, room - cell_len_of(plain[-tail:]))
    return Text.assemble(text[:head], CUT_MARK, text[len(plain) - tail :])


def cell_len_of(value: str) -> int:
    """The cells *value* takes on a terminal."""
    return cell_len(value)


def _fitting_head(plain: str, cells: int) -> int:
    """How many leading characters of *plain* fit in *cells*."""
    used = 0
    for n, char in enumerate(plain):
        used += get_character_cell_size(char)
        if used > cells:
            return n
    return len(plain)


def _fitting_tail(plain: str, cells: int) -> int:
    """How many trailing characters of *plain* fit in *cells*."""
    return _fitting_head(plain[::-1], cells)
