"""A tree whose labels are store text: shown as text, control characters visible, never read as markup."""

from __future__ import annotations

from typing import TypeVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text, TextType
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from okstra_core.text import has_controls, visible

from .list_keys import with_list_keys
from .shown import cut

T = TypeVar("T")


class StoreTree(Tree[T], inherit_bindings=False):
    """A :class:`~textual.widgets.Tree` for labels that come from the store (file names, titles).

    It moves with the workbench's list keys (``j``/``k``, Home/End) as every list does. A label wider than
    the pane is cut with "…" (never cropped without a mark), and its whole text is the tooltip on hover;
    the view beside the tree shows it in full for the highlighted node.
    """

    BINDINGS = with_list_keys(Tree.BINDINGS)

    def action_first(self) -> None:
        self.action_scroll_home()

    def action_last(self) -> None:
        self.action_scroll_end()

    def render_label(self, node: TreeNode[T], base_style: Style, style: Style) -> Text:
        """The label cut in the middle with "…" where the pane is too narrow (a path keeps its file name)."""
        text = super().render_label(node, base_style, style)
        room = self._label_room(node)
        if room is None or text.cell_len <= room:
            return text
        icon = cell_len(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE) if node.allow_expand else 0
        label = text[icon:]
        # A path or a file name is cut in the middle (its file name, seq and suffix stay); a sentence at its end.
        middle = "/" in label.plain or " " not in label.plain.strip()
        return Text.assemble(text[:icon], cut(label, max(room - icon, 1), middle=middle))

    def _label_room(self, node: TreeNode[T]) -> int | None:
        """The cells a label of *node* has beside its guides (None: not laid out yet)."""
        width = self.content_region.width - self.styles.scrollbar_size_vertical
        if width <= 0:
            return None
        depth = -1 if not self.show_root else 0
        parent = node.parent
        while parent is not None:
            depth += 1
            parent = parent.parent
        return width - max(depth, 0) * self.guide_depth

    def label_is_cut(self, node: TreeNode[T]) -> bool:
        """Whether *node*'s label is shown cut (its whole text is the tooltip)."""
        room = self._label_room(node)
        return room is not None and super().render_label(node, Style(), Style()).cell_len > room

    def watch_hover_line(self, previous_hover_line: int, hover_line: int) -> None:
        super().watch_hover_line(previous_hover_line, hover_line)
        node = self.get_node_at_line(hover_line) if hover_line >= 0 else None
        self.tooltip = node.label if node is not None and self.label_is_cut(node) else None

    def process_label(self, label: TextType) -> Text:
        if isinstance(label, str):
            text = Text(visible(label))
        elif has_controls(label.plain):
            text = Text(visible(label.plain), style=label.style)
        else:
            text = label
        return text.split()[0] if text.plain else text
