"""The theme picked in one session is the theme of the next; a broken preferences file is one warning."""

from __future__ import annotations

import json
from pathlib import Path

from okstra_core.preferences import load, preferences_path
from okstra_core.store import Project
from okstra_tui.app import OkstraApp
from okstra_tui.screenshots import settle

from .conftest import SIZE, wait_until


def _app(root: Path) -> OkstraApp:
    project = Project.open(root)
    assert isinstance(project, Project)
    return OkstraApp(project, preferences=load())


def _kept_theme() -> object:
    try:
        return json.loads(preferences_path().read_text(encoding="utf-8")).get("theme")
    except FileNotFoundError:
        return None


async def test_the_theme_is_kept_across_restarts(demo_root: Path) -> None:
    first = _app(demo_root)
    async with first.run_test(size=SIZE) as pilot:
        await settle(pilot)
        default = first.theme
        assert _kept_theme() is None  # nothing written until the person picks
        first.theme = "nord" if default != "nord" else "gruvbox"
        picked = first.theme
        await wait_until(pilot, lambda: _kept_theme() == picked, "the picked theme written")
    second = _app(demo_root)
    async with second.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert second.theme == picked
        assert not list(second._notifications)


async def test_a_broken_preferences_file_is_one_warning_and_the_default(demo_root: Path) -> None:
    path = preferences_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", encoding="utf-8")
    app = _app(demo_root)
    default = _app(demo_root).theme  # what an app shows before any preference is applied
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert messages == [f"{path}: is not valid JSON; using the default preferences"]
        assert app.theme == default
        assert path.read_text(encoding="utf-8") == "{not json"  # replaced only when the person picks a theme


async def test_an_unknown_theme_is_one_warning_and_the_default(demo_root: Path) -> None:
    path = preferences_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"version": 1, "theme": "no-such-theme"}', encoding="utf-8")
    app = _app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert messages == [f"{path}: theme 'no-such-theme' is not one of the workbench's; using the default"]
        assert app.theme == _app(demo_root).theme
