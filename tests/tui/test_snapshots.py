"""pytest-textual-snapshot: each view and wizard step of the demo at 120x40 and at 80x24 (most terminals' default).

The scenes are the ones ``make screenshots`` uses. Update with
``pytest tests/tui/test_snapshots.py --snapshot-update`` after a deliberate change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from okstra_tui.screenshots import SCENES, SIZE, SMALL_SIZE

from .conftest import make_app


@pytest.mark.parametrize("view", list(SCENES))
def test_view_snapshot(view: str, demo_root: Path, demo_home: Path, snap_compare: Any) -> None:
    assert snap_compare(make_app(demo_root), terminal_size=SIZE, run_before=SCENES[view])


@pytest.mark.parametrize("view", list(SCENES))
def test_view_snapshot_80x24(view: str, demo_root: Path, demo_home: Path, snap_compare: Any) -> None:
    assert snap_compare(make_app(demo_root), terminal_size=SMALL_SIZE, run_before=SCENES[view])
