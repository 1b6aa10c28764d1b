"""The Checks view says what ``okstra check`` warns about its cache: entries that failed their MAC."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from okstra_core.check import cache
from okstra_core.commands.check import main_check
from okstra_tui.screenshots import settle

from .conftest import SIZE, make_app, plain


async def test_entries_signed_with_another_key_are_said_in_the_summary(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cache, "RACY_SECONDS", 0.0)
    monkeypatch.setenv("OKSTRA_HOME", str(fresh_demo / ".okstra-home"))
    monkeypatch.setenv(cache.KEY_ENV, "the key of another run")
    assert main_check([str(fresh_demo), "--quiet"]) == 0  # fills the cache the view reads, under that key
    capsys.readouterr()
    monkeypatch.setenv(cache.KEY_ENV, "this run's key")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("x")
        await settle(pilot)
        summary = plain(app.screen.query_one("#checks-summary", Static))
        assert "cache entries failed the integrity check" in summary and "checked afresh" in summary, summary
        first_line = summary.splitlines()[0]
        await pilot.press("R")  # the view's own check signed them again: nothing more to say
        await settle(pilot)
        assert plain(app.screen.query_one("#checks-summary", Static)).strip() == first_line.strip()
