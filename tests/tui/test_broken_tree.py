"""No data crashes the app: walk every view over a demo tree with broken files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from okstra_tui.data.catalog import CatalogRow
from okstra_tui.data.preview import PreviewTarget
from okstra_tui.navigation import Location, View
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.runs import RunsScreen
from okstra_tui.screens.task import TaskScreen
from okstra_tui.screenshots import settle, workers_done
from okstra_tui.widgets.error_panel import ErrorPanel

from .conftest import SIZE, make_app


@pytest.fixture
def broken_demo(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Path]]:
    """The demo with invalid JSON, a missing manifest, a dangling symlink and a broken manager file."""
    root = fresh_demo
    monkeypatch.setenv("OKSTRA_HOME", str(root / ".okstra-home"))
    tasks = sorted(p.parent for p in root.glob(".okstra/tasks/*/*/task-manifest.json"))
    broken: dict[str, Path] = {"tasks": tasks[0]}
    # 1. invalid JSON in a run manifest, a team-state and a report of one task
    victim = tasks[0]
    for pattern in (
        "runs/*/manifests/run-manifest-*.json",
        "runs/**/state/team-state-*.json",
        "runs/**/reports/final-report-*.data.json",
    ):
        found = sorted(victim.glob(pattern))
        if found:
            found[0].write_text('{"schemaVersion": "3.0", ', encoding="utf-8")
    broken["invalid"] = sorted(victim.glob("runs/*/manifests/run-manifest-*.json"))[0]
    (victim / "history" / "timeline.json").write_text("[oops", encoding="utf-8")
    # 2. a missing task manifest
    broken["no-manifest"] = tasks[1]
    os.remove(tasks[1] / "task-manifest.json")
    # 3. a dangling symlink where an artifact should be, and one in the instruction set
    state = next(victim.glob("runs/*/state"))
    link = state / "team-state-analysis-099.json"
    os.symlink(root / "does-not-exist.json", link)
    broken["dangling"] = link
    os.symlink(root / "nowhere.md", victim / "instruction-set" / "task-brief-link.md")
    # 4. discovery pointer and a manager file broken too
    (root / ".okstra" / "discovery" / "latest-task.json").write_text("nope", encoding="utf-8")
    for manager_json in (root / ".okstra-home").glob("managers/*/projects.json"):
        manager_json.write_bytes(b"\xff\xfe not utf-8")
    # 5. every design-prep input and the convergence groups of another task: invalid
    for path in root.glob(".okstra/tasks/*/*/runs/*/design-prep-inputs/*.md"):
        path.write_text("---\nkind: nonsense\n---\n", encoding="utf-8")
        break
    for path in root.glob(".okstra/tasks/*/*/runs/*/state/convergence-groups-*.json"):
        path.write_text("{}", encoding="utf-8")
    return root, broken


#: The tasks are walked in this many tests (run in parallel under xdist): part *n* walks every PARTS-th task.
PARTS = 4


@pytest.mark.parametrize("part", range(PARTS))
async def test_walk_every_view_over_a_broken_tree(broken_demo: tuple[Path, dict[str, Path]], part: int) -> None:
    root, broken = broken_demo
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen)
        assert catalog.query(ErrorPanel), "the broken latest-task pointer shows inline"
        rows = [r for r in catalog.table.rows if isinstance(r, CatalogRow)]
        for index, row in enumerate(catalog.table.rows):
            if isinstance(row, CatalogRow):
                catalog.table.cursor = index
        await settle(pilot)
        missing = next(r for r in rows if r.root == broken["no-manifest"])
        assert catalog.phases[missing.ident].error is not None
        assert {r.root for r in rows} >= {broken["tasks"], broken["no-manifest"]}
        for row in rows[part::PARTS]:
            app.navigate(Location(View.TASK, row.root))
            await settle(pilot)
            task_screen = app.screen
            assert isinstance(task_screen, TaskScreen)
            if row.root == broken["no-manifest"]:
                assert task_screen.query(ErrorPanel)
            await pilot.press("r")
            await settle(pilot)
            runs = app.screen
            assert isinstance(runs, RunsScreen)
            # Every node of the tasks holding broken files; the rest get their views opened.
            walk_all = row.root == broken["tasks"]
            for node in _all(runs.run_tree.root):
                if isinstance(node.data, PreviewTarget) and (walk_all or node.data.kind == "run-dir"):
                    parent = node.parent
                    while parent is not None:
                        parent.expand()
                        parent = parent.parent
                    runs.run_tree.move_cursor(node)
                    await quick_settle(pilot)
                    if node.data.path in (broken["invalid"], broken["dangling"]):
                        assert runs.preview.query(ErrorPanel), node.data.path
            for key in (
                "escape",
                "v",
                "escape",
                "d",
                "down",
                "down",
                "down",
                "escape",
                "p",
                "down",
                "down",
                "escape",
                "escape",
            ):
                await pilot.press(key)
                await settle(pilot)
            assert app.screen is catalog
        for key in ("x", "escape", "m", "down", "down", "down", "down", "escape", "question_mark", "escape"):
            await pilot.press(key)
            await settle(pilot)
        assert app.screen is catalog


async def quick_settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()


def _all(node):  # type: ignore[no-untyped-def]
    out = [node]
    for child in node.children:
        out.extend(_all(child))
    return out
