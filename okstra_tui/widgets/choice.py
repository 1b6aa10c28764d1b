"""Radio buttons and checkboxes whose state is in the text: "(•)"/"( )" and "[x]"/"[ ]".

Textual draws the same glyph for a chosen and an unchosen option and tells
them apart by colour alone; these read the same with ``NO_COLOR``, on a
monochrome terminal and in a screen reader's text.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox, RadioButton, RadioSet

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


def option_chosen(options: RadioSet) -> RadioButton | None:
    """The option of *options* the person chose last, or None.

    The set learns of a button switched on or off (a key, a click) from a message, and only then switches the
    one chosen before off (or the chosen one back on: a set never lets its choice go). Until it does, two show
    as chosen and ``RadioSet.pressed_button`` is the old one, or none shows and it is still that one. Read
    here, a step left right after choosing (Enter then Ctrl+N) has the choice the screen is about to show.
    """
    before = options.pressed_button
    newer = [button for button in options.query(RadioButton) if button.value and button is not before]
    return newer[0] if newer else before


def index_chosen(options: RadioSet) -> int:
    """The place of :func:`option_chosen` among the options of *options*; -1 when none is chosen."""
    button = option_chosen(options)
    return -1 if button is None else list(options.query(RadioButton)).index(button)
