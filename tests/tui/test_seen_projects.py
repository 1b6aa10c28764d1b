"""What was seen is kept per project: switching projects in one workbench never mixes their seen states."""

from __future__ import annotations

import json
import os
from pathlib import Path

from textual.pilot import Pilot

from okstra_core import layout
from okstra_core.demo.projects import BILLING_DIR, HOME_DIR, SHOP_DIR
from okstra_core.store import Project
from okstra_tui.app import OkstraApp
from okstra_tui.data import seen
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screenshots import settle

from .conftest import SIZE, wait_until

SHOP_TASK = "payments/refund-ledger"


def task_keys(root: Path) -> set[str]:
    return {seen.task_key(root, p.parent) for p in layout.tasks_dir(root).glob("*/*/task-manifest.json")}


def touch_manifest(root: Path, task: str) -> None:
    """Another process's write: the task's manifest rewritten, published by a rename."""
    path = layout.tasks_dir(root) / task / "task-manifest.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    value["latestRunStatus"] = "error"
    path.with_suffix(".new").write_text(json.dumps(value), encoding="utf-8")
    os.replace(path.with_suffix(".new"), path)


async def catalog_of(app: OkstraApp, pilot: Pilot[None], root: Path) -> CatalogScreen:
    """The catalog of the project at *root*, once it is on top and has read what was seen there."""
    await wait_until(pilot, lambda: isinstance(app.screen, CatalogScreen) and app.project.root == root, "catalog")
    screen = app.screen
    assert isinstance(screen, CatalogScreen)
    await wait_until(pilot, lambda: screen.unread is not None, "its seen state read")
    return screen


async def test_each_project_keeps_its_own_seen_state_across_switches(fresh_many: Path) -> None:
    shop, billing = fresh_many / SHOP_DIR, fresh_many / BILLING_DIR
    app = OkstraApp(Project(shop), okstra_home=fresh_many / HOME_DIR)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await catalog_of(app, pilot, shop)  # the first launch: everything in shop is taken as seen
        touch_manifest(shop, SHOP_TASK)
        app.open_project(billing)
        on_billing = await catalog_of(app, pilot, billing)
        assert on_billing.unread == set(), "billing's first launch; shop's change is not billing's"
        assert app.looks.seen is not None and app.looks.seen.project == billing
        # Marking billing read and switching at once: the marks land in billing's state, never in shop's.
        on_billing.action_mark_all_read()
        app.open_project(shop)
        on_shop = await catalog_of(app, pilot, shop)
        assert on_shop.data is not None and on_shop.unread is not None
        (changed,) = [row for row in on_shop.data.rows if row.ident in on_shop.unread]
        assert seen.task_key(shop, changed.root) == SHOP_TASK
        await wait_until(pilot, lambda: not any(w.is_running for w in app.workers), "the marks written")
    assert set(seen.load(shop).marks) == task_keys(shop)
    assert set(seen.load(billing).marks) == task_keys(billing)
