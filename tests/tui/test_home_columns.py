"""Home's columns per project (changed since you last looked, running and stalled, last activity, the last check's
verdict), each against its owner's own answer, and switching projects with O and the command palette."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import DataTable

from okstra_core import layout
from okstra_core.check.cache import CheckCache, load_verdict
from okstra_core.cli import main as okstra
from okstra_core.demo.projects import BILLING_DIR, HOME_DIR, MOBILE_DIR, SHOP_DIR
from okstra_core.store import Project
from okstra_core.workflows.activity import activity
from okstra_core.workflows.inbox import read_inbox
from okstra_core.workflows.running import running_runs
from okstra_tui.app import OkstraApp
from okstra_tui.data import seen
from okstra_tui.data.catalog import CatalogRow
from okstra_tui.screens.base import Breadcrumbs
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.home import HomeRow, HomeScreen, column_widths
from okstra_tui.screens.running import age
from okstra_tui.screens.switch import CURRENT_MARK, ProjectPicker
from okstra_tui.screens.task import TaskScreen
from okstra_tui.screenshots import settle
from okstra_tui.widgets.list_table import ListOptions

from .conftest import SIZE, plain, wait_until
from .test_home import PROJECTS, by_id, cells, home_app, open_home

#: A moment after every demo time, so that every age and stalled mark is fixed.
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def task_roots(root: Path) -> list[Path]:
    return [ref.root for ref in Project(root).task_refs]


def crumbs(app: OkstraApp) -> str:
    return app.screen.query_one(Breadcrumbs).line(120).plain


def rewrite_manifest(task_root: Path) -> None:
    """Rewrite a task's manifest with the same content (a new inode: its seen signature changes)."""
    path = layout.task_manifest_path(task_root)
    new = path.with_suffix(".new")
    new.write_bytes(path.read_bytes())
    os.replace(new, path)


async def test_each_column_is_its_owners_answer(many_root: Path) -> None:
    app = home_app(many_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_home(pilot)
        screen.fixed_now = NOW
        screen.refresh_ages()
        rows = by_id(screen)
        for project_id, folder in PROJECTS.items():
            project = Project(many_root / folder)
            runs = running_runs(project)
            stalled = sum(1 for run in runs if run.stalled(NOW))
            latest = activity(project)[0].at
            row = rows[project_id]
            assert row.overview is not None
            assert len(row.overview.running) == len(runs)
            assert row.overview.last_activity == latest
            shown = cells(screen, project_id)
            assert shown["running"] == str(len(runs))
            assert shown["stalled"] == str(stalled)
            assert shown["activity"] == age(NOW - latest)
            assert shown["changed"] == "0", "nothing is changed before the first look"
            assert shown["check"] == "—", "no check ran: none is kept, and Home runs none"
        shop = cells(screen, "demo-shop")
        assert shop["running"] != "0" and shop["stalled"] != "0", "the demo's shop has a stalled run"
        detail = plain(screen.query_one("#home-detail"))
        assert "running  1 run in progress, 1 stalled" in detail
        assert "check    none kept" in detail
    for folder in PROJECTS.values():  # Home wrote no seen state and no verdict: it only looked
        assert seen.load(many_root / folder).first
        assert load_verdict(CheckCache(layout.okstra_cache_dir()), str(many_root / folder), None) is None


async def test_a_check_verdict_shows_once_okstra_check_kept_it(fresh_many: Path, tmp_path: Path) -> None:
    billing, shop = fresh_many / BILLING_DIR, fresh_many / SHOP_DIR
    app = home_app(fresh_many, current=MOBILE_DIR)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_home(pilot)
        assert cells(screen, "billing")["check"] == "—"
        out = tmp_path / "shop.json"
        assert okstra(["check", str(billing), "--quiet"]) == 0
        assert okstra(["check", str(shop), "--quiet", "--format", "json", "--output", str(out)]) in (0, 1)
        await wait_until(pilot, lambda: cells(screen, "billing")["check"] != "—", "Home follows the check")
        await wait_until(pilot, lambda: cells(screen, "demo-shop")["check"] != "—", "and the other one")
        assert cells(screen, "billing")["check"] == "✓ clean"
        report = json.loads(out.read_text(encoding="utf-8"))
        summary = report["summary"]
        verdict = by_id(screen)["demo-shop"].verdict
        assert verdict is not None
        assert (verdict.errors, verdict.warnings, verdict.infos) == (
            summary["errors"],
            summary["warnings"],
            summary["infos"],
        )
        expected = f"✗ {summary['errors']} err" if summary["errors"] else f"! {summary['warnings']} warn"
        assert cells(screen, "demo-shop")["check"] == expected
        screen.query_one("#home-table", DataTable).move_cursor(row=list(by_id(screen)).index("demo-shop"))
        await settle(pilot)
        assert f"{summary['warnings']} warnings" in plain(screen.query_one("#home-detail"))


async def test_changed_since_looked_drops_once_the_task_is_opened(fresh_many: Path) -> None:
    billing = fresh_many / BILLING_DIR
    seen.mark_seen(billing, seen.signatures(billing, task_roots(billing)), replace_all=True)
    changed = task_roots(billing)[0]
    rewrite_manifest(changed)
    unread = seen.load(billing).unread(seen.signatures(billing, task_roots(billing)))
    assert unread == {seen.task_key(billing, changed)}
    app = home_app(fresh_many)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_home(pilot)
        assert by_id(screen)["billing"].changed == len(unread)
        assert cells(screen, "billing")["changed"] == "1"
        assert cells(screen, "mobile")["changed"] == "0"
        screen.query_one("#home-table", DataTable).move_cursor(row=list(by_id(screen)).index("billing"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CatalogScreen), "billing's catalog")
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen)
        await wait_until(pilot, lambda: bool(catalog.unread), "the catalog marks the changed task")
        assert len(catalog.unread) == 1
        rows = catalog.table.rows
        catalog.table.cursor = next(i for i, r in enumerate(rows) if isinstance(r, CatalogRow) and r.root == changed)
        catalog.action_open_task()
        await wait_until(pilot, lambda: isinstance(app.screen, TaskScreen), "the task is open")
        await pilot.press("H")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), "Home again")
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_until(pilot, lambda: cells(home, "billing")["changed"] == "0", "the task opened is no more new")


