"""The Checks view shows the checker's progress while its worker runs, then the findings."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import ProgressBar, Static, Tree

from okstra_tui.screens import checks
from okstra_tui.screens.checks import ChecksScreen
from okstra_tui.screenshots import settle
from okstra_tui.widgets.error_panel import ErrorPanel

from .conftest import SIZE, WAIT_SECONDS, make_app, plain, wait_until


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
        await pilot.pause()
        await pilot.press("x")
        screen = app.screen
        assert isinstance(screen, ChecksScreen)
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
