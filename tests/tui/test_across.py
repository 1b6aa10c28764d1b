"""Search and Insights across every project, opened from Home (ctrl+f, I) on the demo of many projects: the
same answers as ``okstra search --all`` and ``okstra stats --all``, Enter opens the project, a broken root is one
line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, OptionList

from okstra_core.cli import main as okstra
from okstra_core.demo.projects import BILLING_DIR, HOME_DIR, SHOP_DIR
from okstra_core.stats import OUTCOMES
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.file import FileScreen
from okstra_tui.screens.insights import InsightsScreen
from okstra_tui.screens.insights_all import InsightsAllScreen
from okstra_tui.screens.search import SHOWN_HITS
from okstra_tui.screens.search_all import SearchAllScreen
from okstra_tui.screenshots import settle

from .conftest import SIZE, plain, wait_until
from .test_home import home_app, open_home

#: A word of the demo's shop and of its billing project (not of mobile).
TERM = "invoice"


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    capsys.readouterr()
    okstra(list(argv))
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


async def search_from_home(pilot: Pilot[None], query: str) -> SearchAllScreen:
    await open_home(pilot)
    await pilot.press("ctrl+f")
    await settle(pilot)
    await pilot.press(*("space" if c == " " else c for c in query))
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SearchAllScreen)
    await wait_until(pilot, lambda: screen.found.text == query and bool(screen.found.per_project), "searched")
    return screen


def option_lines(screen: SearchAllScreen) -> list[str]:
    results = screen.query_one("#search-results", OptionList)
    return [
        str(getattr(o.prompt, "plain", o.prompt))
        for o in (results.get_option_at_index(i) for i in range(results.option_count))
    ]


async def test_ctrl_f_on_home_finds_what_search_all_finds(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = home_app(many_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await search_from_home(pilot, TERM)
        shown = [(entry.project_id, hit.path, hit.label) for entry, hit in screen.found.best]
        counted = {ph.entry.project_id: ph.results.total for ph in screen.found.per_project if ph.results}
        status = plain(screen.query_one("#search-status"))
    home = str(many_root / HOME_DIR)
    doc = cli_json(capsys, "search", "--all", "--home", home, "--json", "--limit", str(SHOWN_HITS), TERM)
    assert shown == [(h["project"], h["path"], h["label"]) for h in doc["hits"]]
    assert counted == {p["project"]: p["total"] for p in doc["projects"] if p["read"]}
    assert sum(1 for n in counted.values() if n) >= 2, "the term is in two projects"
    assert f"{doc['total']} hits in 2 of the 3 projects searched" in status


async def test_enter_on_a_hit_opens_its_project_then_the_hit(many_root: Path) -> None:
    app = home_app(many_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await search_from_home(pilot, TERM)
        best = screen.found.best
        wanted = next(n for n, (entry, _) in enumerate(best) if entry.project_id == "billing")
        results = screen.query_one("#search-results", OptionList)
        results.focus()
        results.highlighted = next(
            i for i in range(results.option_count) if results.get_option_at_index(i).id == str(wanted)
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, FileScreen), "the hit is open")
        await settle(pilot)
        billing = (many_root / BILLING_DIR).resolve()
        assert app.project.root == billing
        shown = app.screen
        assert isinstance(shown, FileScreen)
        assert shown.location.target == billing / best[wanted][1].path
        await pilot.press("escape")  # under the hit: the project's catalog
        await settle(pilot)
        assert isinstance(app.screen, CatalogScreen) and app.project.root == billing


@pytest.mark.parametrize(("typed", "options"), [("", []), ("type:analysis", ["--type", "analysis"])])
async def test_insights_on_home_has_the_numbers_of_stats_all(
    many_root: Path, capsys: pytest.CaptureFixture[str], typed: str, options: list[str]
) -> None:
    app = home_app(many_root)
    async with app.run_test(size=SIZE) as pilot:
        await open_home(pilot)
        await pilot.press("I")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InsightsAllScreen)
        await wait_until(pilot, lambda: bool(screen.data.projects), "every project read")
        if typed:  # / narrows every project as the verb's options do
            await pilot.press("slash", *typed, "enter")
            await settle(pilot)
            await wait_until(pilot, lambda: screen.data.filters.task_type == "analysis", "read with the filter")
        table = screen.query_one("#ia-table", DataTable)
        keys = [str(c.value) for c in table.columns]
        rows = {}
        for n in range(table.row_count):
            cells = dict(zip(keys, (str(getattr(c, "plain", c)) for c in table.get_row_at(n)), strict=True))
            project_id = cells.pop("project")
            rows[project_id] = {k: v for k, v in cells.items() if k != "note"}
        # Enter opens the highlighted project's own Insights.
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, InsightsScreen), "the project's Insights")
        assert app.project.root == (many_root / BILLING_DIR).resolve()
    doc = cli_json(capsys, "stats", "--all", "--home", str(many_root / HOME_DIR), "--json", *options)
    expected = {}
    for project in doc["projects"]:
        stats = project["stats"]
        numbers = {"tasks": stats["tasks"], "runs": stats["runs"]}
        numbers |= {o: sum(day[o.replace("-p", "P")] for day in stats["runsPerDay"]) for o in OUTCOMES}
        numbers["fix cycles"] = sum(row["cycles"] * row["tasks"] for row in stats["fixCycles"])
        expected[project["project"]] = {k: str(v) for k, v in numbers.items()}
    for project_id, numbers in expected.items():
        assert rows[project_id] == numbers, project_id
    assert rows.keys() == expected.keys()
    assert any(int(r["runs"]) for r in rows.values()) and len(rows) == 3


@pytest.mark.parametrize("size", [SIZE, (80, 24)], ids=["120x40", "80x24"])
async def test_a_broken_root_is_one_line_in_each(many_root: Path, tmp_path: Path, size: tuple[int, int]) -> None:
    gone = tmp_path / "gone"
    app = home_app(many_root, current=SHOP_DIR, named=(gone,))
    async with app.run_test(size=size) as pilot:
        search = await search_from_home(pilot, TERM)
        lines = [line for line in option_lines(search) if "gone" in line]
        assert len(lines) == 1 and lines[0].startswith("✗ gone") and "not searched" in lines[0]
        assert "1 cannot be searched" in plain(search.query_one("#search-status"))
        await pilot.press("escape")  # back to Home (H would be typed into the query)
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        insights = app.screen
        assert isinstance(insights, InsightsAllScreen)
        await wait_until(pilot, lambda: bool(insights.data.projects), "every project read")
        broken = [n for n, row in enumerate(insights.data.projects) if not row.read]
        assert [insights.data.projects[n].entry.root for n in broken] == [gone]
        table = insights.query_one("#ia-table", DataTable)
        assert table.row_count == len(insights.data.projects)
        cells = [str(getattr(c, "plain", c)) for c in table.get_row_at(broken[0])]
        assert cells[1] == "✗" and set(cells[2:8]) == {"—"}
        assert "1 cannot be read" in plain(insights.query_one("#ia-summary"))
        table.move_cursor(row=broken[0])
        await settle(pilot)
        assert "does not exist" in plain(insights.query_one("#ia-detail"))


async def test_search_across_runs_again_when_a_hit_changes_in_another_project(fresh_many: Path) -> None:
    app = home_app(fresh_many)
    async with app.run_test(size=SIZE) as pilot:
        screen = await search_from_home(pilot, TERM)
        billing = (fresh_many / BILLING_DIR).resolve()
        gone = next(hit for entry, hit in screen.found.best if entry.root == billing and hit.kind == "brief")
        (billing / gone.path).write_text("# A brief that names no bill any more\n", encoding="utf-8")

        def still_there() -> bool:
            return any(entry.root == billing and hit.path == gone.path for entry, hit in screen.found.best)

        await wait_until(pilot, lambda: not still_there(), "the brief no longer matches")
        assert any(entry.root == billing for entry, _ in screen.found.best), "billing's other hits stay"
