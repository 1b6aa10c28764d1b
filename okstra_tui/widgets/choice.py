"""Radio buttons and checkboxes whose state is in the text: "(•)"/"( )" and "[x]"/"[ ]".

Textual draws the same glyph for a chosen and an unchosen option and tells
them apart by colour alone; these read the same with ``NO_COLOR``, on a
monochrome terminal and in a screen reader's text.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox, RadioButton

CHOSEN, NOT_CHOSEN = "(•)", "( )"
TICKED, NOT_TICKED = "[x]", "[ ]"


class Choice(RadioButton):
    """One option of a ``RadioSet``, marked "(•)" when chosen."""

    @property
    def _button(self) -> Content:
        return Content.styled(CHOSEN if self.value else NOT_CHOSEN, self.get_visual_style("toggle--button"))


class Tick(Checkbox):
    """A checkbox marked "[x]" when ticked."""

    @property
    def _button(self) -> Content:
        return Content.styled(TICKED if self.value else NOT_TICKED, self.get_visual_style("toggle--button"))
