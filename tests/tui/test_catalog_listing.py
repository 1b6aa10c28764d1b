"""The catalog's first paint comes from the core's plain listing; the validated catalog confirms or replaces it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.check.engine import run_check
from okstra_core.errors import LoadError
from okstra_core.store import CatalogListing, Project
from okstra_tui.children import run_child
from okstra_tui.data.catalog import (
    CatalogRow,
    FirstListing,
    confirm_catalog,
    fingerprint,
    list_catalog,
    listed_phase_summary,
    load_catalog,
    phase_summary,
    same_catalog,
    uncatalogued_rows,
    waiting_counts,
)
from okstra_tui.screens.catalog import CatalogScreen, first_lines, group_rows
from okstra_tui.screenshots import settle
from okstra_tui.widgets.error_panel import ErrorPanel
from okstra_tui.widgets.summary_line import SummaryLine
from okstra_tui.widgets.virtual_table import GroupHeader

from .conftest import SIZE, make_app


def test_listing_agrees_with_the_validated_catalog(demo_root: Path) -> None:
    project = Project(demo_root)
    quick = list_catalog(project)
    assert quick is not None
    validated = load_catalog(Project(demo_root))
    assert validated.error is None and same_catalog(quick, validated)
    assert [r.ident for r in quick.rows] == [r.ident for r in validated.rows]
    assert sum(r.latest for r in quick.rows) == 1


def test_listing_refuses_a_malformed_entry_with_the_field(fresh_demo: Path) -> None:
    path = fresh_demo / ".okstra" / "discovery" / "task-catalog.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["tasks"][2]["taskId"] = 7
    path.write_text(json.dumps(doc), encoding="utf-8")
    listed = Project(fresh_demo).catalog_listing()
    assert isinstance(listed, LoadError)
    assert "tasks.2.taskId: not a string" in listed.reason and listed.path == path


@pytest.mark.parametrize("in_child", [False, True], ids=["in-process", "child"])
async def test_entry_the_model_rejects_replaces_the_quick_rows_with_the_error(
    fresh_demo: Path, in_child: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if in_child:  # as on a large store: a child validates the catalog first
        monkeypatch.setattr("okstra_tui.data.catalog.INBOX_CHILD_ROWS", 0)
    # A task key without its three parts passes the listing's shape check but not the model.
    path = fresh_demo / ".okstra" / "discovery" / "task-catalog.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["tasks"][0]["taskKey"] = "no-colons"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert not isinstance(Project(fresh_demo).catalog_listing(), LoadError)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CatalogScreen) and screen.data is not None
        assert isinstance(screen.data.error, LoadError) and "taskKey" in screen.data.error.reason
        assert all(not r.catalogued for r in screen.table.rows if isinstance(r, CatalogRow))
        assert screen.query(ErrorPanel)


def test_listing_takes_missing_and_null_optional_fields_and_names_a_bad_one(fresh_demo: Path) -> None:
    path = fresh_demo / ".okstra" / "discovery" / "task-catalog.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    del doc["tasks"][0]["title"]
    doc["tasks"][1]["updatedAt"] = None
    path.write_text(json.dumps(doc), encoding="utf-8")
    listed = Project(fresh_demo).catalog_listing()
    assert not isinstance(listed, LoadError)
    assert listed[0].title is None and listed[1].updated_at is None
    assert [e.task_key for e in listed] == [t["taskKey"] for t in doc["tasks"]]
    assert listed[2].title == doc["tasks"][2].get("title")
    doc["tasks"][3]["createdAt"] = 5
    path.write_text(json.dumps(doc), encoding="utf-8")
    bad = Project(fresh_demo).catalog_listing()
    assert isinstance(bad, LoadError) and "tasks.3.createdAt: not a string" in bad.reason


def test_workflow_listing_agrees_with_the_validated_manifests(demo_root: Path) -> None:
    project = Project(demo_root)
    rows = load_catalog(project).rows
    assert rows
    for row in rows:
        listed = listed_phase_summary(row)
        assert listed is not None and listed == phase_summary(row), row.ident


def test_workflow_listing_refuses_a_malformed_pointer(fresh_demo: Path) -> None:
    row = load_catalog(Project(fresh_demo)).rows[0]
    path = row.root / "task-manifest.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["workflow"]["nextRecommendedPhase"] = "ready"
    path.write_text(json.dumps(doc), encoding="utf-8")
    listed = row.ref.workflow_listing()
    assert isinstance(listed, LoadError) and listed.path == path and "nextRecommendedPhase" in listed.reason
    assert listed_phase_summary(row) is None


async def test_a_manifest_the_model_rejects_shows_its_error_after_the_listed_phases(fresh_demo: Path) -> None:
    # A status outside the model's choices passes the listing's shape check but not the model.
    project = Project(fresh_demo)
    row = load_catalog(project).rows[0]
    path = row.root / "task-manifest.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["workflow"]["nextRecommendedPhase"]["status"] = "someday"
    path.write_text(json.dumps(doc), encoding="utf-8")
    summary = listed_phase_summary(row)
    assert summary is not None and summary.next_status == "someday"
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        shown = screen.phases[row.ident]
        assert shown.error is not None and shown.next_status == ""


def test_folders_outside_the_catalog_are_the_task_lists_others(fresh_demo: Path) -> None:
    tasks = fresh_demo / ".okstra" / "tasks"
    (tasks / "stray" / "copied-in").mkdir(parents=True)  # a task folder the catalog does not name
    (tasks / "stray" / "notes.txt").write_text("not a task folder", encoding="utf-8")
    # A catalogued task's folder renamed so that it breaks the slug rule: the core still finds the task in it.
    first = next(p for p in sorted(tasks.glob("*/*")) if p.is_dir() and p.parent.name != "stray")
    first.rename(first.with_name(first.name.upper()))
    quick = list_catalog(Project(fresh_demo))
    assert quick is not None
    rows = uncatalogued_rows(Project(fresh_demo), quick.rows)
    shown = {r.root for r in quick.rows}
    # The reference: what the core's task list holds beyond the catalog rows' own folders.
    expected = sorted(ref.root for ref in Project(fresh_demo).task_refs if ref.root not in shown)
    assert sorted(r.root for r in rows) == expected
    assert {r.root.name for r in rows} == {"copied-in"}
    assert all(not r.catalogued for r in rows)
    # The renamed folder is its catalogued task's row, as the core and the checker have it: not a row of its own.
    assert sorted(r.root for r in quick.rows) == sorted(ref.root for ref in Project(fresh_demo).task_refs if ref.entry)
    assert first.with_name(first.name.upper()) in {r.root for r in quick.rows}


def test_a_task_in_a_folder_breaking_the_slug_rule_is_counted_on_its_catalog_row(fresh_demo: Path) -> None:
    """The inbox, the checker and the catalog's rows give a task the same folder (one rule in the core), so the
    decisions waiting in a renamed folder are counted on its task's row."""
    counts = waiting_counts(fresh_demo, 10)
    assert counts
    waiting = next(iter(counts))
    waiting.rename(waiting.with_name(waiting.name.upper()))
    quick = list_catalog(Project(fresh_demo))
    assert quick is not None
    assert not uncatalogued_rows(Project(fresh_demo), quick.rows)
    roots = {row.root for row in quick.rows}
    counts = waiting_counts(fresh_demo, 10)
    assert counts and waiting.with_name(waiting.name.upper()) in counts
    assert set(counts) <= roots


