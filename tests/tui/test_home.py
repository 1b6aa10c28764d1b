"""Home: every project of the registry with what waits in it, on the demo of many projects (``okstra demo
--projects``); Enter opens a project, H comes back, and the counts follow decisions made in any project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from okstra_core import layout
from okstra_core.cli import main as okstra
from okstra_core.demo.projects import BILLING_DIR, HOME_DIR, MOBILE_DIR, SHOP_DIR
from okstra_core.projects import remember_root
from okstra_core.store import Project
from okstra_core.workflows.inbox import pending_decisions
from okstra_tui import __main__ as tui_main
from okstra_tui.app import OkstraApp
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.home import HomeRow, HomeScreen, cut_middle
from okstra_tui.screenshots import settle

from .conftest import SIZE, WAIT_SECONDS, plain, wait_until

PROJECTS = {"demo-shop": SHOP_DIR, "billing": BILLING_DIR, "mobile": MOBILE_DIR}


def home_app(base: Path, current: str = SHOP_DIR, named: tuple[Path, ...] = ()) -> OkstraApp:
    """The workbench opened on Home over the demo's manager home, *current* the project open."""
    return OkstraApp(Project(base / current), start_home=True, okstra_home=base / HOME_DIR, named_roots=named)


async def open_home(pilot: Pilot[None]) -> HomeScreen:
    await settle(pilot)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen) and pilot.app.screen.reads, "Home read")
    screen = pilot.app.screen
    assert isinstance(screen, HomeScreen)
    return screen


def by_id(screen: HomeScreen) -> dict[str, HomeRow]:
    return {row.entry.project_id: row for row in screen.data.rows}


def cells(screen: HomeScreen, project_id: str) -> dict[str, str]:
    """The cells of *project_id*'s row, as shown, by column."""
    table = screen.query_one("#home-table", DataTable)
    index = [row.entry.project_id for row in screen.data.rows].index(project_id)
    row = table.get_row_at(index)
    return {str(key.value): str(getattr(cell, "plain", cell)) for key, cell in zip(table.columns, row, strict=True)}


async def test_home_lists_each_sources_projects_with_what_waits(many_root: Path, tmp_path: Path) -> None:
    remember_root(many_root / MOBILE_DIR)  # mobile is also among the roots opened in the workbench
    extra = tmp_path / "extra"
    extra.mkdir()
    app = home_app(many_root, named=(extra,))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_home(pilot)
        rows = by_id(screen)
        assert list(rows)[:3] == list(PROJECTS), "the managers' projects first, in registry order"
        for project_id, folder in PROJECTS.items():
            waiting = len(pending_decisions(Project(many_root / folder)))
            assert waiting and rows[project_id].waiting == waiting
            assert cells(screen, project_id)["waiting"] == str(waiting)
        kinds = {s.kind for s in rows["mobile"].entry.sources}
        assert kinds == {"manager", "remembered"}
        named = next(row for row in screen.data.rows if row.entry.root == extra.resolve())
        assert [s.kind for s in named.entry.sources] == ["named"]
        assert cells(screen, "demo-shop")["health"] == "open"
        total = sum(len(pending_decisions(Project(many_root / f))) for f in PROJECTS.values())
        assert f"{total} decisions waiting in 3 of the 3 projects read" in plain(screen.query_one("#home-summary"))
        # A file written just before it was read (the copy of the demo) is looked at once more, a moment later.
        await pilot.pause(0.5)
        await wait_until(pilot, lambda: not any(w.is_running for w in screen.workers), "Home's reads done")
        reads = screen.reads
        await pilot.pause(2.5)  # what Home read is polled once a second: nothing changed, nothing is read again
        assert screen.reads == reads


