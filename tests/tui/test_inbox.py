"""The inbox view and the catalog's count of what waits, on the default demo's open decisions."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from okstra_core.cli import main as okstra
from okstra_core.store import Project
from okstra_core.workflows.inbox import pending_decisions
from okstra_tui.screens.catalog import SORTS, CatalogScreen
from okstra_tui.screens.inbox import InboxScreen
from okstra_tui.screenshots import settle
from okstra_tui.widgets.summary_line import SummaryLine
from okstra_tui.widgets.virtual_table import GroupHeader

from .conftest import SIZE, make_app, plain, wait_until


async def open_inbox(pilot: Pilot[None]) -> InboxScreen:
    """``i`` once the app has settled: the inbox, its first reading shown."""
    await settle(pilot)
    await pilot.press("i")
    await settle(pilot)
    inbox = pilot.app.screen
    assert isinstance(inbox, InboxScreen)
    return inbox


async def test_i_opens_the_inbox_grouped_by_task_newest_first(demo_root: Path) -> None:
    decisions = pending_decisions(Project(demo_root))
    kinds = {d.kind for d in decisions}
    assert kinds == {"direction-choice", "planning-prepare", "clarification", "design-prep", "approval"}
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_inbox(pilot)
        table = inbox.query_one("#inbox-table", DataTable)
        keys = [str(table.coordinate_to_cell_key((r, 0)).row_key.value) for r in range(table.row_count)]  # type: ignore[arg-type]
        tasks = [k.removeprefix("task:") for k in keys if k.startswith("task:")]
        # One header per task, in the order of each task's newest decision.
        newest: list[str] = []
        for d in decisions:
            if d.task not in newest:
                newest.append(d.task)
        assert tasks == newest
        items = [inbox.decisions[int(k.removeprefix("item:"))] for k in keys if k.startswith("item:")]
        assert sorted(items, key=lambda d: d.since, reverse=True)[0] == items[0]
        assert len(items) == len(decisions)
        # Each decision sits under its own task's header (the order within a task, where times differ, is
        # test_a_tasks_decisions_are_listed_newest_first's).
        under: dict[str, list[str]] = {}
        header = ""
        for k in keys:
            if k.startswith("task:"):
                header = k.removeprefix("task:")
            else:
                d = inbox.decisions[int(k.removeprefix("item:"))]
                assert d.task == header, (d.task, header)
                under.setdefault(header, []).append(d.since)
        for task, since in under.items():
            assert since == sorted(since, reverse=True), task
        assert "waiting for you" in plain(inbox.query_one("#inbox-summary"))
        # An approval offers no write: Enter says what to do and stays in the inbox.
        row = next(
            i
            for i, k in enumerate(keys)
            if k.startswith("item:") and inbox.decisions[int(k.removeprefix("item:"))].kind == "approval"
        )
        table.move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is inbox
        assert any("lead's session" in str(n.message) for n in app._notifications)


def _inbox_rows(inbox: InboxScreen) -> list[tuple[str, str, str]]:
    """The inbox table top to bottom: (task header, kind, since) per decision row."""
    table = inbox.query_one("#inbox-table", DataTable)
    rows: list[tuple[str, str, str]] = []
    header = ""
    for r in range(table.row_count):
        key = str(table.coordinate_to_cell_key((r, 0)).row_key.value)  # type: ignore[arg-type]
        if key.startswith("task:"):
            header = key.removeprefix("task:")
        else:
            d = inbox.decisions[int(key.removeprefix("item:"))]
            rows.append((header, d.kind, d.since))
    return rows


@pytest.mark.parametrize(
    ("approved_at", "approval_first"), [("2026-11-29T23:59:00Z", True), ("2026-11-01T00:00:00Z", False)]
)
async def test_a_tasks_decisions_are_listed_newest_first(
    fresh_demo: Path, approved_at: str, approval_first: bool
) -> None:
    # A task with two design items open (the plan's time) gets an approval at another recorded time.
    design = [d for d in pending_decisions(Project(fresh_demo)) if d.kind == "design-prep"]
    task = design[0].task
    assert len([d for d in design if d.task == task]) == 2
    manifest_path = Path(design[0].task_root or "") / "task-manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["workflow"]["awaitingApproval"] = True
    manifest["updatedAt"] = approved_at
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    mine = [d for d in pending_decisions(Project(fresh_demo)) if d.task == task]
    assert sorted({d.kind for d in mine}) == ["approval", "design-prep"] and len(mine) == 3
    assert len({d.since for d in mine}) == 2, "the approval's time differs from the design items'"

    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_inbox(pilot)
        listed = [(kind, since) for header, kind, since in _inbox_rows(inbox) if header == task]
    kinds = [kind for kind, _ in listed]
    assert kinds == (["approval", "design-prep", "design-prep"] if approval_first else
                     ["design-prep", "design-prep", "approval"])  # fmt: skip
    assert [since for _, since in listed] == sorted((since for _, since in listed), reverse=True)


async def test_a_decision_made_by_a_verb_leaves_the_open_inbox(fresh_demo: Path) -> None:
    wanted = next(d for d in pending_decisions(Project(fresh_demo)) if d.kind == "planning-prepare")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_inbox(pilot)
        assert any(d.kind == "planning-prepare" for d in inbox.decisions)
        assert okstra(["planning", "prepare", str(fresh_demo), "--task", wanted.task]) == 0
        await wait_until(
            pilot,
            lambda: not any(d.kind == "planning-prepare" for d in inbox.decisions),
            "the inbox refreshes on its own when a decision is made elsewhere",
        )


async def test_the_inbox_says_how_many_files_it_could_not_read(fresh_demo: Path) -> None:
    choice = next(d for d in pending_decisions(Project(fresh_demo)) if d.kind == "direction-choice")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_inbox(pilot)
        assert "could not be read" not in plain(inbox.query_one("#inbox-summary"))
        broken = fresh_demo / "broken.json"
        broken.write_text("{", encoding="utf-8")
        os.replace(broken, fresh_demo / choice.path)  # a new file in reports/: what the live view watches
        await wait_until(
            pilot,
            lambda: "1 file could not be read" in plain(inbox.query_one("#inbox-summary")),
            "the summary counts the unreadable report whose decision left the list",
        )
        assert not any(d.kind == "direction-choice" and d.task == choice.task for d in inbox.decisions)


@pytest.mark.parametrize("in_child", [False, True], ids=["in-process", "child"])
async def test_catalog_counts_marks_sorts_and_filters_what_waits(
    demo_root: Path, in_child: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if in_child:  # as on a large store: the core's inbox counts them in a child process
        monkeypatch.setattr("okstra_tui.data.catalog.INBOX_CHILD_ROWS", 0)
    decisions = pending_decisions(Project(demo_root))
    roots = {str(d.task_root) for d in decisions}
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen)
        await wait_until(pilot, lambda: catalog.waiting is not None, "the catalog has read what waits")
        summary = plain(catalog.query_one("#catalog-summary", SummaryLine))
        assert f"◆ {len(decisions)} waiting for you" in summary
        marked = {
            str(r.root)
            for r in catalog.table.rows
            if not isinstance(r, GroupHeader) and str(catalog._cells(r)[1]) == "◆"  # type: ignore[arg-type]
        }
        assert marked == roots
        # One sort order puts the tasks with a decision first.
        index = next(i for i, (_, key) in enumerate(SORTS) if key == "waiting")
        for _ in range(index):
            await pilot.press("s")
        await settle(pilot)
        groups: list[list[bool]] = []
        for r in catalog.table.rows:
            if isinstance(r, GroupHeader):
                groups.append([])
            else:
                groups[-1].append(str(r.root) in roots)  # type: ignore[attr-defined]
        for flags in groups:
            assert flags == sorted(flags, reverse=True), "within a group, the tasks with a decision come first"
        has = [any(flags) for flags in groups]
        assert has == sorted(has, reverse=True), "groups with a decision waiting come first"
        # The filter word "waiting" keeps exactly the tasks with a decision.
        await pilot.press("slash", *"waiting")
        await settle(pilot)
        rows = [r for r in catalog.table.rows if not isinstance(r, GroupHeader)]
        assert {str(r.root) for r in rows} == roots  # type: ignore[attr-defined]


async def test_the_unreadable_count_stays_when_the_columns_are_refitted(fresh_demo: Path) -> None:
    choice = next(d for d in pending_decisions(Project(fresh_demo)) if d.kind == "direction-choice")
    (fresh_demo / choice.path).write_text("{", encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_inbox(pilot)
        assert inbox.decisions
        assert "1 file could not be read" in plain(inbox.query_one("#inbox-summary"))
        await pilot.resize_terminal(80, 24)  # below NARROW_COLUMNS the "since" column goes: the rows are redrawn
        await settle(pilot)
        assert [str(k.value) for k in inbox.query_one("#inbox-table", DataTable).columns] == [
            "decision",
            "item",
            "summary",
        ]
        assert "1 file could not be read" in plain(inbox.query_one("#inbox-summary"))


async def test_the_shared_project_prefix_in_the_column_title_is_store_text(demo_root: Path) -> None:
    hostile = "[red]evil\x1b]0;PWNED\x07"
    decisions = [
        dataclasses.replace(d, task=f"{hostile}:{d.task.partition(':')[2]}")
        for d in pending_decisions(Project(demo_root))
    ]
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_inbox(pilot)
        inbox._show(decisions)
        table = inbox.query_one("#inbox-table", DataTable)
        for width in (SIZE[0], 80):  # the title set on a new reading, then the one a narrower refit adds
            inbox.fit_width(width)
            label = table.columns[ColumnKey("decision")].label
            assert "[red]evil" in label.plain, "the prefix is shown as text, never read as markup"
            assert not any(ord(ch) < 32 for ch in label.plain), "no control character reaches the terminal"


async def test_the_cursor_stays_on_its_decision_when_the_columns_are_refitted(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_inbox(pilot)
        table = inbox.query_one("#inbox-table", DataTable)
        table.move_cursor(row=table.row_count - 1)  # the last decision, not the first
        await pilot.pause()
        chosen = inbox.selected()
        assert chosen is not None and chosen != inbox.decisions[0]
        await pilot.resize_terminal(80, 24)  # the time column goes: the rows are made again
        await settle(pilot)
        assert len(table.columns) == 3
        assert inbox.selected() == chosen


def _deny_listing(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    """Listing any of *folders* raises PermissionError (root obeys it: no chmod involved)."""
    denied = {str(f) for f in folders}
    real = os.listdir

    def listdir(path: object = ".") -> list[str]:
        if os.fspath(path) in denied:  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", os.fspath(path))  # type: ignore[arg-type]
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", listdir)


async def test_an_unlistable_tasks_folder_is_said_in_the_inbox_and_the_catalog(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from okstra_tui.widgets.error_panel import ErrorPanel

    _deny_listing(monkeypatch, fresh_demo / ".okstra/tasks")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen)
        await wait_until(pilot, lambda: bool(catalog.query(ErrorPanel)), "the catalog names the folder")
        panels = [plain(p) for p in catalog.query(ErrorPanel)]
        assert any(".okstra/tasks" in p and "cannot list folder: Permission denied" in p for p in panels), panels
        inbox = await open_inbox(pilot)
        summary = plain(inbox.query_one("#inbox-summary"))
        assert "1 folder could not be listed (.okstra/tasks/: Permission denied)" in summary, summary
        assert "x runs the checks" in summary


async def test_an_unlistable_runs_folder_is_said_in_the_inbox(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = pending_decisions(Project(fresh_demo))
    runs = fresh_demo / ".okstra/tasks/checkout/saved-cards/runs"
    _deny_listing(monkeypatch, runs)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_inbox(pilot)
        assert len(inbox.decisions) == len(before) - 2, "the two design items under runs/ are not seen"
        summary = plain(inbox.query_one("#inbox-summary"))
        assert "1 folder could not be listed (.okstra/tasks/checkout/saved-cards/runs/: Permission denied)" in summary
        await pilot.resize_terminal(80, 24)  # the rows are redrawn with the narrow columns: the count stays
        await settle(pilot)
        assert "1 folder could not be listed" in plain(inbox.query_one("#inbox-summary"))


async def test_nothing_readable_is_not_nothing_waiting(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from okstra_core import layout

    layout.task_catalog_path(fresh_demo).unlink()
    _deny_listing(monkeypatch, fresh_demo / ".okstra/tasks")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_inbox(pilot)
        summary = plain(inbox.query_one("#inbox-summary"))
        assert inbox.decisions == [] and "Nothing waits for you" not in summary
        assert summary.startswith("Nothing waits in what could be read.") and "1 folder could not be listed" in summary


def _waiting_total(catalog: CatalogScreen) -> int | None:
    return None if catalog.waiting is None else sum(catalog.waiting.values())


async def test_the_catalog_count_follows_decisions_made_elsewhere(fresh_demo: Path, tmp_path: Path) -> None:
    """Whoever makes or opens a decision, the catalog's count and marks agree with the inbox read afresh."""
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        catalog = app.screen
        assert isinstance(catalog, CatalogScreen)

        def agrees() -> bool:
            fresh = pending_decisions(Project(fresh_demo))
            marked = {
                str(r.root)
                for r in catalog.table.rows
                if not isinstance(r, GroupHeader) and r.ident in (catalog.waiting or {})
            }
            return _waiting_total(catalog) == len(fresh) and marked == {str(d.task_root) for d in fresh}

        await wait_until(pilot, agrees, "the catalog has counted what waits")
        before = _waiting_total(catalog)
        # A verb in another process takes a decision away (planning prepare consumes a recorded choice).
        wanted = next(d for d in pending_decisions(Project(fresh_demo)) if d.kind == "planning-prepare")
        assert okstra(["planning", "prepare", str(fresh_demo), "--task", wanted.task]) == 0
        await wait_until(pilot, lambda: _waiting_total(catalog) != before and agrees(), "the count after a verb")
        # An agent opens one: a task's manifest starts awaiting approval (nothing in the catalog changes).
        manifest = next(fresh_demo.glob(".okstra/tasks/payments/*/task-manifest.json"))
        value = json.loads(manifest.read_text(encoding="utf-8"))
        if value["workflow"].get("awaitingApproval"):
            manifest = next(
                m
                for m in fresh_demo.glob(".okstra/tasks/*/*/task-manifest.json")
                if not json.loads(m.read_text(encoding="utf-8"))["workflow"].get("awaitingApproval")
            )
            value = json.loads(manifest.read_text(encoding="utf-8"))
        value["workflow"]["awaitingApproval"] = True
        before = _waiting_total(catalog)
        manifest.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
        await wait_until(pilot, lambda: _waiting_total(catalog) != before and agrees(), "the count after an agent")
        # A user-response sidecar removed by hand opens a direction choice again.
        sidecar = next(fresh_demo.glob(".okstra/tasks/*/*/runs/option-selection/user-responses/*.md"))
        before = _waiting_total(catalog)
        sidecar.unlink()
        await wait_until(pilot, agrees, "the count after a sidecar was removed")