async def test_a_row_in_a_folder_breaking_the_slug_rule_shows_its_phases_and_its_count(fresh_demo: Path) -> None:
    """The rows in view have their phases read, and at a warm start their decisions counted, before the task
    folders are listed; a row then given a folder breaking the slug rule has both read again from there, not
    left saying its manifest is missing, nor unmarked."""
    counts = waiting_counts(fresh_demo, 10)
    assert counts
    folder = next(iter(counts))
    row = next(r for r in load_catalog(Project(fresh_demo)).rows if r.root == folder)
    expected = phase_summary(row)
    assert expected.error is None
    folder.rename(folder.with_name(folder.name.upper()))
    for start in ("cold", "warm"):  # warm: the count kept from the first run is on the first frame
        app = make_app(fresh_demo)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, CatalogScreen)
            assert screen.phases[row.ident] == expected, start
            assert screen.waiting is not None and screen.waiting.get(row.ident) == counts[folder], start
            assert sum(screen.waiting.values()) == sum(counts.values()), start


def test_a_file_left_at_the_slug_name_does_not_hide_the_tasks_folder(fresh_demo: Path) -> None:
    """The task list, the catalog's rows and the checker give the task the folder breaking the slug rule, though
    a file sits at its slug name."""
    row = load_catalog(Project(fresh_demo)).rows[0]
    folder = row.root
    folder.rename(folder.with_name(folder.name.upper()))
    folder.write_text("not a task folder", encoding="utf-8")
    ref = next(r for r in Project(fresh_demo).task_refs if r.key == row.key)
    assert ref.root == folder.with_name(folder.name.upper())
    quick = list_catalog(Project(fresh_demo))
    assert quick is not None
    assert not uncatalogued_rows(Project(fresh_demo), quick.rows)
    assert next(r for r in quick.rows if r.key == row.key).root == ref.root
    # The checker checks the task in that folder: its slug is named there, and the file is named as a stray.
    found = {(f.rule, f.path) for f in run_check(fresh_demo).findings}
    upper, stray = (layout.rel(p, fresh_demo) for p in (ref.root, folder))
    assert ("OKS018", upper) in found and ("OKS005", stray) in found
    assert any(path.startswith(upper + "/runs/") for _, path in found), "the task's runs are checked there"


