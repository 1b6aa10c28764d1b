"""Live refresh: files written by another process appear without losing the user's place."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from okstra_core.watch import UNSETTLED, changed, signature
from okstra_tui.data.catalog import CatalogRow
from okstra_tui.data.preview import PreviewTarget
from okstra_tui.navigation import Location, View
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.runs import RunsScreen
from okstra_tui.screenshots import settle
from okstra_tui.widgets.error_panel import ErrorPanel

from .conftest import SIZE, make_app, plain, wait_until


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
        new.write_text("completed\n", encoding="utf-8")
        await wait_until(pilot, lambda: new in _paths(screen), "the new file shows in the runs tree")

        def on_manifest() -> bool:
            node = screen.run_tree.cursor_node
            return node is not None and isinstance(node.data, PreviewTarget) and node.data.path == manifest

        # The rebuilt tree restores the cursor after its next refresh; the user's place must come back.
        await wait_until(pilot, on_manifest, "the cursor is back on the manifest after the rebuild")


async def test_catalog_follows_a_rewritten_catalog(fresh_demo: Path) -> None:
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        await pilot.press("L")
        assert screen.data is not None
        before = len(screen.data.rows)
        shown: list[int] = []  # how many task rows each rebuild of the table showed
        set_rows = screen.table.set_rows

        def recording(rows: list[object], *args: Any, **kwargs: Any) -> None:
            shown.append(sum(isinstance(row, CatalogRow) for row in rows))
            set_rows(rows, *args, **kwargs)

        screen.table.set_rows = recording  # type: ignore[method-assign]
        # Another process removes the discovery catalog: its tasks stay visible as folders not in the catalog.
        (fresh_demo / ".okstra" / "discovery" / "task-catalog.json").unlink()

        def folders_and_error() -> bool:
            data = screen.data
            return (
                data is not None
                and data.error is not None
                and len(data.rows) == before
                and all(not r.catalogued for r in data.rows)
                and bool(screen.query(ErrorPanel))
            )

        await wait_until(pilot, folders_and_error, "the tasks show as folders, the missing catalog inline")
        assert shown and 0 not in shown, f"the table went empty on the way: {shown}"


def test_a_path_looked_at_within_its_write_tick_is_looked_at_again(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("{}\n", encoding="utf-8")
    written = os.stat(path).st_mtime_ns
    # Looked at within the tick of its write: a second write in that tick could keep mtime and size.
    first = signature([path], clock=lambda: written + 1_000_000)
    assert first[str(path)] == UNSETTLED
    later = signature([path], clock=lambda: written + 10_000_000_000)
    assert changed(first, later), "the next poll reloads once more"
    assert not changed(later, signature([path], clock=lambda: written + 20_000_000_000))


def test_whole_second_timestamps_are_looked_at_again_within_two_seconds(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("{}\n", encoding="utf-8")
    second = 1_800_000_000 * 1_000_000_000
    os.utime(path, ns=(second, second))  # as a file system with one-second timestamps records it
    assert signature([path], clock=lambda: second + 1_500_000_000)[str(path)] == UNSETTLED
    assert signature([path], clock=lambda: second + 3_000_000_000)[str(path)] != UNSETTLED


def test_a_file_replaced_by_rename_is_a_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from okstra_core import watch

    def same_ctime(path: Path) -> SimpleNamespace:
        # A rename within one ctime tick (or a file system without ctime) leaves the inode as the only sign.
        st = os.stat(path)
        return SimpleNamespace(st_mtime_ns=st.st_mtime_ns, st_ctime_ns=0, st_size=st.st_size, st_ino=st.st_ino)

    monkeypatch.setattr(watch, "os", SimpleNamespace(stat=same_ctime))
    path = tmp_path / "state.json"
    path.write_text("{}\n", encoding="utf-8")
    stamp = os.stat(path).st_mtime_ns
    first = signature([path], clock=lambda: stamp + 10_000_000_000)
    other = tmp_path / "new.json"
    other.write_text("[]\n", encoding="utf-8")
    os.utime(other, ns=(stamp, stamp))  # same mtime and size (and, as stat is pinned here, ctime): only the inode
    os.replace(other, path)
    assert changed(first, signature([path], clock=lambda: stamp + 10_000_000_000))


async def test_a_change_seen_while_the_app_closes_does_nothing(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.app import ScreenStackError

    from okstra_tui.app import OkstraApp

    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        await wait_until(pilot, lambda: bool(screen.depends_on), "the catalog says what it read")

        def no_screens(self: OkstraApp) -> None:
            raise ScreenStackError("No screens on stack")

        loads: list[None] = []
        monkeypatch.setattr(screen, "load", lambda: loads.append(None))
        screen._went_stale(True, [])
        assert len(loads) == 1, "an ordinary change reads again (the spy sees it)"
        # Closing, the app pops its screens before the change feed stops: a change can come in between.
        monkeypatch.setattr(OkstraApp, "screen", property(no_screens))
        screen._went_stale(True, [])  # no ScreenStackError escapes
        monkeypatch.undo()
        assert len(loads) == 1, "a change while closing reads nothing and starts no worker"


async def test_the_log_report_follows_a_growing_transcript(fresh_demo: Path) -> None:
    """The log report of a run dir is a preview like any other: a transcript appended to in place (as an agent
    writes it) shows in its figures."""
    from textual.widgets import Static

    from okstra_tui.widgets.preview import ArtifactPreview

    log = sorted(fresh_demo.glob(".okstra/tasks/payments/retry-policy/runs/analysis/prompts/*.log"))[0]
    run_dir = log.parents[1]
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.navigate(Location(View.RUNS, run_dir.parents[1], run_dir))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        preview = screen.query_one(ArtifactPreview)

        def figures() -> str:
            return " ".join(plain(s) for s in preview.query(Static))

        node = screen.run_tree.cursor_node
        assert node is not None and isinstance(node.data, PreviewTarget) and node.data.path == run_dir
        node.expand()
        await settle(pilot)
        screen.action_log_report()
        await wait_until(pilot, lambda: "transcriptBytes" in figures(), "the log report is shown")
        before = figures()
        with open(log, "a", encoding="utf-8") as f:
            f.write("x" * 123_457 + "\n")
        await wait_until(pilot, lambda: figures() != before, "the log report counts the appended bytes")
