"""The Checks view shows the checker's progress while its worker runs, then the findings."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import ProgressBar, Static, Tree

from okstra_tui.screens import checks
from okstra_tui.screens.checks import ChecksScreen
from okstra_tui.screenshots import settle
from okstra_tui.widgets.error_panel import ErrorPanel

from .conftest import SIZE, WAIT_SECONDS, make_app, plain, wait_until


async def _open_checks(pilot: Pilot[None]) -> ChecksScreen:
    """The Checks view, opened with its key."""
    await pilot.pause()
    await pilot.press("x")
    screen = pilot.app.screen
    assert isinstance(screen, ChecksScreen)
    return screen


async def test_checks_view_shows_progress_while_checking(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    seen: list[tuple[int, int]] = []
    real = checks.run_checker

    def gated(root: Path, home: Path, progress: Any = None) -> Any:
        def forward(done: int, total: int) -> None:
            seen.append((done, total))
            progress(done, total)
            if done == total:
                release.wait(WAIT_SECONDS)  # hold the worker at 100% until the test has looked

        return real(root, home, forward)

    monkeypatch.setattr(checks, "run_checker", gated)
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_checks(pilot)
        bar = screen.query_one("#checks-progress", ProgressBar)
        await wait_until(
            pilot,
            lambda: seen and seen[-1][0] == seen[-1][1] and bar.progress == seen[-1][1],
            "the bar shows the checker at 100%",
        )
        total = seen[-1][1]
        assert total >= 8 and bar.total == total and bar.progress == total and bar.display
        assert f"{total:,} of {total:,} tasks checked" in plain(screen.query_one("#checks-summary", Static))
        release.set()
        await settle(pilot)
        assert not bar.display, "the bar goes once the findings are shown"
        assert "tasks checked" not in plain(screen.query_one("#checks-summary", Static))
        assert screen.query_one("#checks-tree", Tree).root.children


async def test_checks_view_uses_the_check_cache(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from okstra_core import layout
    from okstra_core.check import cache

    monkeypatch.setattr(cache, "RACY_SECONDS", 0.0)
    monkeypatch.setenv("OKSTRA_HOME", str(fresh_demo / ".okstra-home"))
    store = cache.CheckCache(layout.okstra_cache_dir())
    used: list[cache.CheckCache] = []

    class Spy(cache.CheckCache):
        def __init__(self, directory: Path) -> None:
            super().__init__(directory)
            used.append(self)

    monkeypatch.setattr(cache, "CheckCache", Spy)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("x")
        await settle(pilot)
        stored = store.load(str(fresh_demo), str(fresh_demo / ".okstra-home"))
        assert len(stored) >= 8, "the view's check filled the same cache `okstra check` reads"
        assert len(used) == 1 and used[0].directory == store.directory
        assert (used[0].hits, used[0].misses) == (0, len(stored)), "a first check checks every task"
        first = plain(app.screen.query_one("#checks-summary", Static))
        await pilot.press("R")
        await settle(pilot)
        assert plain(app.screen.query_one("#checks-summary", Static)) == first
        # Nothing changed: the re-check reused every task's findings from the cache.
        assert len(used) == 2
        assert (used[1].hits, used[1].misses) == (len(stored), 0)


async def test_checks_view_applies_and_names_the_settings_file(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OKSTRA_HOME", str(fresh_demo / ".okstra-home"))
    (fresh_demo / "okstra.toml").write_text('[check]\nselect = ["OKS017"]\n', encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("x")
        await settle(pilot)
        summary = plain(app.screen.query_one("#checks-summary", Static)).strip()
        assert summary.startswith("0 errors, 3 warnings, 0 infos in 3 files") and summary.endswith(
            " · settings: okstra.toml"
        )
        (fresh_demo / "okstra.toml").write_text("[check]\nselect = 17\n", encoding="utf-8")
        await pilot.press("R")
        await settle(pilot)
        panel = app.screen.query_one(ErrorPanel)
        assert "okstra.toml: check.select: expected a list of rule ids or prefixes" in plain(panel)


@pytest.mark.parametrize("mode", ["events", "poll"])
async def test_the_findings_follow_the_store_and_the_cursor_stays(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A file broken in the store shows as a finding with nothing pressed, mended it goes, and the cursor stays on
    the line it was on: told by the store's file events, or, where the store is polled, at the view's next
    reading of its own."""
    from okstra_core import layout
    from okstra_tui.screens import base

    monkeypatch.setenv("OKSTRA_HOME", str(layout.demo_home(fresh_demo)))
    monkeypatch.setenv("OKSTRA_WATCH", mode)
    monkeypatch.setattr(base, "WHOLE_STORE_POLL_SECONDS", 0.5)
    monkeypatch.setattr(base, "WHOLE_STORE_POLL_SHARE", 1.0)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_checks(pilot)
        tree = screen.findings_tree
        await wait_until(pilot, lambda: screen.reads == 1, "the first check's findings")
        files = [node.data for node in tree.root.children]

        def shown() -> list[str | None]:
            return [node.data for node in tree.root.children]

        # A task's timeline: read by no view but the check (where the store is polled, nothing looks at it).
        report = sorted(layout.tasks_dir(fresh_demo).rglob("history/timeline.json"))[0]
        rel = layout.rel(report, fresh_demo)
        assert rel not in files
        tree.move_cursor(tree.root.children[-1])
        await settle(pilot)
        under = tree.cursor_node.data if tree.cursor_node is not None else None
        assert under is not None
        kept = report.read_bytes()
        report.write_text("{ not json", encoding="utf-8")
        await wait_until(pilot, lambda: rel in shown(), f"{rel} among the findings")
        assert tree.cursor_node is not None and tree.cursor_node.data == under
        report.write_bytes(kept)
        await wait_until(pilot, lambda: rel not in shown(), f"{rel} no longer among the findings")
        assert shown() == files
        assert tree.cursor_node is not None and tree.cursor_node.data == under