def test_the_confirming_child_agrees_or_hands_back_the_validated_reading(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("okstra_tui.data.catalog.INBOX_CHILD_ROWS", 0)  # as on a large store
    quick = list_catalog(Project(fresh_demo))
    assert quick is not None
    assert confirm_catalog(Project(fresh_demo), quick) is None
    # The child itself agrees (a failing child would send confirm_catalog to the reading in process).
    out = run_child("confirm", fresh_demo)
    assert out is not None and out.strip() == fingerprint(quick) == fingerprint(load_catalog(Project(fresh_demo)))
    # The catalog changes between the listing on screen and the confirming read: the new reading replaces it.
    path = fresh_demo / ".okstra" / "discovery" / "task-catalog.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["tasks"][1]["title"] = "Renamed while the workbench was open"
    path.write_text(json.dumps(doc), encoding="utf-8")
    replacement = confirm_catalog(Project(fresh_demo), quick)
    assert replacement is not None and replacement.rows[1].title == "Renamed while the workbench was open"


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_settling_a_large_catalog_freezes_it_and_frees_what_was_dropped_since() -> None:
    import gc
    import weakref

    from okstra_tui.data.catalog import SETTLE_ROWS, settle_collector

    try:
        assert settle_collector(SETTLE_ROWS - 1) is False
        kept = _Cycle()
        assert settle_collector(SETTLE_ROWS) is True
        assert gc.get_freeze_count() > 0
        # Frozen, then dropped: no full pass frees it, the next settling does.
        gone = weakref.ref(kept)
        del kept
        gc.collect()
        assert gone() is not None
        settle_collector(SETTLE_ROWS)
        assert gone() is None
    finally:
        gc.unfreeze()


def _first(groups: list[str]) -> FirstListing:
    """A listing of one task per entry of *groups*, in that order, as the cache gives it (columns)."""
    n = len(groups)
    ids = [f"t{i:03}" for i in range(n)]
    columns: list[list[Any]] = [
        [f"p:{g}/{t}" for g, t in zip(groups, ids, strict=True)],
        groups,
        ids,
        ["feature"] * n,
        ["prepared"] * n,
        [f"task {i}" for i in range(n)],
        [None] * n,
        [None] * n,
    ]
    return FirstListing(Project(Path("/nowhere")), CatalogListing(columns=columns), f"p:{groups[-1]}/{ids[-1]}", None)


def _shown(lines: list[object]) -> list[object]:
    return [(line.label, line.count) if isinstance(line, GroupHeader) else line.ident for line in lines]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "groups",
    [
        ["b", "a", "b", "c", "a", "a", "b"],
        [f"g{i % 5}" for i in range(60)],  # interleaved, as agents add tasks
        ["only"] * 12,
    ],
    ids=["three groups", "interleaved", "one group"],
)
def test_the_first_lines_are_those_of_every_row_grouped(groups: list[str]) -> None:
    """The first frame builds only the rows of its lines: they are the same lines, counts included, as grouping
    every row gives, whatever the height."""
    first = _first(groups)
    every, count = group_rows(first.data().rows, reverse=False)
    for height in range(1, len(every) + 3):
        lines, groups_counted = first_lines(first, height)
        assert groups_counted == count
        assert _shown(lines) == _shown(every[:height])
    latest = [row for row in first.data().rows if row.latest]
    assert [row.ident for row in latest] == [first.row(len(groups) - 1).ident]


