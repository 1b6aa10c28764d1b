"""Pilot tests: each view on the demo, and the navigation between them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Markdown, Static, Tree

from okstra_core import layout
from okstra_core.store import Project
from okstra_tui.data.catalog import CatalogRow
from okstra_tui.data.preview import PreviewTarget
from okstra_tui.navigation import Location, View
from okstra_tui.screens.catalog import SORTS, CatalogScreen, CatalogSort
from okstra_tui.screens.checks import ChecksScreen
from okstra_tui.screens.convergence import ConvergenceScreen
from okstra_tui.screens.design_prep import DesignPrepScreen
from okstra_tui.screens.help import HelpScreen
from okstra_tui.screens.managers import ManagersScreen, TaskNode
from okstra_tui.screens.reports import ReportsScreen
from okstra_tui.screens.runs import RunsScreen
from okstra_tui.screens.task import TaskScreen
from okstra_tui.screenshots import settle
from okstra_tui.widgets.error_panel import ErrorPanel
from okstra_tui.widgets.virtual_table import GroupHeader, VirtualTable

from .conftest import SIZE, make_app, open_view, plain, wait_until


def _rendered_text(widget: Static) -> str:
    return plain(widget)


async def test_catalog_groups_tasks_and_marks_latest(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        rows = screen.table.rows
        headers = [r.label for r in rows if isinstance(r, GroupHeader)]
        tasks = [r for r in rows if isinstance(r, CatalogRow)]
        assert headers == sorted(headers) and len(headers) >= 2
        assert len(tasks) == len(screen.data.rows)
        assert sum(1 for r in tasks if r.latest) == 1
        # Phase columns are read for the rows in view.
        assert all(r.ident in screen.phases for r in tasks[:5])
        await pilot.press("L")
        assert screen.table.current_row.latest


async def test_catalog_filter_and_sort(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        total = len(screen.data.rows)
        await pilot.press("slash", *"implementation")
        shown = [r for r in screen.table.rows if isinstance(r, CatalogRow)]
        assert 0 < len(shown) < total
        assert all("implementation" in f"{r.key} {r.task_type} {r.status} {r.title}".lower() for r in shown)
        await pilot.press("escape")
        assert len([r for r in screen.table.rows if isinstance(r, CatalogRow)]) == total
        await pilot.press("s")  # by task key
        keys = [r.key for r in screen.table.rows if isinstance(r, CatalogRow) and r.group == screen.table.rows[1].group]
        assert keys == sorted(keys)
        await pilot.press("S")
        keys = [r.key for r in screen.table.rows if isinstance(r, CatalogRow) and r.group == screen.table.rows[1].group]
        assert keys == sorted(keys, reverse=True)


async def test_open_task_back_and_forward(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen)
        await pilot.press("L", "enter")
        await settle(pilot)
        task = app.screen
        assert isinstance(task, TaskScreen)
        assert task.task_root == catalog.table.current_row.root
        timeline = task.query_one("#task-timeline", VirtualTable)
        assert len(timeline.rows) >= 1
        text = _rendered_text(task.query_one("#task-manifest", Static))
        assert "next recommended" in text and "workflow phase states" in text
        await pilot.press("escape")
        assert app.screen is catalog
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert isinstance(app.screen, TaskScreen) and app.screen.task_root == task.task_root


async def test_runs_view_previews_json_markdown_and_team_state(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        project = app.project
        task = next(r for r in project.task_refs if r.open().run_dir("analysis") is not None).open()
        app.navigate(Location(View.RUNS, task.root))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        tree: Tree[PreviewTarget | None] = screen.run_tree
        kinds_seen: set[str] = set()
        for node in _leaves(tree.root):
            data = node.data
            if not isinstance(data, PreviewTarget) or data.artifact is None:
                continue
            if data.artifact.kind in kinds_seen or data.artifact.kind not in (
                "team-state",
                "run-manifest",
                "final-report-md",
                "worker-prompt",
            ):
                continue
            kinds_seen.add(data.artifact.kind)
            _expand_to(node)
            await pilot.pause()
            tree.move_cursor(node)
            await settle(pilot)
            preview = screen.preview
            assert preview.target is not None and preview.target.path == data.path
            if data.artifact.kind == "team-state":
                assert len(preview.query(DataTable)) == 3
            if data.artifact.kind in ("final-report-md", "worker-prompt"):
                assert preview.query(Markdown)
        assert "team-state" in kinds_seen and "run-manifest" in kinds_seen


async def test_runs_diff_two_seqs(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # A task whose run dir holds two seqs of one category (a rerun).
        for ref in app.project.task_refs:
            for rd in ref.open().run_dirs:
                manifests = rd.of_kind("run-manifest")
                if len(manifests) >= 2:
                    app.navigate(Location(View.RUNS, ref.root, rd.path))
                    await settle(pilot)
                    screen = app.screen
                    assert isinstance(screen, RunsScreen)
                    nodes = [
                        n
                        for n in _leaves(screen.run_tree.root)
                        if isinstance(n.data, PreviewTarget) and n.data.path in (manifests[0].path, manifests[1].path)
                    ]
                    for node in nodes:
                        _expand_to(node)
                        await pilot.pause()
                        screen.run_tree.move_cursor(node)
                        await pilot.pause()
                        await pilot.press("D")
                    await settle(pilot)
                    diff = app.screen
                    assert type(diff).__name__ == "DiffScreen"
                    text = plain(diff.query_one("#diff-text", Static))
                    assert "@@" in text
                    return
        raise AssertionError("the demo has no rerun with two run manifests")


async def test_convergence_design_prep_reports_views(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen = {"convergence": False, "design": False, "chain": False, "reading": False}
        for ref in app.project.task_refs:
            app.navigate(Location(View.TASK, ref.root))
            await settle(pilot)
            await pilot.press("v")
            await settle(pilot)
            assert isinstance(app.screen, ConvergenceScreen)
            body = app.screen.query_one("#convergence-body")
            if any("Round 1" in plain(s) for s in body.query(Static)):
                seen["convergence"] = True
            await pilot.press("escape", "d")
            await settle(pilot)
            assert isinstance(app.screen, DesignPrepScreen)
            table = app.screen.query_one("#dp-table", VirtualTable)
            if any("authoritative" in row.verdict.plain for row in table.rows):
                seen["design"] = True
            await pilot.press("escape", "p")
            await settle(pilot)
            assert isinstance(app.screen, ReportsScreen)
            if "passed" in plain(app.screen.query_one("#rep-chain", Static)):
                seen["chain"] = True
            if app.screen.query(Markdown):
                seen["reading"] = True
            await pilot.press("escape", "escape")
            assert isinstance(app.screen, CatalogScreen)
        assert all(seen.values()), seen


async def test_checks_view_groups_findings_and_jumps(fresh_demo: Path) -> None:
    # Break one artifact so there is a finding to jump to.
    team_states = sorted(fresh_demo.glob(".okstra/tasks/*/*/runs/*/state/team-state-*.json"))
    team_states[0].write_text("{ not json", encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "x", ChecksScreen)
        tree = screen.query_one("#checks-tree", Tree)
        files = [n for n in tree.root.children if n.data]
        broken_rel = team_states[0].relative_to(fresh_demo).as_posix()
        node = next(n for n in files if n.data == broken_rel)
        assert node.children, "findings are grouped under their file"
        tree.move_cursor(node.children[0])
        await pilot.press("enter")
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        assert runs.preview.target is not None and runs.preview.target.path == team_states[0]


async def test_managers_view(demo_root: Path, demo_home: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "m", ManagersScreen)
        tree = screen.query_one("#mgr-tree", Tree)
        managers = tree.root.children
        assert managers
        labels = [str(n.label) for n in _all(tree.root)]
        assert any(label.startswith("projects") for label in labels)
        task_nodes = [n for n in _all(tree.root) if isinstance(n.data, TaskNode)]
        assert task_nodes
        tree.move_cursor(task_nodes[0])
        await settle(pilot)
        text = " ".join(plain(s) for s in screen.query_one("#mgr-body").query(Static))
        assert "Children" in text and "Snapshots" in text


async def test_managers_view_refuses_a_task_group_linked_outside(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = fresh_demo / ".okstra-home"
    monkeypatch.setenv("OKSTRA_HOME", str(home))
    manifest = next(home.glob("managers/*/task-groups/*/*/manifest.json"))
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    doc["title"] = "outside-secret-title"
    manifest.write_text(json.dumps(doc), encoding="utf-8")
    group = manifest.parent.parent
    shutil.move(group, tmp_path / "outside")
    group.symlink_to(tmp_path / "outside")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "m", ManagersScreen)
        tree = screen.query_one("#mgr-tree", Tree)
        task = next(
            n for n in _all(tree.root) if isinstance(n.data, TaskNode) and n.data.task.folder == manifest.parent
        )
        tree.move_cursor(task)
        await settle(pilot)
        body = screen.query_one("#mgr-body")
        assert body.query(ErrorPanel)
        text = " ".join(plain(s) for s in body.query(Static))
        assert "symlink leading outside" in text
        assert "outside-secret-title" not in text


async def test_help_and_palette_list_every_action(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("L", "enter")
        await settle(pilot)
        task_screen = app.screen
        await pilot.press("question_mark")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        text = " ".join(plain(s) for s in help_screen.query(Static))
        for description in ("Runs", "Convergence", "Design-prep", "Reports", "Back", "Checks", "Managers", "Copy path"):
            assert description in text
        titles = {c.title for c in app.get_system_commands(task_screen)}
        assert {
            "Runs",
            "Convergence",
            "Design-prep",
            "Reports",
            "Back",
            "Forward",
            "Copy path",
            "Open in $EDITOR",
            "Open in $PAGER",
            "Checks",
            "Managers",
            "Theme",
        } <= titles
        await pilot.press("escape")
        assert app.screen is task_screen


def _all(node):  # type: ignore[no-untyped-def]
    out = [node]
    for child in node.children:
        out.extend(_all(child))
    return out


def _leaves(node):  # type: ignore[no-untyped-def]
    return [n for n in _all(node) if not n.children]


def _expand_to(node) -> None:  # type: ignore[no-untyped-def]
    parent = node.parent
    while parent is not None:
        parent.expand()
        parent = parent.parent


async def test_catalog_sort_and_filter_are_reactive(demo_root: Path) -> None:
    """Setting the sort or the filter (from a key, a click or code) rebuilds the rows through one watcher."""
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        screen.sort = CatalogSort(SORTS.index(("status", "status")))
        statuses = [r.status for r in screen.table.rows if isinstance(r, CatalogRow)]
        assert statuses != [] and "sort: status" in plain(screen.query_one("#catalog-summary"))
        assert all(rows == sorted(rows) for rows in _by_group(screen)), "rows within a group follow the status order"
        screen.filter_text = "no such task anywhere"
        assert [r for r in screen.table.rows if isinstance(r, CatalogRow)] == []
        assert screen.shown_filter == "no such task anywhere"
        await pilot.press("S")
        assert screen.sort == CatalogSort(SORTS.index(("status", "status")), reverse=True)
        assert screen.sort.by(screen.sort.index) == CatalogSort(screen.sort.index)


def _by_group(screen: CatalogScreen) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for row in screen.table.rows:
        if isinstance(row, CatalogRow):
            groups.setdefault(row.group, []).append(row.status)
    return list(groups.values())


async def test_a_manager_task_shows_its_children_live_and_marks_a_stale_snapshot(
    fresh_many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each child task as its project says it is now, beside the manager's snapshot; billing's snapshot disagrees
    with billing's store, so it is marked stale with the command that refreshes it. Nothing is written."""
    from okstra_core.demo.projects import HOME_DIR

    home = fresh_many / HOME_DIR
    monkeypatch.setenv("OKSTRA_HOME", str(home))
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    app = make_app(fresh_many / "shop")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "m", ManagersScreen)
        tree = screen.query_one("#mgr-tree", Tree)
        await wait_until(pilot, lambda: any(isinstance(n.data, TaskNode) for n in _all(tree.root)), "the tasks")
        tree.move_cursor(next(n for n in _all(tree.root) if isinstance(n.data, TaskNode)))

        def text() -> str:
            return " ".join(plain(s) for s in screen.query_one("#mgr-body").query(Static))

        await wait_until(pilot, lambda: "Now, as each child's project says" in text(), "the live children")
        shown = text()
        assert "stale" in shown and "agrees" in shown
        assert "billing: the snapshot says currentStatus" in shown
        assert "okstra manager task sync --manager platform" in shown
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before