@pytest.mark.parametrize("size", [SIZE, (80, 24)], ids=["120x40", "80x24"])
async def test_a_broken_root_shows_its_mark_and_reason(many_root: Path, tmp_path: Path, size: tuple[int, int]) -> None:
    plain_folder = tmp_path / "plain"
    plain_folder.mkdir()
    app = home_app(many_root, named=(tmp_path / "gone", plain_folder))
    async with app.run_test(size=size) as pilot:
        screen = await open_home(pilot)
        gone = next(r for r in screen.data.rows if r.entry.root.name == "gone")
        no_store = next(r for r in screen.data.rows if r.entry.root.name == "plain")
        for row, mark, reason in ((gone, "✗ missing", "does not exist"), (no_store, "✗ no store", "no .okstra/")):
            assert row.waiting is None
            shown = cells(screen, row.entry.project_id)
            assert shown["health"] == mark
            assert shown["waiting"] == "—"
            said = shown.get("note") or shown["root"]  # narrow: the reason takes the root's place
            assert reason in said
        assert "2 cannot be read" in plain(screen.query_one("#home-summary"))
        # Enter on a broken row opens nothing and says why.
        screen.query_one("#home-table", DataTable).move_cursor(row=screen.data.rows.index(gone))
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert app.project.root == (many_root / SHOP_DIR)


async def test_enter_opens_a_project_and_h_comes_back(many_root: Path) -> None:
    app = home_app(many_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_home(pilot)
        screen.query_one("#home-table", DataTable).move_cursor(row=list(by_id(screen)).index("billing"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CatalogScreen), "the catalog is shown")
        await settle(pilot)
        billing = (many_root / BILLING_DIR).resolve()
        assert app.project.root == billing
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen)
        assert app.project.task_refs and all(ref.root.is_relative_to(billing) for ref in app.project.task_refs)
        assert "okstra billing" in catalog.breadcrumbs().line(120).plain
        await pilot.press("escape")  # back to Home, which now marks billing as the project open
        await settle(pilot)
        assert app.screen is screen
        await wait_until(pilot, lambda: cells(screen, "billing")["health"] == "open", "billing is marked open")
        assert "okstra billing" in plain_line(screen)
        await pilot.press("c", "i")
        await settle(pilot)
        await pilot.press("H")
        await settle(pilot)
        assert app.screen is screen


def plain_line(screen: HomeScreen) -> str:
    from okstra_tui.screens.base import Breadcrumbs

    return screen.query_one(Breadcrumbs).line(120).plain


async def test_a_decision_made_in_another_project_updates_home(fresh_many: Path) -> None:
    shop = fresh_many / SHOP_DIR
    wanted = next(d for d in pending_decisions(Project(shop)) if d.kind == "planning-prepare")
    before = len(pending_decisions(Project(shop)))
    app = home_app(fresh_many, current=BILLING_DIR)  # shop's store is not the one the app watches
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_home(pilot)
        assert by_id(screen)["demo-shop"].waiting == before
        assert okstra(["planning", "prepare", str(shop), "--task", wanted.task]) == 0
        await wait_until(
            pilot, lambda: by_id(screen)["demo-shop"].waiting == before - 1, "Home follows a decision made in shop"
        )
        assert cells(screen, "demo-shop")["waiting"] == str(before - 1)


def test_cut_middle_keeps_both_ends() -> None:
    assert cut_middle("/home/someone/src/shop", 40) == "/home/someone/src/shop"
    cut = cut_middle("/home/someone/src/a-long-project-name", 16)
    assert cut == "/home…oject-name"
    assert cut_middle("abc", 1) == "…"


@pytest.mark.parametrize(
    ("argv", "home"),
    [(["--all"], True), (["SHOP", "BILLING"], True), (["SHOP"], False)],
    ids=["all", "several", "one"],
)
def test_all_or_several_roots_open_on_home(
    many_root: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], home: bool
) -> None:
    started: list[OkstraApp] = []
    monkeypatch.setattr(OkstraApp, "run", lambda self, *a, **k: started.append(self))
    monkeypatch.setenv("OKSTRA_HOME", str(many_root / HOME_DIR))
    monkeypatch.chdir(many_root / SHOP_DIR)
    given = [str(many_root / {"SHOP": SHOP_DIR, "BILLING": BILLING_DIR}.get(a, a)) if a.isupper() else a for a in argv]
    assert tui_main.main(given) == 0
    (app,) = started
    assert app.start_home is home
    assert app.project.root == (many_root / SHOP_DIR).resolve()
    assert len(app.named_roots) == (2 if argv[0] == "SHOP" and home else 0)


