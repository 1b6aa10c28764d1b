"""An 80x24 terminal: columns give way by rank, the shared key prefix is said once, Help and Quit stay."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.text import Text
from textual.pilot import Pilot

from okstra_tui.data.catalog import CatalogRow, shared_key_prefix
from okstra_tui.navigation import Location, View
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.design_prep import DesignPrepScreen
from okstra_tui.screens.reports import ReportsScreen
from okstra_tui.screens.task import TaskScreen
from okstra_tui.screenshots import SCENES, settle
from okstra_tui.widgets.footer import BindingsFooter, FooterKey, fit_keys
from okstra_tui.widgets.summary_line import fit_parts
from okstra_tui.widgets.virtual_table import Column, VirtualTable, column_widths

from .conftest import make_app, open_view, plain

SMALL = (80, 24)
REPORTS = "runs/**/reports/final-report-*.data.json"


def test_columns_give_way_by_rank_and_the_flexible_one_never() -> None:
    columns = [
        Column("key", "key", min_width=24),
        Column("a", "a", 20, give_way=2),
        Column("b", "b", 20, give_way=1),
        Column("c", "c", 20),
    ]
    assert column_widths(columns, 120) == [56, 20, 20, 20]
    assert column_widths(columns, 80) == [37, 20, 0, 20]  # b gives way first
    assert column_widths(columns, 60) == [38, 0, 0, 20]
    assert column_widths(columns, 30)[0] == 24  # never below its minimum, never hidden


def test_the_shared_prefix_is_the_project_part_only() -> None:
    assert shared_key_prefix(["shop:pay:a", "shop:search:b"]) == "shop:"
    assert shared_key_prefix(["shop:pay:a"]) == "shop:"
    assert shared_key_prefix(["shop:pay:a", "other:pay:b"]) == ""
    assert shared_key_prefix(["shop:pay:a", "pay/b"]) == ""
    assert shared_key_prefix([]) == ""
    assert shared_key_prefix(["shop:", "shop:pay:a"]) == ""  # a key with nothing after its project part


def _prefix_key_by_key(keys: list[str]) -> str:
    """The reference: every key looked at."""
    prefix: str | None = None
    for key in keys:
        head, sep, rest = key.partition(":")
        if not sep or not rest or (prefix is not None and head + sep != prefix):
            return ""
        prefix = head + sep
    return prefix or ""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab:/", max_size=6), max_size=6))
def test_the_shared_prefix_from_the_extremes_is_the_key_by_key_one(keys: list[str]) -> None:
    assert shared_key_prefix(keys) == _prefix_key_by_key(keys)


def test_footer_keeps_help_and_quit_gives_way_by_rank_and_ends_with_more() -> None:
    keys = (
        FooterKey("slash", "/", "Filter", True, "filter"),
        FooterKey("s", "s", "Sort", True, "sort"),
        FooterKey("question_mark", "?", "Help", True, "help", True),
        FooterKey("x", "x", "Checks", True, "checks", True),
        FooterKey("m", "m", "Managers", True, "managers", True),
        FooterKey("A", "A", "Activity", True, "activity", True),
        FooterKey("q", "q", "Quit", True, "quit", True),
        FooterKey("ctrl+p", "^p", "palette", True, "", True),
    )

    def fit(width: int) -> tuple[list[str], bool]:
        shown, worded = fit_keys(keys, width)
        return [k.action or k.description for k in shown], worded

    assert fit(200) == (["filter", "sort", "help", "checks", "managers", "activity", "quit", "palette"], True)
    # The palette key loses its word, then Activity gives way; help moves to the end as "? more".
    assert fit(75) == (["filter", "sort", "help", "checks", "managers", "activity", "quit", "palette"], False)
    assert fit(70) == (["filter", "sort", "checks", "managers", "quit", "help", "palette"], False)
    assert [k.description for k in fit_keys(keys, 70)[0]][-2] == "more"
    # The view's second key gives way after the app's Activity, its first after every app key.
    assert fit(60)[0] == ["filter", "checks", "managers", "quit", "help", "palette"]
    # Then the palette key, then the app's keys by rank.
    assert fit(50)[0] == ["filter", "checks", "managers", "quit", "help"]
    assert fit(40)[0] == ["filter", "checks", "quit", "help"]
    assert fit(10)[0] == ["quit", "help"]


def test_summary_parts_give_way_by_rank() -> None:
    parts = [(Text("8 tasks"), 0), (Text(" in 3 groups"), 2), (Text("  sort: key"), 1), (Text("  latest: x"), 0)]
    assert fit_parts(parts, 100).plain == "8 tasks in 3 groups  sort: key  latest: x"
    assert fit_parts(parts, 35).plain == "8 tasks in 3 groups  latest: x"
    assert fit_parts(parts, 20).plain == "8 tasks  latest: x"


async def test_catalog_at_80x24_shows_each_tasks_own_name(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        table = screen.table
        prefix = screen.key_prefix
        key_column = next(c for c in table.columns if c.key == "key")
        assert prefix and key_column.label == f"task key ({prefix}…)"
        lines = [table.render_line(y).text for y in range(1, table.size.height)]
        rows = [r for r in table.rows if isinstance(r, CatalogRow)]
        for row in rows[: table.size.height - 2]:
            name = row.key.removeprefix(prefix)
            assert any(f" {name} " in line for line in lines), name
        assert not table.show_horizontal_scrollbar
        footer = plain(screen.query_one(BindingsFooter).render())
        assert "? more" in footer and "q Quit" in footer and "…" not in footer


async def test_task_view_at_80x24_stacks_and_shows_the_whole_key_and_type(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("L", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TaskScreen) and screen.has_class("-narrow")
        overview = screen.query_one("#task-overview")
        assert overview.outer_size.width == SMALL[0]  # full width, above the side tables
        text = plain(screen.query_one("#task-manifest"))
        manifest = screen.bundle.manifest
        assert not isinstance(manifest, Exception) and hasattr(manifest, "task_key")
        assert manifest.task_key in text and manifest.task_type in text
        for table in screen.query(VirtualTable):
            assert not table.show_horizontal_scrollbar
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert not screen.has_class("-narrow")


def test_breadcrumbs_keep_the_last_crumb() -> None:
    from okstra_tui.screens.base import Breadcrumbs

    crumbs = Breadcrumbs("shop", ["Catalog", "payments/retry-policy", "Runs"])
    assert crumbs.line(200).plain == "okstra shop  ›  Catalog  ›  payments/retry-policy  ›  Runs"
    assert crumbs.line(45).plain == "okstra shop  ›  …  ›  Runs"
    long = Breadcrumbs("shop", ["payments/retry-policy", "a-very-long-file-name-that-does-not-fit.md"])
    assert long.line(40).plain.startswith("okstra shop  ›  …  ›  a-very-long")


def test_a_diff_names_its_pair_once() -> None:
    from okstra_tui.screens.diff import pair_label

    assert pair_label("report-001.data.json", "report-002.data.json") == "report-001 ↔ 002.data.json"
    assert pair_label("a.json", "b.md") == "a.json ↔ b.md"


async def test_inbox_at_80x24_shows_the_summary_and_drops_the_time_first(demo_root: Path) -> None:
    from textual.widgets import DataTable

    from okstra_tui.screens.inbox import InboxScreen

    app = make_app(demo_root)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_view(pilot, "i", InboxScreen)
        assert screen.decisions
        table: DataTable[object] = screen.query_one("#inbox-table", DataTable)

        def shown() -> tuple[list[str], str]:
            labels = [str(c.label) for c in table.columns.values()]
            return labels, "\n".join(table.render_line(y).text for y in range(table.size.height))

        labels, text = shown()
        assert labels == [f"decision ({screen.key_prefix}…)", "item", "summary"]
        assert not table.show_horizontal_scrollbar
        for decision in screen.decisions[:4]:  # the rows in view
            assert decision.task.removeprefix(screen.key_prefix) in text
            assert decision.summary[:20] in text  # the summary begins in view, not off to the right
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        labels, text = shown()
        assert labels[2] == "since" and screen.decisions[0].since.replace("T", " ").removesuffix("Z") in text


async def _every_line(pilot: Pilot[None], table: VirtualTable) -> list[str]:
    """Each row of *table* as drawn, scrolled into view one after another."""
    lines = []
    for index in range(len(table.rows)):
        table.cursor = index
        await pilot.pause()
        lines.append(table.render_line(index - int(table.scroll_y) + 1).text)
    return lines


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)])
async def test_reports_show_each_reports_whole_name(size: tuple[int, int], demo_root: Path, demo_home: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        roots = [ref.root for ref in app.project.task_refs]
        app.navigate(Location(View.REPORTS, max(roots, key=lambda r: len(list(r.glob(REPORTS))))))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReportsScreen)
        table = screen.table
        assert len(table.rows) >= 5
        prefix, suffix = screen.affixes
        assert table.columns[0].label == f"{prefix}…{suffix}"  # said once, in the title
        for art, line in zip(table.rows, await _every_line(pilot, table), strict=True):
            shown = art.name.filename.removeprefix(prefix).removesuffix(suffix)
            assert prefix + shown + suffix == art.name.filename
            assert line.startswith(f"{shown} "), (line, art.name.filename)
            if art.run.stage is not None:  # what tells the stages' reports apart stays on screen
                assert f"stage-{art.run.stage}" in line, line
        assert not table.show_horizontal_scrollbar


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)])
async def test_design_prep_shows_each_whole_verdict(size: tuple[int, int], demo_root: Path, demo_home: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        await SCENES["design-prep"](pilot)
        screen = app.screen
        assert isinstance(screen, DesignPrepScreen)
        table = screen.table
        verdicts = [row.verdict.plain for row in table.rows]
        assert "skipped: duplicate" in verdicts and "no authoritative input" in verdicts
        for verdict, line in zip(verdicts, await _every_line(pilot, table), strict=True):
            assert line.rstrip().endswith(f" {verdict}"), (line, verdict)
            assert "PREP-" not in line or line.startswith("PREP-")  # each item's id is shown whole
        assert not table.show_horizontal_scrollbar