async def test_a_child_task_changed_in_its_project_is_shown_live(
    fresh_many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The details of a manager task read the child projects' stores: a child's manifest rewritten in place there
    (no folder of it changed) shows in the details without leaving them."""
    from okstra_core.demo.projects import HOME_DIR
    from okstra_core.workflows.manager_live import live_task

    monkeypatch.setenv("OKSTRA_HOME", str(fresh_many / HOME_DIR))
    app = make_app(fresh_many / "shop")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "m", ManagersScreen)
        tree = screen.query_one("#mgr-tree", Tree)
        await wait_until(pilot, lambda: any(isinstance(n.data, TaskNode) for n in _all(tree.root)), "the tasks")
        node = next(n for n in _all(tree.root) if isinstance(n.data, TaskNode))
        tree.move_cursor(node)

        def text() -> str:
            return " ".join(plain(s) for s in screen.query_one("#mgr-body").query(Static))

        await wait_until(pilot, lambda: "Now, as each child's project says" in text(), "the live children")
        assert isinstance(node.data, TaskNode)
        child = next(c for c in live_task(node.data.manager, node.data.task).children if c.project_root)
        assert child.project_root is not None and child.task_key is not None
        found = Project(child.project_root).find_task(child.task_key)
        assert found is not None
        manifest = layout.task_manifest_path(found.root)
        value = json.loads(manifest.read_text(encoding="utf-8"))
        value["currentStatus"] = "paused-for-review"
        with open(manifest, "r+", encoding="utf-8") as f:
            f.write(json.dumps(value, indent=2) + "\n")
            f.truncate()
        os.utime(manifest)
        await wait_until(pilot, lambda: "paused-for-review" in text(), "the child's new status in the details")
