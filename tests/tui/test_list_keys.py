"""Every list, table and tree moves with the same keys; the footer ranks keys and ends with "? more"."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import DataTable

import okstra_tui
from okstra_tui.screens.checks import ChecksScreen
from okstra_tui.screens.inbox import InboxScreen
from okstra_tui.screens.insights import InsightsScreen
from okstra_tui.screenshots import SMALL_SIZE, settle
from okstra_tui.widgets.footer import BindingsFooter
from okstra_tui.widgets.list_keys import LIST_BINDINGS, LIST_KEYS
from okstra_tui.widgets.list_table import ListOptions, ListTable
from okstra_tui.widgets.store_tree import StoreTree
from okstra_tui.widgets.virtual_table import VirtualTable

from .conftest import SIZE, make_app, open_view, plain

LIST_WIDGETS: list[type[Widget]] = [VirtualTable, ListTable, ListOptions, StoreTree]


@pytest.mark.parametrize("widget", LIST_WIDGETS, ids=lambda w: w.__name__)
def test_every_list_widget_takes_the_shared_keys_and_no_other_meaning_for_them(widget: type[Widget]) -> None:
    expected = {key.strip(): b.action for b in LIST_BINDINGS for key in b.key.split(",")}
    bound = widget._merge_bindings().key_to_bindings
    for key in LIST_KEYS:
        assert [b.action for b in bound[key]] == [expected[key]], (widget.__name__, key)
        assert hasattr(widget, f"action_{expected[key]}"), (widget.__name__, expected[key])


def test_views_build_their_lists_from_the_shared_widgets() -> None:
    """A bare DataTable, OptionList or Tree would move with other keys than the rest."""
    bare = {"DataTable", "OptionList", "Tree"}
    found = []
    for path in Path(okstra_tui.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in bare:
                found.append(f"{path.name}:{node.lineno} {node.func.id}")
    assert found == []


async def test_the_inbox_takes_home_end_and_j_k(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_view(pilot, "i", InboxScreen)
        table = inbox.query_one("#inbox-table", DataTable)
        assert table.has_focus and table.row_count > 3
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("k")
        assert table.cursor_row == table.row_count - 2
        await pilot.press("home")
        assert table.cursor_row == 0
        await pilot.press("j", "j")
        assert table.cursor_row == 2


async def test_the_checks_tree_and_the_insights_bars_take_home_end(demo_root: Path, demo_home: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        checks = await open_view(pilot, "x", ChecksScreen)
        tree = checks.findings_tree
        await pilot.press("end")
        assert tree.cursor_line == tree.last_line > 0
        await pilot.press("home", "j")
        assert tree.cursor_line == 1
        insights = await open_view(pilot, "I", InsightsScreen)
        bars = insights.query_one("#ins-items", DataTable)
        await pilot.press("end")
        assert bars.cursor_row == bars.row_count - 1 > 0


def _footer_words(text: str) -> list[str]:
    """The footer's keys, each as "key word", in order (the palette key after the separator left out)."""
    left = text.split("▏")[0]
    return [part.strip() for part in left.split("  ") if part.strip()]


async def test_at_80x24_the_inbox_footer_keeps_checks_managers_search_and_ends_with_more(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SMALL_SIZE) as pilot:
        inbox = await open_view(pilot, "i", InboxScreen)
        await settle(pilot)
        words = _footer_words(plain(inbox.query_one(BindingsFooter).render()))
        for key in ("x Checks", "m Managers", "^f Search", "q Quit"):
            assert key in words, words
        assert words[-1] == "? more"


async def test_a_wide_footer_shows_every_global_key(demo_root: Path) -> None:
    app = make_app(demo_root)
    # The catalog is the bottom of the stack: Escape clears its filter there, nothing to go back to.
    actions = {b.action for b in app.BINDINGS if isinstance(b, Binding)} - {"back"}
    async with app.run_test(size=(400, 40)) as pilot:
        await settle(pilot)
        footer = app.screen.query_one(BindingsFooter)
        text = footer.render().plain  # one line, as wide as the footer
        shown = {k.action for k in footer.shown_keys()}
        assert actions <= shown, actions - shown
        for word in ("A Activity", "N Now running", "W Write log", "g Latest notice", "u Next changed", "U Mark"):
            assert word in text
        assert "? Help" in text and "more" not in text
