"""Since you last looked: tasks that changed since the person opened them are marked in the catalog."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from okstra_tui.data import seen
from okstra_tui.data.catalog import CatalogRow
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.task import TaskScreen
from okstra_tui.screenshots import settle

from .conftest import SIZE, make_app, plain, wait_until

REFUND = "payments/refund-ledger"
INDEX = "search/index-rebuild"


def _rewrite_manifest(root: Path, task: str) -> None:
    """Another process (an agent) records a failed run in *task*'s manifest."""
    path = root / ".okstra/tasks" / task / "task-manifest.json"
    code = (
        "import json, os, sys\n"
        "p = sys.argv[1]\n"
        "v = json.load(open(p, encoding='utf-8'))\n"
        "v['latestRunStatus'] = 'error'\n"
        "open(p + '.new', 'w', encoding='utf-8').write(json.dumps(v))\n"
        "os.replace(p + '.new', p)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)


def _catalog(app: object) -> CatalogScreen:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, CatalogScreen), screen
    return screen


def _row_index(screen: CatalogScreen, ident: str) -> int:
    return next(i for i, r in enumerate(screen.table.rows) if isinstance(r, CatalogRow) and r.ident == ident)


async def test_first_launch_has_nothing_unread_and_an_external_write_marks_its_task(fresh_demo: Path) -> None:
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _catalog(app)
        await wait_until(pilot, lambda: screen.unread is not None, "the seen state read")
        assert screen.unread == set()
        assert "changed since you last looked" not in plain(screen.query_one("#catalog-summary"))
        assert seen.state_path(fresh_demo).is_file()  # the first launch took everything as seen
        manifest = str(fresh_demo / ".okstra/tasks" / REFUND / "task-manifest.json")
        await wait_until(pilot, lambda: manifest in screen.depends_on, "the row's manifest read")
        _rewrite_manifest(fresh_demo, REFUND)  # the catalog read its manifest: it reads again
        await wait_until(pilot, lambda: screen.unread == {REFUND}, "the changed task marked")
        assert "• 1 changed since you last looked (u)" in screen.query_one("#catalog-summary").content.plain
        index = _row_index(screen, REFUND)
        assert screen._cells(screen.table.rows[index])[2].plain == "•"
        await pilot.press("u")
        assert screen.table.cursor == index
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TaskScreen)
        assert screen.unread == set()
    # Read stays read in the next workbench.
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _catalog(app)
        await wait_until(pilot, lambda: screen.unread is not None, "the seen state read")
        assert screen.unread == set()


async def test_changes_while_away_are_unread_and_shift_u_marks_all_read(fresh_demo: Path) -> None:
    roots = sorted(p.parent for p in (fresh_demo / ".okstra/tasks").glob("*/*/task-manifest.json"))
    seen.mark_seen(fresh_demo, seen.signatures(fresh_demo, roots), replace_all=True)
    _rewrite_manifest(fresh_demo, REFUND)
    _rewrite_manifest(fresh_demo, INDEX)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _catalog(app)
        await wait_until(pilot, lambda: screen.unread == {REFUND, INDEX}, "two changed tasks")
        await pilot.press("U")
        assert screen.unread == set()
        await settle(pilot)
    assert seen.load(fresh_demo).unread(seen.signatures(fresh_demo, roots)) == set()


async def test_a_corrupt_state_file_is_replaced_with_a_warning(fresh_demo: Path) -> None:
    path = seen.state_path(fresh_demo)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00not json")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _catalog(app)
        await wait_until(pilot, lambda: screen.unread is not None, "the seen state read")
        assert screen.unread == set()
        messages = [n.message for n in app._notifications]
        assert f"{path}: not valid JSON; it will be replaced" in messages
    assert json.loads(path.read_bytes())["version"] == seen.SEEN_VERSION


RETRY = "payments/retry-policy"


async def test_inside_a_changed_task_the_new_runs_and_artifacts_are_marked_until_opened(fresh_demo: Path) -> None:
    import datetime as dt
    import os

    from textual.widgets import Tree

    from okstra_tui.screens.runs import RunsScreen
    from okstra_tui.widgets.virtual_table import VirtualTable

    task = fresh_demo / ".okstra/tasks" / RETRY
    roots = sorted(p.parent for p in (fresh_demo / ".okstra/tasks").glob("*/*/task-manifest.json"))
    looked = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)
    seen.mark_seen(fresh_demo, seen.signatures(fresh_demo, roots), now=looked, replace_all=True)
    # Since then an agent wrote a new planning report (its file, its folder) and recorded it in the manifest.
    later = (looked + dt.timedelta(minutes=1)).timestamp()
    reports = task / "runs/implementation-planning/reports"
    report = sorted(reports.glob("final-report-*.data.json"))[0]
    for path in (report, reports):
        os.utime(path, (later, later))
    _rewrite_manifest(fresh_demo, RETRY)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _catalog(app)
        await wait_until(pilot, lambda: screen.unread == {RETRY}, "the changed task marked")
        screen.table.cursor = _row_index(screen, RETRY)
        await pilot.press("enter")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, TaskScreen)
        timeline = view.query_one("#task-timeline", VirtualTable)
        kinds = [str(row.cells[1]) for row in timeline.rows]
        fresh = [k for k in kinds if k.startswith("• ")]
        assert fresh and set(fresh) == {"• implementation-planning"}, kinds
        assert "analysis" in kinds, "the analysis runs are not new"
        assert f"• {len(fresh)} new" in str(timeline.border_subtitle), "the title counts the marked rows"
        timeline.cursor = next(
            i for i, row in enumerate(timeline.rows) if str(row.cells[1]) == "• implementation-planning"
        )
        await pilot.press("enter")
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        tree = runs.query_one("#runs-tree", Tree)
        leaves = [n for n in _nodes(tree.root) if str(n.label).startswith("• ")]
        assert [str(n.label) for n in leaves] == [f"• {report.name}"], "the new report is marked, its folder open"
        tree.move_cursor(leaves[0])
        await settle(pilot)
        assert str(leaves[0].label) == report.name, "seen once previewed"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is view
        assert not any(str(row.cells[1]).startswith("• ") for row in timeline.rows), "opened: no longer new"


def _nodes(node: object) -> list[object]:
    out = []
    for child in node.children:  # type: ignore[attr-defined]
        out.append(child)
        out.extend(_nodes(child))
    return out


async def test_a_fifo_at_the_state_path_is_named_once_and_q_still_quits(fresh_demo: Path) -> None:
    """Reading the state never waits on a FIFO: the catalog says so in one line, and the workbench ends."""
    import contextlib
    import os
    import threading

    from okstra_tui.app import OkstraApp

    path = seen.state_path(fresh_demo)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)

    done = threading.Event()

    def unblock() -> None:  # should readers wait on the FIFO after all, let them go (the test then fails)
        if done.wait(60.0):
            return
        while not done.wait(0.5):
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    threading.Thread(target=unblock, daemon=True).start()
    line = f"{path}: is a FIFO, not a regular file; nothing is remembered as seen until it is removed"
    try:
        app = make_app(fresh_demo)
        async with app.run_test(size=SIZE) as pilot:
            screen = _catalog(app)
            await wait_until(pilot, lambda: screen.unread is not None, "the seen state read")
            assert [n.message for n in app._notifications].count(line) == 1
            await pilot.press("q")
            await wait_until(pilot, lambda: not app.is_running, "the workbench ended")
    finally:
        done.set()
    assert isinstance(app, OkstraApp) and app.return_code in (0, None)
