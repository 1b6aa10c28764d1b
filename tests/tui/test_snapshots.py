"""pytest-textual-snapshot: each view and wizard step of the demo at 120x40 and at 80x24 (most terminals' default).

The scenes are the ones ``make screenshots`` uses. Update with
``pytest tests/tui/test_snapshots.py --snapshot-update`` after a deliberate change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.demo.projects import HOME_DIR, SHOP_DIR
from okstra_tui.screenshots import PROJECTS_SCENES, SCENES, SIZE, SMALL_SIZE, WRITING_SCENES

from .conftest import make_app


@pytest.mark.parametrize("view", list(SCENES))
def test_view_snapshot(view: str, demo_root: Path, demo_home: Path, snap_compare: Any) -> None:
    assert snap_compare(make_app(demo_root), terminal_size=SIZE, run_before=SCENES[view])


@pytest.mark.parametrize("view", list(SCENES))
def test_view_snapshot_80x24(view: str, demo_root: Path, demo_home: Path, snap_compare: Any) -> None:
    assert snap_compare(make_app(demo_root), terminal_size=SMALL_SIZE, run_before=SCENES[view])


@pytest.mark.parametrize("size", [SIZE, SMALL_SIZE], ids=["120x40", "80x24"])
@pytest.mark.parametrize("view", list(WRITING_SCENES))
def test_written_step_snapshot(
    view: str, size: tuple[int, int], fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, snap_compare: Any
) -> None:
    """The step after a successful write: the file written and the check of the task (on a copy of the demo)."""
    monkeypatch.setenv("OKSTRA_HOME", str(layout.demo_home(fresh_demo)))
    assert snap_compare(make_app(fresh_demo), terminal_size=size, run_before=WRITING_SCENES[view])


@pytest.mark.parametrize("size", [SIZE, SMALL_SIZE], ids=["120x40", "80x24"])
def test_chosen_option_snapshot_without_colour(
    size: tuple[int, int], demo_root: Path, demo_home: Path, monkeypatch: pytest.MonkeyPatch, snap_compare: Any
) -> None:
    """With NO_COLOR the chosen direction still reads: "(•)" against "( )", "(•) … chosen" on its card."""
    monkeypatch.setenv("NO_COLOR", "1")
    assert snap_compare(make_app(demo_root), terminal_size=size, run_before=SCENES["wizard-direction-chosen"])


@pytest.mark.parametrize("size", [SIZE, SMALL_SIZE], ids=["120x40", "80x24"])
@pytest.mark.parametrize("view", list(PROJECTS_SCENES))
def test_projects_demo_snapshot(
    view: str, size: tuple[int, int], many_root: Path, monkeypatch: pytest.MonkeyPatch, snap_compare: Any
) -> None:
    """The demo of three projects, opened on its shop with its manager home (read-only use)."""
    monkeypatch.setenv("OKSTRA_HOME", str(many_root / HOME_DIR))
    assert snap_compare(make_app(many_root / SHOP_DIR), terminal_size=size, run_before=PROJECTS_SCENES[view])
