"""``?``: what this view shows and every key it answers to."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from .base import ViewScreen


def key_label(key: str) -> str:
    names = {
        "question_mark": "?",
        "slash": "/",
        "escape": "esc",
        "right_square_bracket": "]",
        "left_square_bracket": "[",
        "pageup": "PgUp",
        "pagedown": "PgDn",
    }
    return names.get(key, key)


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
        seen: set[tuple[str, str]] = set()
        for key, active in under.active_bindings.items():
            b = active.binding
            if not b.description or (key, b.action) in seen:
                continue
            seen.add((key, b.action))
            where = (
                "everywhere" if active.node is self.app else type(active.node).__name__.removesuffix("Screen").lower()
            )
            keys.add_row(key_label(key), b.description, where)
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