async def test_a_broken_root_shows_its_mark_in_every_new_column(many_root: Path, tmp_path: Path) -> None:
    app = home_app(many_root, named=(tmp_path / "gone",))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_home(pilot)
        gone = next(r for r in screen.data.rows if r.entry.root.name == "gone")
        assert gone.overview is None and gone.changed is None
        shown = cells(screen, gone.entry.project_id)
        assert shown["health"] == "✗ missing"
        for column in ("waiting", "changed", "running", "stalled", "activity", "check"):
            assert shown[column] == "—", column


@pytest.mark.parametrize(("width", "dropped"), [(150, set()), (120, {"note"}), (80, {"note", "check", "activity"})])
def test_a_narrow_terminal_drops_the_least_important_columns_first(width: int, dropped: set[str]) -> None:
    shown, widths = column_widths(width)
    assert {"project", "waiting", "changed", "running", "health", "root"} <= set(shown)
    assert not dropped & set(shown)
    assert sum(widths[c] + 2 for c in shown) + 4 <= width


async def test_o_opens_a_picker_with_the_current_project_marked_and_enter_switches(many_root: Path) -> None:
    app = OkstraApp(Project(many_root / SHOP_DIR), okstra_home=many_root / HOME_DIR)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("O")
        await wait_until(pilot, lambda: isinstance(app.screen, ProjectPicker) and app.screen.entries, "the picker")
        picker = app.screen
        assert isinstance(picker, ProjectPicker)
        listing = picker.query_one("#switch-list", ListOptions)
        labels = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert [e.project_id for e in picker.entries] == list(PROJECTS)
        assert labels[0].startswith(f"{CURRENT_MARK} demo-shop")
        assert not any(label.startswith(CURRENT_MARK) for label in labels[1:])
        assert listing.highlighted == 0
        await pilot.press("down", "down", "enter")
        await wait_until(pilot, lambda: app.project.root == (many_root / MOBILE_DIR).resolve(), "mobile is open")
        await wait_until(pilot, lambda: isinstance(app.screen, CatalogScreen), "its catalog")
        await settle(pilot)
        assert "okstra mobile" in crumbs(app)