def _screen_text(screen: CatalogScreen) -> list[str]:
    table = screen.table
    lines = [table.render_line(y).text for y in range(table.size.height)]
    return [*lines, screen.query_one("#catalog-summary", SummaryLine).content.plain, str(len(table.rows))]


@pytest.mark.parametrize("size", [SIZE, (80, 12)], ids=["120x40", "80x12"])
async def test_the_first_frame_shows_what_every_row_shows(
    demo_root: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before every row is built, the rows in view, the table's length, the summary and the key column's title
    are already those of every row; the lines below are not built."""
    held: list[Any] = []
    monkeypatch.setattr(CatalogScreen, "_list_all", lambda screen, first: held.append(first))
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CatalogScreen) and screen.data is None and len(held) == 1
        rows = screen.table.rows
        # Only the first screenful is built (the demo's lines all fit 40 lines, not 12).
        assert None not in rows[: size[1]] and set(rows[size[1] :]) <= {None}
        assert (None in rows) == (size[1] < 40)
        before = _screen_text(screen)
        monkeypatch.undo()
        screen._list_all(held[0])  # what the workers read next (waiting marks, unread) is not compared
        assert screen.data is not None and None not in screen.table.rows
        assert _screen_text(screen) == before
        await settle(pilot)


def test_the_confirming_fingerprint_is_kept_in_the_store_index(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The validated catalog's fingerprint is a fact of the store index: a warm confirmation validates no entry,
    a changed catalog (or pointer) is validated again, and a catalog that does not validate is kept as such."""
    from okstra_core.store_index import StoreIndex
    from okstra_tui.data import catalog as catalog_module

    def index() -> StoreIndex:
        return StoreIndex(fresh_demo, tmp_path / "cache", key=b"k" * 32, scope="test")

    fresh = fingerprint(load_catalog(Project(fresh_demo)))
    with index() as first:
        assert catalog_module.confirmed_fingerprint(Project(fresh_demo), first) == fresh
        assert first.computed == 1

    def validated(*_: object) -> None:
        raise AssertionError("the catalog was validated again")

    with monkeypatch.context() as patched, index() as warm:
        patched.setattr(catalog_module, "load_catalog", validated)
        assert catalog_module.confirmed_fingerprint(Project(fresh_demo), warm) == fresh
        assert warm.computed == 0
    path = fresh_demo / ".okstra" / "discovery" / "task-catalog.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["tasks"][1]["title"] = "Renamed"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with index() as changed:
        renamed = catalog_module.confirmed_fingerprint(Project(fresh_demo), changed)
        assert renamed == fingerprint(load_catalog(Project(fresh_demo))) != fresh
    doc["tasks"][1]["taskKey"] = 7  # no longer a catalog entry
    path.write_text(json.dumps(doc), encoding="utf-8")
    for _ in range(2):
        with index() as invalid:
            assert catalog_module.confirmed_fingerprint(Project(fresh_demo), invalid) is None
    for bad in ([], ["a", "b"], [1], "x"):
        with pytest.raises(ValueError):
            catalog_module._kept_fingerprint(bad)
