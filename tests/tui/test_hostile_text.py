"""Store text never reaches the terminal raw: the byte stream the app writes holds no hostile control.

The app is driven with Pilot while a driver records every string it would send
to the terminal (the frames themselves, not the rendered screen).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from textual.drivers import headless_driver
from textual.widgets import Tree

from okstra_tui.data.preview import PreviewTarget
from okstra_tui.navigation import Location, View
from okstra_tui.screens.managers import ManagerNode
from okstra_tui.screenshots import settle

from .conftest import SIZE, make_app

TASK = ".okstra/tasks/payments/refund-ledger"
REPORT = f"{TASK}/runs/analysis/reports/final-report-analysis-001.data.json"
# Each payload ends in a distinct tag, so a leak is attributed to its source.
CLIP = "\x1b]52;c;SE9TVElMRQ==\x07"
TITLE = "\x1b]0;PWNED\x07"
WIPE = "\x1b[2J"
C1 = "\x9b31m"
LOG = "lead-execution-prompt-analysis-001.log"


def payload(tag: str) -> str:
    return f"{tag}:{CLIP}{TITLE}{WIPE}{C1}"


class RecordingDriver(headless_driver.HeadlessDriver):
    """A headless driver that says it is not headless, so the app writes its frames; it records them."""

    written: ClassVar[list[str]] = []

    @property
    def is_headless(self) -> bool:
        return False

    def write(self, data: str) -> None:
        RecordingDriver.written.append(data)


def _edit(path: Path, change: Any) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


@pytest.fixture
def hostile(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = fresh_demo
    _edit(root / TASK / "task-manifest.json", lambda v: v.update(title=payload("task-title")))

    def report(v: dict[str, Any]) -> None:
        v["title"] = payload("report-title")
        v["summary"] = payload("report-summary") + "\n<script>alert(1)</script>"
        v["analysisFindings"][0]["detail"] = payload("finding-detail")

    _edit(root / REPORT, report)
    log = root / TASK / "runs/analysis/prompts" / LOG
    log.write_text("ok\n" + payload("log-tail") + "\n", encoding="utf-8")
    home = root / ".okstra-home"
    for manager in (home / "managers").iterdir():
        _edit(manager / "manager.json", lambda v: v.update(title=payload("manager-title")))
    # A file name the Checks view lists (an unrecognised artifact).
    bad = os.path.join(os.fsencode(root / TASK / "runs/analysis/reports"), ("name" + CLIP + WIPE + ".txt").encode())
    with open(bad, "wb") as fh:
        fh.write(b"x\n")
    monkeypatch.setenv("OKSTRA_HOME", str(home))
    RecordingDriver.written = []
    monkeypatch.setattr(headless_driver, "HeadlessDriver", RecordingDriver)
    return root


def _leaves(node: Any) -> list[Any]:
    out = [node]
    for child in node.children:
        out.extend(_leaves(child))
    return out


async def test_store_text_reaches_the_terminal_only_as_visible_text(hostile: Path) -> None:
    app = make_app(hostile)
    task_root = hostile / TASK
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.navigate(Location(View.TASK, task_root))
        await settle(pilot)
        app.navigate(Location(View.RUNS, task_root))
        await settle(pilot)
        tree: Tree[Any] = app.screen.query_one(Tree)
        log_node = next(
            (n for n in _leaves(tree.root) if isinstance(n.data, PreviewTarget) and n.data.path.name == LOG), None
        )
        assert log_node is not None, f"the runs tree lists {LOG}"
        parent = log_node.parent
        while parent is not None:
            parent.expand()
            parent = parent.parent
        await pilot.pause()
        tree.move_cursor(log_node)
        await settle(pilot)
        app.navigate(Location(View.REPORTS, task_root))
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        mtree: Tree[Any] = app.screen.query_one(Tree)
        manager = next((n for n in _leaves(mtree.root) if isinstance(n.data, ManagerNode)), None)
        assert manager is not None, "the managers tree lists the manager"
        mtree.move_cursor(manager)
        await settle(pilot)
    stream = "".join(RecordingDriver.written)
    assert stream, "the driver recorded the frames"
    for raw in ("\x9b", "\x1b]52;", "\x1b]0;PWNED", "==\x07", "PWNED\x07", "\x1b[2J", "name\x1b"):
        where = stream.find(raw)
        assert where < 0, (raw, stream[max(0, where - 40) : where + 40])
    # What was shown is visible text, so each source did reach the screen.
    screen_text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", stream)
    for tag in ("task-title", "log-tail", "report-title", "finding-detail", "manager-title", "name"):
        assert f"{tag}:␛]52;c;SE9TVElMRQ" in screen_text or f"{tag}␛]52;c;SE9TVElMRQ" in screen_text, tag


async def test_huge_integers_show_as_error_panels(fresh_demo: Path) -> None:
    from okstra_core import layout
    from okstra_tui.widgets.error_panel import ErrorPanel

    huge = "7" * 5000
    catalog = layout.task_catalog_path(fresh_demo)
    catalog.write_text(catalog.read_text(encoding="utf-8").replace("{", '{"big": ' + huge + ",", 1), encoding="utf-8")
    team_state = next(fresh_demo.glob(f"{TASK}/runs/analysis/state/team-state-*.json"))
    team_state.write_text('{"n": ' + huge + "}\n", encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        panels = [str(p.render()) for p in app.screen.query(ErrorPanel)]
        assert any("too long" in text for text in panels), panels
        app.navigate(Location(View.FILE, fresh_demo / TASK, team_state))
        await settle(pilot)
        panels = [str(p.render()) for p in app.screen.query(ErrorPanel)]
        assert any("too long" in text for text in panels), panels


async def test_a_huge_team_state_preview_is_bounded(fresh_demo: Path) -> None:
    from textual.widgets import DataTable, Static

    from okstra_tui.widgets.preview import PREVIEW_ROWS

    team_state = fresh_demo / TASK / "runs/analysis/state/team-state-analysis-001.json"
    value = json.loads(team_state.read_text(encoding="utf-8"))
    row = value["workerDispatches"][0]
    value["workerDispatches"] = [{**row, "dispatchId": f"d-{i}"} for i in range(25_000)]
    team_state.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.navigate(Location(View.FILE, fresh_demo / TASK, team_state))
        await settle(pilot)
        tables = list(app.screen.query(DataTable))
        assert tables and max(t.row_count for t in tables) == PREVIEW_ROWS
        headings = [str(s.render()) for s in app.screen.query(Static)]
        assert any(f"first {PREVIEW_ROWS:,} of 25,000" in h for h in headings), headings[:5]
        assert any("showing the first" in h and "characters" in h for h in headings)


async def test_an_unlistable_runs_folder_says_so(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = str(fresh_demo / TASK / "runs")
    real = os.listdir

    def listdir(path: Any = ".") -> list[str]:
        if str(path) == runs:
            raise PermissionError(13, "Permission denied", runs)
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.navigate(Location(View.RUNS, fresh_demo / TASK))
        await settle(pilot)
        tree: Tree[Any] = app.screen.query_one(Tree)
        labels = [str(node.label) for node in _leaves(tree.root)]
        assert any("runs/: cannot list folder: Permission denied" in label for label in labels), labels
