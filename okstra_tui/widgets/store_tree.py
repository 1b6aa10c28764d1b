"""A tree whose labels are store text: shown as text, control characters visible, never read as markup."""

from __future__ import annotations

from typing import TypeVar

from rich.text import Text, TextType
from textual.widgets import Tree

from okstra_core.text import has_controls, visible

T = TypeVar("T")


class StoreTree(Tree[T]):
    """A :class:`~textual.widgets.Tree` for labels that come from the store (file names, titles)."""

    def process_label(self, label: TextType) -> Text:
        if isinstance(label, str):
            text = Text(visible(label))
        elif has_controls(label.plain):
            text = Text(visible(label.plain), style=label.style)
        else:
            text = label
        return text.split()[0] if text.plain else text
