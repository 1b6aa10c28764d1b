"""Text cut to fit always shows "…" (at the end, or in the middle of a path), and the whole text is one key away."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.text import Text
from textual.widgets import DataTable

from okstra_core import layout
from okstra_tui.navigation import Location, View
from okstra_tui.screens.checks import ChecksScreen
from okstra_tui.screens.insights import InsightsScreen
from okstra_tui.screens.runs import RunsScreen
from okstra_tui.screenshots import SMALL_SIZE, settle
from okstra_tui.widgets.shown import CUT_MARK, cut
from okstra_tui.widgets.store_tree import StoreTree

from .conftest import SIZE, make_app, open_view, plain

SIZES = pytest.mark.parametrize("size", [SIZE, SMALL_SIZE], ids=["120x40", "80x24"])


def test_a_path_is_cut_in_the_middle_keeping_its_file_name() -> None:
    path = ".okstra/tasks/checkout/saved-cards/runs/implementation-planning/design-prep-inputs/input-001-r1.md  (1)"
    shown = cut(path, 60, middle=True).plain
    assert len(shown) == 60 and shown.endswith("/input-001-r1.md  (1)") and CUT_MARK in shown
    assert cut("a sentence that goes on and on", 12).plain == "a sentence …"
    assert cut("fits", 12).plain == "fits"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab/é日 .", max_size=40), st.integers(min_value=1, max_value=45), st.booleans())
def test_cut_text_fits_and_is_marked_whenever_something_is_left_out(value: str, width: int, middle: bool) -> None:
    shown = cut(Text(value), width, middle=middle)
    assert shown.cell_len <= width
    if Text(value).cell_len <= width:
        assert shown.plain == value
    else:
        assert CUT_MARK in shown.plain


def _tree_lines(tree: StoreTree[object]) -> list[str]:
    return [tree.render_line(y).text.rstrip() for y in range(tree.size.height)]


@SIZES
async def test_checks_cut_finding_paths_in_the_middle_and_show_the_whole_one(
    size: tuple[int, int], demo_root: Path, demo_home: Path
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        checks = await open_view(pilot, "x", ChecksScreen)
        tree = checks.findings_tree
        assert isinstance(tree, StoreTree)
        files = [node for node in tree.root.children if node.data]
        shown = [tree.render_label(node, tree.rich_style, tree.rich_style).plain for node in files]
        assert len(set(shown)) == len(shown), "two findings' files look the same"
        room = tree.content_region.width
        for node, label in zip(files, shown, strict=True):
            assert len(label) <= room
            whole = str(node.label)
            name = str(node.data).rsplit("/", 1)[-1]
            assert label.endswith(whole[-5:]) and (label[2:] == whole or (CUT_MARK in label and name in label))
        # The highlighted finding's whole path and text are under the tree.
        await pilot.press("j")
        await settle(pilot)
        node = tree.cursor_node
        assert node is not None and node.data is not None
        detail = plain(checks.query_one("#checks-detail")).replace("\n", "")
        assert node.data in detail and str(node.label).replace(" ", "") in detail.replace(" ", "")


@SIZES
async def test_the_runs_tree_cuts_long_file_names_with_a_mark(
    size: tuple[int, int], demo_root: Path, demo_home: Path
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        # A task with long artifact names (design-prep inputs named with their revision and time).
        app.navigate(Location(View.RUNS, layout.tasks_dir(demo_root) / "checkout" / "saved-cards"))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        tree = screen.run_tree
        assert isinstance(tree, StoreTree)
        tree.root.expand_all()
        await settle(pilot)
        cut_lines = 0
        for line in _tree_lines(tree):
            assert len(line) <= tree.size.width
        for y in range(tree.last_line + 1):
            node = tree.get_node_at_line(y)
            assert node is not None
            label = tree.render_label(node, tree.rich_style, tree.rich_style).plain
            if str(node.label) not in label:
                cut_lines += 1
                assert CUT_MARK in label and label[-4:] == str(node.label)[-4:], label
                assert tree.label_is_cut(node)
        assert cut_lines, "the design-prep inputs' names are longer than the pane"


async def test_the_insights_values_are_cut_with_a_mark_and_enter_shows_them_whole(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "I", InsightsScreen)
        await pilot.press("2")  # time per phase: values longer than the pane
        await settle(pilot)
        table = screen.query_one("#ins-items", DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width  # nothing cropped at the edge
        chart = screen.charts[screen.index]
        for row, item in enumerate(chart.items):
            value = table.get_cell_at((row, 1))
            assert isinstance(value, Text)
            assert value.plain == item.value or (value.plain.endswith(CUT_MARK) and len(value.plain) < len(item.value))
        assert any(table.get_cell_at((row, 1)).plain.endswith(CUT_MARK) for row in range(len(chart.items)))
