"""Store text as a Rich ``Text``: control characters made visible by the core, never read as markup."""

from __future__ import annotations

from rich.text import Text

from okstra_core.text import visible


def shown(value: object, style: str = "") -> Text:
    """One line of store text (a title, a file name, a table cell)."""
    return Text(visible(str(value)), style=style)


def shown_block(value: str, style: str = "") -> Text:
    """Several lines of store text (newlines and tabs kept)."""
    return Text(visible(value, multiline=True), style=style)
