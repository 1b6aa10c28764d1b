"""``?``: what this view shows and every key it answers to."""

from __future__ import annotations

from typing import NamedTuple

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static

from okstra_core.text import visible

from ..widgets import read_only
from ..widgets.footer import key_label
from .base import ViewScreen

#: Actions that scroll sideways: they do nothing on a widget that never scrolls sideways.
SIDEWAYS_ACTIONS = frozenset({"scroll_left", "scroll_right", "page_left", "page_right"})


class HelpRow(NamedTuple):
    """One key of the help: the key as shown, what it does, and where it is bound."""

    key: str
    shown: str
    description: str
    where: str


def works(active: ActiveBinding) -> bool:
    """False for a binding that can never do anything where it is (a sideways scroll without sideways overflow)."""
    node = active.node
    if active.binding.action in SIDEWAYS_ACTIONS and not isinstance(node, App):
        return bool(node.styles.overflow_x != "hidden")
    return True


def help_rows(screen: Screen[object]) -> list[HelpRow]:
    """Every key *screen* answers to now (its focus chain, the screen, the app), one row per key and action."""
    rows: list[HelpRow] = []
    seen: set[tuple[str, str]] = set()
    for key, active in screen.active_bindings.items():
        b = active.binding
        if not b.description or (key, b.action) in seen or not works(active):
            continue
        seen.add((key, b.action))
        description = b.description
        if not active.enabled and read_only.disabled(b.action):
            description += f" (disabled: {read_only.REASON})"
        rows.append(HelpRow(key, key_label(key), description, where(active.node)))
    return rows


def where(node: object) -> str:
    """Where a key acts, in the words the screen shows: the titled panel holding the widget, or the view."""
    if isinstance(node, App):
        return "everywhere"
    if isinstance(node, Screen):
        return "this view"
    widget: object = node
    while isinstance(widget, Widget) and not isinstance(widget, Screen):
        title = widget.border_title
        if title:
            return visible(title.plain if isinstance(title, Text) else str(title))
        widget = widget.parent
    return "focused panel"


class HelpScreen(ModalScreen[None]):
    """The key list comes from the same bindings that drive the footer and the palette."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close help")]

    def __init__(self, under: Screen[object]) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        under = self.under
        title = under.VIEW_NAME.capitalize() if isinstance(under, ViewScreen) else "okstra"
        about = under.HELP if isinstance(under, ViewScreen) else ""
        keys = Table(box=None, show_header=True, header_style="bold", padding=(0, 2))
        keys.add_column("key", style="bold cyan", no_wrap=True)
        keys.add_column("action")
        keys.add_column("where", style="dim")
        for row in help_rows(under):
            keys.add_row(row.shown, row.description, row.where)
        with VerticalScroll(id="help-box"):
            yield Static(Text(f"{title} — help", style="bold"))
            if about:
                yield Static(Text(about), classes="help-about")
            yield Static(keys)
            yield Static(
                Text(
                    "Ctrl+P opens the command palette: every action above, plus themes. "
                    "Mouse: click rows, tree nodes and column titles (sort). esc closes this help.",
                    style="dim",
                )
            )
