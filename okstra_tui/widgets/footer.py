"""The footer of key bindings, rebuilt once per frame however many times the bindings change."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class BindingsFooter(Footer):
    """Textual's ``Footer``, with binding changes coalesced.

    Mounting a screen, moving focus and resuming a screen each announce that the
    bindings changed, and the stock footer rebuilds all its keys for every
    announcement (five times while the catalog first shows). One rebuild after
    the next refresh shows the same keys.
    """

    def __init__(self) -> None:
        super().__init__()
        self._rebuild_pending = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        # Cleared first: a change announced while the keys are being rebuilt schedules another rebuild.
        self._rebuild_pending = False
        await self.recompose()
