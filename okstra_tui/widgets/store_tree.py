"""A tree whose labels are store text: shown as text, control characters visible, never read as markup."""

from __future__ import annotations

from typing import TypeVar

from rich.text import Text, TextType
from textual.widgets import Tree

from okstra_core.text import has_controls, visible

from .list_keys import with_list_keys

T = TypeVar("T")


class StoreTree(Tree[T], inherit_bindings=False):
    """A :class:`~textual.widgets.Tree` for labels that come from the store (file names, titles).

    It moves with the workbench's list keys (``j``/``k``, Home/End) as every list does.
    """

    BINDINGS = with_list_keys(Tree.BINDINGS)

    def action_first(self) -> None:
        self.action_scroll_home()

    def action_last(self) -> None:
        self.action_scroll_end()

    def process_label(self, label: TextType) -> Text:
        if isinstance(label, str):
            text = Text(visible(label))
        elif has_controls(label.plain):
            text = Text(visible(label.plain), style=label.style)
        else:
            text = label
        return text.split()[0] if text.plain else text
