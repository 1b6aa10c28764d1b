"""The footer of key bindings: one line, one widget, redrawn only when the keys change.

Textual's stock ``Footer`` builds a widget per key and rebuilds all of them
whenever a screen announces that its bindings changed (mounting, focus moves,
showing a screen again). Here the keys are one line of text: a change of
bindings recomputes that line and repaints it only if it differs, and a click
on a key presses it.
"""

from __future__ import annotations

from typing import NamedTuple

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

#: Actions the footer shows whatever its width (``?`` becomes "? more" when a key gave way).
ESSENTIAL_ACTIONS = frozenset({"help", "quit"})

#: The app's own actions (the same in every view) by rank when the line is too narrow: the first stay longest.
#: The view's first key ranks above them all, its other keys just after Search.
GLOBAL_RANK = (
    "back",
    "inbox",
    "checks",
    "managers",
    "search",
    "activity",
    "running",
    "write_log",
    "home",
    "switch_project",
    "latest_notice",
    "catalog",
    "insights",
    "copy_path",
    "editor",
    "pager",
    "forward",
)

#: What the help key says when keys gave way: the help lists every key.
MORE = "more"

#: The description of the command palette's key (shown at the right, after a separator).
PALETTE = "palette"

#: Keys whose Textual name is not what a person types.
KEY_LABELS = {
    "question_mark": "?",
    "slash": "/",
    "escape": "esc",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "pageup": "PgUp",
    "pagedown": "PgDn",
}


def key_label(key: str) -> str:
    """A key as the help and the command palette name it (``?`` for ``question_mark``)."""
    return KEY_LABELS.get(key, key)


class FooterKey(NamedTuple):
    """One key of the footer."""

    key: str
    shown: str
    description: str
    enabled: bool
    action: str = ""
    #: Bound by the app (the same in every view) rather than by the view itself.
    global_key: bool = False

    @property
    def cell_len(self) -> int:
        return cell_len(self.shown) + cell_len(self.description) + 3


FooterKeys = tuple[FooterKey, ...]


def _rank(key: FooterKey, view_index: int) -> float:
    """Where *key* stands when keys give way (lower stays longer); *view_index*: its place among the view's keys."""
    if key.action in ESSENTIAL_ACTIONS:
        return -1
    if not key.global_key:
        return -0.5 if view_index == 0 else GLOBAL_RANK.index("search") + 0.5 + view_index / 100
    if key.description == PALETTE:
        return GLOBAL_RANK.index("search") + 0.25
    return GLOBAL_RANK.index(key.action) if key.action in GLOBAL_RANK else len(GLOBAL_RANK)


def fit_keys(keys: FooterKeys, width: int) -> tuple[list[FooterKey], bool]:
    """The keys that fit in *width* in the order shown (the palette key last, if it stays), and whether the
    palette key keeps its word.

    When the line is too narrow the palette key is shown without its word, then
    keys give way by rank (:data:`GLOBAL_RANK`, the view's first key above all
    of them), and the help key moves to the end as "? more": what gave way is
    one key away. Help and quit always stay.
    """
    palette = [k for k in keys if k.description == PALETTE][-1:]
    shown = [k for k in keys if k not in palette] + palette

    def needed(worded: bool) -> int:
        return sum(_cells(k, worded) for k in shown)

    if needed(True) <= width:
        return shown, True
    view_keys = [k for k in shown if not k.global_key]
    ranked = sorted(
        (k for k in shown if k.action not in ESSENTIAL_ACTIONS),
        key=lambda k: _rank(k, view_keys.index(k) if k in view_keys else 0),
    )
    while ranked and needed(False) > width:
        shown.remove(ranked.pop())
    if len(shown) < len(keys):
        helps = [k._replace(description=MORE) for k in shown if k.action == "help"]
        kept = [k for k in shown if k.action != "help" and k not in palette]
        shown = kept + helps + [k for k in shown if k in palette]
    return shown, False


def _cells(key: FooterKey, worded: bool) -> int:
    """The cells *key* takes on the line (the palette key: after a separator, its word only when *worded*)."""
    if key.description != PALETTE:
        return key.cell_len
    return 1 + cell_len(f" {key.shown} ") + (len(f"{PALETTE} ") if worded else 0)


class BindingsFooter(Widget):
    """The keys the current screen shows (``Binding.show``), with the command palette key at the right."""

    DEFAULT_CSS = """
    BindingsFooter {
        dock: bottom;
        height: 1;
        width: 1fr;
        background: $footer-background;
        color: $footer-foreground;
    }
    BindingsFooter > .bindings-footer--key {
        color: $footer-key-foreground;
        background: $footer-key-background;
        text-style: bold;
    }
    BindingsFooter > .bindings-footer--description {
        color: $footer-description-foreground;
        background: $footer-description-background;
    }
    BindingsFooter > .bindings-footer--disabled { text-style: dim; }
    """

    COMPONENT_CLASSES = {"bindings-footer--key", "bindings-footer--description", "bindings-footer--disabled"}

    ALLOW_SELECT = False

    def __init__(self) -> None:
        super().__init__()
        self._keys: FooterKeys | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if screen is not self.screen:
            return
        keys = self.shown_keys()
        if keys != self._keys:
            self._keys = keys
            self.refresh()

    def shown_keys(self) -> FooterKeys:
        """The keys to show now: one per action, in binding order."""
        seen: set[str] = set()
        keys = []
        palette = self.app.COMMAND_PALETTE_BINDING if self.app.ENABLE_COMMAND_PALETTE else None
        for key, (_node, binding, enabled, _tooltip) in self.screen.active_bindings.items():
            if not binding.show or binding.action in seen or key == palette:
                continue
            seen.add(binding.action)
            shown = self.app.get_key_display(binding)
            keys.append(FooterKey(key, shown, binding.description, enabled, binding.action, _node is self.app))
        if palette is not None and palette in self.screen.active_bindings:
            _node, binding, enabled, _tooltip = self.screen.active_bindings[palette]
            keys.append(FooterKey(palette, self.app.get_key_display(binding), PALETTE, enabled, "", True))
        return tuple(keys)

    def render(self) -> Text:
        keys = self._keys or ()
        width = self.size.width
        fitting, worded = fit_keys(keys, width) if width else (list(keys), True)
        key_style = self.get_component_rich_style("bindings-footer--key")
        text_style = self.get_component_rich_style("bindings-footer--description")
        dim = self.get_component_rich_style("bindings-footer--disabled", partial=True)
        line = Text(no_wrap=True, overflow="ellipsis")
        right = Text(no_wrap=True)
        for key, shown, description, enabled, _action, _global in fitting:
            is_palette = description == PALETTE
            target = right if is_palette else line
            click = Style(meta={"footer-key": key})
            extra = dim if not enabled else Style()
            target.append(f" {shown} ", key_style + extra + click)
            if not is_palette or worded:
                target.append(f"{description} ", text_style + extra + click)
        if right and width:
            line.truncate(max(width - right.cell_len - 1, 0), overflow="ellipsis", pad=True)
            line.append("▏", style=text_style)
            line.append_text(right)
        return line

    def on_click(self, event: events.Click) -> None:
        key = event.style.meta.get("footer-key") if event.style else None
        if isinstance(key, str):
            event.stop()
            self.app.simulate_key(key)
