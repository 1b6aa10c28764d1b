"""Live refresh: files written by another process appear without losing the user's place."""

from __future__ import annotations

import asyncio
from pathlib import Path

from okstra_tui.data.preview import PreviewTarget
from okstra_tui.navigation import Location, View
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.runs import RunsScreen

from .conftest import SIZE, make_app, settle


async def _eventually(pilot, predicate, limit: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    waited = 0.0
    while not predicate():
        if waited > limit:
            return False
        await pilot.pause(0.25)
        waited += 0.25
    return True


def _paths(screen: RunsScreen) -> set[Path]:
    out = set()
    stack = [screen.run_tree.root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if isinstance(node.data, PreviewTarget):
            out.add(node.data.path)
    return out


async def test_new_artifact_appears_and_cursor_stays(fresh_demo: Path) -> None:
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        manifest = sorted(fresh_demo.glob(".okstra/tasks/*/*/runs/analysis/manifests/run-manifest-*.json"))[0]
        task_root = manifest.parents[3]
        app.navigate(Location(View.RUNS, task_root, manifest.parents[1], artifact=manifest))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        assert screen.run_tree.cursor_node is not None and screen.run_tree.cursor_node.data.path == manifest
        status_dir = manifest.parents[1] / "status"
        status_dir.mkdir(exist_ok=True)
        new = status_dir / "final-analysis-900.status"
        await asyncio.sleep(0.05)
        new.write_text("completed\n", encoding="utf-8")
        assert await _eventually(pilot, lambda: new in _paths(screen)), "the new file never showed"
        await settle(pilot)

        def on_manifest() -> bool:
            node = screen.run_tree.cursor_node
            return node is not None and isinstance(node.data, PreviewTarget) and node.data.path == manifest

        # The rebuilt tree restores the cursor after its next refresh; the user's place must come back.
        assert await _eventually(pilot, on_manifest, limit=5.0), (
            f"cursor left the manifest: {screen.run_tree.cursor_node}"
        )


async def test_catalog_follows_a_rewritten_catalog(fresh_demo: Path) -> None:
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        await pilot.press("L")
        latest = screen.table.current_row.ident
        before = len(screen.data.rows)
        # Another process removes the discovery catalog: its tasks stay visible as folders not in the catalog.
        (fresh_demo / ".okstra" / "discovery" / "task-catalog.json").unlink()
        assert await _eventually(
            pilot, lambda: screen.data is not None and all(not r.catalogued for r in screen.data.rows)
        )
        assert len(screen.data.rows) == before
        await settle(pilot)
        assert await _eventually(pilot, lambda: bool(screen.query("ErrorPanel")), limit=5.0), (
            "the missing catalog shows inline"
        )
        del latest
