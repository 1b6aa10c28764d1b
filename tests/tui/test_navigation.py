"""Navigation between views: the kept task view, styles after a theme change, the footer's keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from okstra_tui.data.catalog import CatalogRow
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.help import HelpScreen, help_rows
from okstra_tui.screens.task import SideRow, TaskScreen
from okstra_tui.screenshots import SCENES, settle
from okstra_tui.widgets.footer import BindingsFooter
from okstra_tui.widgets.virtual_table import VirtualTable

from .conftest import SIZE, make_app, plain


def _task_rows(catalog: CatalogScreen) -> list[int]:
    return [i for i, row in enumerate(catalog.table.rows) if isinstance(row, CatalogRow)]


async def test_the_kept_task_view_shows_each_task_opened(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen)
        first, second = _task_rows(catalog)[:2]
        catalog.table.cursor = first
        await pilot.press("enter")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, TaskScreen) and view.task_root == catalog.table.rows[first].root
        view.query_one("#task-files", VirtualTable).cursor = 2
        await pilot.press("escape")
        catalog.table.cursor = second
        await pilot.press("enter")
        await settle(pilot)
        # The same screen object, now showing the second task: its crumbs, overview and tables follow.
        assert app.screen is view
        root = catalog.table.rows[second].root
        assert view.task_root == root and view.overview is not None and view.overview.task.root == root
        crumbs = plain(view.query_one("Breadcrumbs").render())
        assert f"{root.parent.name}/{root.name}" in crumbs
        files = view.query_one("#task-files", VirtualTable)
        assert files.cursor == 0
        assert all(isinstance(r, SideRow) and Path(r.target).is_relative_to(root) for r in files.rows)
        manifest = (root / "task-manifest.json").read_text(encoding="utf-8")
        assert view.overview.manifest.task_key in manifest


async def test_a_related_task_opens_in_a_view_of_its_own(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        source = next(
            ref.open()
            for ref in app.project.task_refs
            if not isinstance(ref.open().manifest, Exception) and ref.open().manifest.related_tasks
        )
        from okstra_tui.navigation import Location, View

        app.navigate(Location(View.TASK, source.root))
        await settle(pilot)
        outer = app.screen
        assert isinstance(outer, TaskScreen)
        related = outer.query_one("#task-related", VirtualTable)
        related.focus()
        await pilot.press("enter")
        await settle(pilot)
        inner = app.screen
        target = app.project.find_task(str(related.rows[0].target))
        assert target is not None
        assert isinstance(inner, TaskScreen) and inner is not outer and inner.task_root == target.root
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is outer and outer.task_root == source.root


async def test_a_theme_change_reaches_the_hidden_task_view(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("L", "enter")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, TaskScreen)
        before = view.styles.background
        await pilot.press("escape")
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await settle(pilot)
        catalog_background = app.screen.styles.background
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert app.screen is view
        assert view.styles.background == catalog_background and view.styles.background != before


async def test_clicking_a_footer_key_presses_it(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = app.screen.query_one(BindingsFooter)
        keys = footer.shown_keys()
        assert ("question_mark", "?", "Help", True) in [key[:4] for key in keys]
        text = plain(footer.render())
        await pilot.click(BindingsFooter, offset=(text.index("? more") + 2, 0))
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)


async def test_typing_on_narrows_to_the_same_rows_as_a_fresh_filter(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen) and catalog.filter_input is None  # built on first use
        await pilot.press("slash", *"pay", "space", *"an")
        await settle(pilot)
        assert catalog.filter_input is not None and catalog.shown_filter == "pay an"
        typed = [r.ident for r in catalog.table.rows if isinstance(r, CatalogRow)]
        expected = [
            r.ident
            for r in catalog.data.rows
            if all(w in " ".join((r.key, r.group, r.task_type, r.status, r.title)).lower() for w in ("pay", "an"))
        ]
        assert typed and sorted(typed) == sorted(expected)
        await pilot.press("backspace", "backspace", "backspace")
        await settle(pilot)
        widened = {r.ident for r in catalog.table.rows if isinstance(r, CatalogRow)}
        assert widened == {
            r.ident
            for r in catalog.data.rows
            if "pay" in " ".join((r.key, r.group, r.task_type, r.status, r.title)).lower()
        }
        assert len(widened) >= len(typed)


async def test_the_filter_s_search_text_is_built_once_the_filter_bar_opens(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen) and catalog.data is not None and catalog.waiting
        assert catalog._haystack == {}  # a catalog nobody filters holds no search text
        await pilot.press("slash")
        await settle(pilot)
        await app.workers.wait_for_complete()
        await settle(pilot)
        hay = catalog._haystack
        assert hay.keys() == {r.ident for r in catalog.data.rows}
        for row in catalog.data.rows:
            text = " ".join((row.key, row.group, row.task_type, row.status, row.title)).lower()
            assert hay[row.ident] == text + ("\x00waiting" if row.ident in catalog.waiting else "")
        await pilot.press(*"waiting")
        await settle(pilot)
        assert {r.ident for r in catalog.table.rows if isinstance(r, CatalogRow)} == set(catalog.waiting)


#: Views whose help is checked: every main view and a wizard step of each kind of focus (choice, text, review).
HELP_SCENES = [
    "catalog",
    "task",
    "runs",
    "convergence",
    "design-prep",
    "reports",
    "file",
    "diff",
    "checks",
    "managers",
    "inbox",
    "wizard-direction-choose",
    "wizard-design-field",
    "wizard-clarification-review",
]


def _action_owner(app: object, screen: object, node: object, action: str) -> tuple[object, str]:
    namespace, _, name = action.rpartition(".")
    owner = {"app": app, "screen": screen, "": node}[namespace]
    return owner, name.split("(")[0]


@pytest.mark.parametrize("scene", HELP_SCENES)
async def test_every_key_the_help_lists_works_in_that_view(scene: str, demo_root: Path, demo_home: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await SCENES[scene](pilot)
        view = app.screen
        app.action_help()
        await settle(pilot)
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen) and help_screen.under is view
        listed = help_rows(view)
        shown = " ".join(plain(s) for s in help_screen.query(Static))
        bound = view.active_bindings
        assert listed
        for row in listed:
            assert f"{row.shown} " in shown and row.description in shown, row
            # Bound in this view (its focus chain, the view itself or the app), to an action that exists there.
            assert row.key in bound, row
            active = bound[row.key]
            assert active.binding.description == row.description, row
            owner, name = _action_owner(app, view, active.node, active.binding.action)
            assert callable(getattr(owner, f"action_{name}", None)), row
            # A sideways scroll only where the widget can scroll sideways.
            if name in {"scroll_left", "scroll_right", "page_left", "page_right"}:
                assert active.node.styles.overflow_x != "hidden", row
            # Where it acts, in the screen's words (a panel's title), never a widget class name.
            assert row.where not in {type(n).__name__.lower() for n in (view, *view.walk_children())}, row


async def test_the_help_names_the_panel_a_key_acts_in(demo_root: Path, demo_home: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await SCENES["task"](pilot)
        rows = {(row.key, row.where) for row in help_rows(app.screen)}
        assert ("down", "Timeline of runs") in rows and ("q", "everywhere") in rows
        assert ("r", "this view") in rows