def test_all_does_not_go_with_serve(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        tui_main.main(["--all", "--serve"])
    assert exited.value.code == 2
    assert "--serve opens one project" in capsys.readouterr().err


async def test_home_over_a_single_projects_catalog_stays_under_the_next_one(fresh_many: Path) -> None:
    """Opened on one project's catalog (``okstra-tui PROJECT``), H shows Home; a project opened from there shows
    its catalog over Home, and a root gone since Home read it is refused, and Home follows it."""
    app = OkstraApp(Project(fresh_many / SHOP_DIR), okstra_home=fresh_many / HOME_DIR)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, CatalogScreen)
        await pilot.press("H")
        screen = await open_home(pilot)
        screen.query_one("#home-table", DataTable).move_cursor(row=list(by_id(screen)).index("mobile"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.project.root == fresh_many / MOBILE_DIR, "mobile is open")
        await settle(pilot)
        assert isinstance(app.screen, CatalogScreen)
        assert [type(s).__name__ for s in app.screen_stack[-2:]] == ["HomeScreen", "CatalogScreen"]
        await pilot.press("escape")
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_until(pilot, lambda: bool(home.data.rows), "Home read")
        await pilot.press("escape")  # Home is the bottom of the reachable stack now: back stays there
        await settle(pilot)
        assert app.screen is home
        (fresh_many / BILLING_DIR).rename(fresh_many / "billing-moved")
        home.query_one("#home-table", DataTable).move_cursor(row=list(by_id(home)).index("billing"))
        await pilot.press("enter")
        await settle(pilot)
        assert app.project.root == fresh_many / MOBILE_DIR, "a root gone since Home read it is not opened"
        await wait_until(pilot, lambda: by_id(home)["billing"].entry.health == "missing", "Home follows it")
        assert cells(home, "billing")["health"] == "✗ missing"


async def test_a_registration_left_out_is_a_note_shown_inert(fresh_many: Path) -> None:
    """A manager's registration that does not validate is one of the registry's notes: the summary counts it and
    shows the first, its control characters made visible."""
    path = fresh_many / HOME_DIR / layout.MANAGERS_DIR / "platform" / layout.MANAGER_PROJECTS
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["projects"].append({"projectId": "bad\x1b[2Jid", "projectRoot": 7})
    path.write_text(json.dumps(doc), encoding="utf-8")
    app = home_app(fresh_many)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_home(pilot)
        assert screen.data.notes
        summary = plain(screen.query_one("#home-summary"))
        assert "1 note: " in summary
        assert "\x1b" not in summary
        assert list(by_id(screen)) == list(PROJECTS)


async def test_home_lists_the_projects_before_it_has_counted_them(
    many_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry is shown at once, each count as "…", while the inboxes are read; then the counts."""
    import threading

    from okstra_tui.screens import home as home_module

    counted = threading.Event()
    read_home = home_module.read_home

    def held_back(*args: object, **kwargs: object) -> object:
        counted.wait(WAIT_SECONDS)
        return read_home(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(home_module, "read_home", held_back)
    gone = tmp_path / "gone"
    app = home_app(many_root, named=(gone,))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen.data.rows, "Home listed")
        screen = app.screen
        assert isinstance(screen, HomeScreen) and screen.reads == 0
        assert [r.entry.project_id for r in screen.data.rows][:3] == list(PROJECTS)
        assert {cells(screen, p)["waiting"] for p in PROJECTS} == {"…"}
        assert cells(screen, "demo-shop")["health"] == "open"
        broken = screen.data.rows[-1]
        assert broken.entry.root == gone and broken.problem and cells(screen, broken.entry.project_id)["waiting"] == "—"
        assert plain(screen.query_one("#home-summary")).startswith("Counting what waits in 3 projects…")
        counted.set()
        await wait_until(pilot, lambda: screen.reads == 1, "Home counted")
        await settle(pilot)
        for project_id, folder in PROJECTS.items():
            assert cells(screen, project_id)["waiting"] == str(len(pending_decisions(Project(many_root / folder))))