async def test_the_palette_opens_any_project_that_can_be_read(many_root: Path, tmp_path: Path) -> None:
    app = home_app(many_root, named=(tmp_path / "gone",))
    async with app.run_test(size=SIZE) as pilot:
        await open_home(pilot)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"open project")
        palette = app.screen
        assert isinstance(palette, CommandPalette)

        def titles() -> list[str]:
            found = palette.query_one(CommandList)
            return [str(found.get_option_at_index(i).prompt).splitlines()[0] for i in range(found.option_count)]

        def projects() -> list[str]:
            return [t for t in titles() if t.startswith("Open project ")]

        await wait_until(pilot, lambda: len(projects()) == 3, "three projects")
        assert sorted(projects()) == sorted(f"Open project {p}" for p in PROJECTS), "none for a root gone"
        await pilot.press(*" billing")
        await wait_until(pilot, lambda: titles()[:1] == ["Open project billing"], "billing first")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.project.root == (many_root / BILLING_DIR).resolve(), "billing is open")
        await wait_until(pilot, lambda: isinstance(app.screen, CatalogScreen), "its catalog")
        await settle(pilot)
        assert "okstra billing" in crumbs(app)


async def test_every_count_of_what_waits_shows_before_the_other_columns(
    many_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The headline first: while the other columns are still read, every project's count of what waits is on
    screen, each equal to what it is once Home has read everything, and the other columns say "…"."""
    import threading

    from okstra_tui.screens import home

    release = threading.Event()
    completed_row = home.completed_row

    def held(*args: object) -> HomeRow:
        release.wait(60)
        return completed_row(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(home, "completed_row", held)
    app = home_app(many_root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, HomeScreen) and app.screen.data.reading_more,
            "the counts shown alone",
        )
        screen = app.screen
        assert isinstance(screen, HomeScreen)
        counted = {pid: row.waiting for pid, row in by_id(screen).items()}
        assert all(isinstance(n, int) for n in counted.values())
        for pid in PROJECTS:
            shown_cells = cells(screen, pid)
            assert shown_cells["waiting"].rstrip("+") == str(counted[pid])
            assert {shown_cells[c] for c in ("changed", "running", "stalled", "activity", "check")} == {"…"}
        assert not screen.reads
        release.set()
        await wait_until(pilot, lambda: bool(screen.reads), "Home read whole")
        assert {pid: row.waiting for pid, row in by_id(screen).items()} == counted
        truth = {pid: len(read_inbox(Project(many_root / folder)).items) for pid, folder in PROJECTS.items()}
        assert {pid: counted[pid] for pid in PROJECTS} == truth, "the counts shown first are a fresh look's"
        assert all(row.overview is not None for row in screen.data.rows if row.problem is None)
        assert "…" not in cells(screen, "billing").values()


async def test_the_clock_fills_the_table_again_only_when_an_age_reads_differently(many_root: Path) -> None:
    """Ages are redrawn from the clock every half minute; a tick that changes nothing on screen redraws nothing
    (a fill renders the whole table)."""
    app = home_app(many_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_home(pilot)
        fills = 0
        fill = screen._fill

        def counted() -> None:
            nonlocal fills
            fills += 1
            fill()

        screen._fill = counted  # type: ignore[method-assign]
        screen.fixed_now = NOW
        screen.refresh_ages()
        assert fills == 1, "the ages now read differently from the real clock's"
        screen.refresh_ages()
        screen.fixed_now = NOW + dt.timedelta(seconds=30)
        screen.refresh_ages()
        assert fills == 1, "nothing reads differently half a minute later"
        screen.fixed_now = NOW + dt.timedelta(days=2)
        screen.refresh_ages()
        assert fills == 2
        overview = by_id(screen)["billing"].overview
        assert overview is not None and overview.last_activity is not None
        assert cells(screen, "billing")["activity"] == age(NOW + dt.timedelta(days=2) - overview.last_activity)