async def test_new_findings_keep_the_cursor_on_its_file_before_any_frame(demo_root: Path) -> None:
    """A file with findings that sorts before the one under the cursor: the cursor is on its file at once, not on
    the line it had (a frame drawn between the two would show it on another file)."""
    from okstra_core.check.findings import CheckReport, Finding

    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_checks(pilot)
        await wait_until(pilot, lambda: screen.reads == 1, "the first check's findings")
        tree = screen.findings_tree
        files = [node.data for node in tree.root.children]
        assert len(files) >= 2, "the demo has findings in at least two files"
        tree.move_cursor(tree.root.children[-1])
        await settle(pilot)
        under = files[-1]
        assert under is not None
        earlier = Finding("OKS001", "error", under[:-1], "a file that sorts just before the one under the cursor")
        findings = sorted([*_shown_findings(screen), earlier], key=Finding.sort_key)
        screen._show((CheckReport(str(demo_root), findings, len(files) + 1), None))
        assert [node.data for node in tree.root.children] == sorted([*files, under[:-1]])
        on_line = tree.get_node_at_line(tree.cursor_line)  # what the next frame draws under the cursor
        assert on_line is not None and on_line.data == under


def _shown_findings(screen: ChecksScreen) -> list[Any]:
    """The findings the view shows, as the checker gave them."""
    from okstra_core.check.findings import Finding

    tree = screen.findings_tree
    return [
        Finding("OKS001", "warning", node.data, str(leaf.label))
        for node in tree.root.children
        if node.data is not None
        for leaf in node.children
    ]


async def test_a_check_that_ends_after_a_later_one_is_not_shown(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store changed while a check ran, so another started; the first ends last: its findings, older than
    the second's, are dropped."""
    release = threading.Event()
    calls: list[int] = []
    real = checks.run_checker

    def slow_first(root: Path, home: Path, progress: Any = None) -> Any:
        calls.append(len(calls))
        if len(calls) == 1:
            release.wait(WAIT_SECONDS)
            return "the check could not run: the first check, ended last"
        return real(root, home, progress)

    monkeypatch.setattr(checks, "run_checker", slow_first)
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_checks(pilot)
        await wait_until(pilot, lambda: len(calls) == 1, "the first check under way")
        await pilot.press("R")
        await wait_until(pilot, lambda: screen.reads == 1, "the second check's findings shown")
        release.set()
        await wait_until(pilot, lambda: not any(w.is_running for w in screen.workers), "the first check ended")
        await settle(pilot)
        assert not screen.query(ErrorPanel), "the first check's outcome replaced the later one's"
        assert screen.findings_tree.root.children
