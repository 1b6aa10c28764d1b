"""At a warm start the catalog's count of what waits is on its first frame: the store index's kept inbox, when
watchman vouches for what changed since it was kept; and that answer is always a fresh look's."""

from __future__ import annotations

import io
import json
import os
import threading
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from conftest import PrivateWatchman
from textual.pilot import Pilot

from okstra_core import layout
from okstra_core.cli import main
from okstra_core.store import Project
from okstra_core.workflows.inbox import read_inbox
from okstra_tui.app import OkstraApp
from okstra_tui.data import catalog as catalog_data
from okstra_tui.data.catalog import kept_waiting
from okstra_tui.screens import catalog as catalog_screen
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.widgets.summary_line import SummaryLine

from .conftest import SIZE, wait_until
from .test_decision_matrix import agent_makes_an_item_provisional


def _warm(root: Path) -> None:
    """``okstra inbox`` once: the store index keeps the inbox and the watchman clock it holds as of."""
    with redirect_stdout(io.StringIO()):
        assert main(["inbox", str(root), "--json"]) == 0


def _fresh_counts(root: Path) -> dict[Path, int]:
    counts: dict[Path, int] = {}
    for decision in read_inbox(Project(root)).items:
        assert decision.task_root is not None
        counts[decision.task_root] = counts.get(decision.task_root, 0) + 1
    return counts


def _ask_approval(root: Path) -> None:
    """An agent-like write: a task's manifest rewritten to wait for the person's approval."""
    path = layout.task_manifest_path(layout.tasks_dir(root) / "search/query-latency")
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["workflow"]["awaitingApproval"] = True
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    # Written a while ago, out of the racy window (a file written within it is read again at the next look).
    stamp = path.stat().st_mtime_ns - 5_000_000_000
    os.utime(path, ns=(stamp, stamp))


def test_the_kept_count_is_the_inbox_at_a_warm_start(fresh_demo: Path, watchman_on: PrivateWatchman) -> None:
    assert kept_waiting(fresh_demo) is None  # nothing kept yet: the count waits for the reading
    _warm(fresh_demo)
    kept = kept_waiting(fresh_demo)
    assert kept is not None and kept == _fresh_counts(fresh_demo)
    assert sum(kept.values()) > 0


def test_after_a_change_the_kept_count_is_still_a_fresh_look(fresh_demo: Path, watchman_on: PrivateWatchman) -> None:
    _warm(fresh_demo)
    before = _fresh_counts(fresh_demo)
    _ask_approval(fresh_demo)
    after = _fresh_counts(fresh_demo)
    assert after != before
    kept = kept_waiting(fresh_demo)
    # The kept inbox read the rewritten manifest: it no longer holds, so no count is given before the reading.
    assert kept is None or kept == after
    _warm(fresh_demo)
    assert kept_waiting(fresh_demo) == after


def test_without_watchman_no_count_is_guessed(
    fresh_demo: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    _warm(fresh_demo)
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    assert kept_waiting(fresh_demo) is None


def test_a_tampered_index_gives_no_kept_count(fresh_demo: Path, watchman_on: PrivateWatchman) -> None:
    import sqlite3

    _warm(fresh_demo)
    index = next(layout.okstra_cache_dir(None).glob("index/*.sqlite"))
    with sqlite3.connect(index) as conn:
        (value,) = conn.execute("SELECT value FROM facts WHERE name = 'inbox'").fetchone()
        doc = json.loads(value)
        doc["items"] = doc["items"][1:]  # one decision hidden
        conn.execute("UPDATE facts SET value = ? WHERE name = 'inbox'", (json.dumps(doc),))
    assert kept_waiting(fresh_demo) is None


async def test_the_count_is_on_the_first_frame_at_a_warm_start(
    fresh_demo: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    _warm(fresh_demo)
    expected = _fresh_counts(fresh_demo)
    # The reading's own count never comes: what the first frame shows is the kept count.
    monkeypatch.setattr(catalog_screen, "waiting_counts", lambda *a, **k: None)
    monkeypatch.setattr(catalog_data, "waiting_counts", lambda *a, **k: None)
    app = OkstraApp(Project(fresh_demo), notify="toast")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        summary = screen.query_one("#catalog-summary", SummaryLine)
        assert f"◆ {sum(expected.values())} waiting for you" in summary.content.plain
        await pilot.pause(0.2)
        assert screen.waiting is not None
        marked = {row.folder() for row in screen.data.rows if row.ident in screen.waiting} if screen.data else set()
        assert marked == set(expected)


async def test_the_notices_start_once_what_waits_is_counted(
    fresh_demo: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notices' reading of the whole store does not compete with the count: it starts once the reading's own
    count is in (the kept count on the first frame does not start it)."""
    _warm(fresh_demo)
    gate = threading.Event()
    counted = catalog_screen.waiting_counts

    def held(*args: Any, **kwargs: Any) -> dict[Path, int] | None:
        gate.wait(30)
        return counted(*args, **kwargs)

    monkeypatch.setattr(catalog_screen, "waiting_counts", held)
    app = OkstraApp(Project(fresh_demo), notify="toast")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        screen = app.screen
        assert isinstance(screen, CatalogScreen) and screen.waiting  # the kept count is shown
        assert app._notices is None
        gate.set()
        await wait_until(pilot, lambda: app._notices is not None, "the notices start once the count is in")
        screen = app.screen
        assert isinstance(screen, CatalogScreen) and screen.waiting is not None


async def test_the_notices_wait_for_a_count_at_the_start_that_runs_long(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A count at the start that runs past NOTICES_WAIT_SECONDS (a cold index of a large store on a slow disk)
    holds the notices back until it ends: their first reading of the whole store then finds the index it brought
    up to date, rather than build it beside it."""
    from okstra_tui import app as app_module

    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    monkeypatch.setattr(app_module, "NOTICES_WAIT_SECONDS", 0.2)
    gate = threading.Event()

    def long_count(root: Path) -> dict[Path, int] | None:
        gate.wait(30)
        return None

    monkeypatch.setattr(catalog_data, "kept_waiting", long_count)
    monkeypatch.setattr(catalog_screen, "waiting_counts", lambda *a, **k: None)  # the catalog never counts
    app = OkstraApp(Project(fresh_demo), notify="toast")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(1.0)
        assert app._notices is None, "the notices started while the count at the start ran"
        gate.set()
        await wait_until(pilot, lambda: app._notices is not None, "the notices start once the count has ended")


async def test_the_notices_start_once_the_feed_has_looked(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Polled, the change feed's first look at everything the inbox read comes after the count; the notices'
    baseline check and first reading of the whole store start only once it is done, so that the memory of the
    two is never held at once (on a large store each is hundreds of megabytes)."""
    from okstra_tui import app as app_module
    from okstra_tui import store_feed

    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    gate = threading.Event()
    told = store_feed.StoreFeed._told

    def held_look(self: store_feed.StoreFeed) -> Any:
        gate.wait(30)
        return told(self)

    monkeypatch.setattr(store_feed.StoreFeed, "_told", held_look)
    app = OkstraApp(Project(fresh_demo), notify="toast")
    given_back: list[bool] = []  # for each give-back once the feed watches: whether the notices ran then
    monkeypatch.setattr(app_module, "give_back", lambda: given_back.append(app._notices is not None) or True)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        await wait_until(pilot, lambda: screen.waiting is not None, "the count comes before the feed's look")
        await _notices_after(pilot, app, gate, given_back, "the feed's first look")
    assert given_back[:1] == [False], "what the feed's first look freed is given back before the notices start"


async def _notices_after(
    pilot: Pilot[None], app: OkstraApp, gate: threading.Event, given_back: list[bool], what: str
) -> None:
    """While *gate* holds *what*, the notices do not start; once it lets go, they do (the give-backs from now on
    are noted in *given_back*)."""
    given_back.clear()  # those before (the one after the first frame)
    await pilot.pause(0.5)
    assert app._notices is None, f"the notices started while {what} ran"
    gate.set()
    await wait_until(pilot, lambda: app._notices is not None, f"the notices start once {what} is done")


async def test_polled_the_notices_start_once_the_feed_s_first_full_look_is_done(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polled, the feed's first full look comes a poll after its start and asks the store index of everything the
    inbox read a second time (seconds and tens of megabytes on a large store): the notices' baseline check and
    first reading start once it is done, with what it let go given back first."""
    from okstra_core.workflows import inbox as inbox_module
    from okstra_tui import app as app_module

    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    monkeypatch.setenv("OKSTRA_WATCH", "poll")
    gate = threading.Event()
    asked: list[int] = []
    told = inbox_module.InboxTold.__call__

    def held_second(self: inbox_module.InboxTold) -> Any:
        asked.append(1)
        if len(asked) == 2:
            gate.wait(30)
        return told(self)

    monkeypatch.setattr(inbox_module.InboxTold, "__call__", held_second)
    app = OkstraApp(Project(fresh_demo), notify="toast")
    given_back: list[bool] = []
    monkeypatch.setattr(app_module, "give_back", lambda: given_back.append(app._notices is not None) or True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(asked) == 2, "the feed's first full look")
        assert app.store_watched and not app._feed.looked.is_set()
        await _notices_after(pilot, app, gate, given_back, "the feed's first full look")
    assert given_back[:1] == [False], "what that look freed is given back before the notices start"


async def test_the_follower_of_the_other_projects_starts_once_the_notices_have_read(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The follower of the other projects starts once the notices' baseline check and first reading are done, so
    that its first readings do not add to theirs."""
    from okstra_tui import notices as notices_module

    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    monkeypatch.setattr(notices_module.NoticeWatcher, "ready", property(lambda self: False))
    app = OkstraApp(Project(fresh_demo), notify="toast")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app._notices is not None and app._notices.checks_ready, "the baseline check")
        await pilot.pause(0.5)
        assert app._others is None, "the follower started before the notices' first reading was done"
        monkeypatch.setattr(notices_module.NoticeWatcher, "ready", property(lambda self: True))
        await wait_until(pilot, lambda: app._others is not None, "the follower starts once the notices have read")


async def test_the_notices_wait_for_the_count_made_once_the_feed_watches(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the feed's first look cannot vouch for the count shown, the catalog counts once more, looking at every
    path (on a large store a process of its own, as large as the notices' baseline check): the notices start once
    that count is in, not beside it."""
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    monkeypatch.setattr(OkstraApp, "told_since", lambda self, kept: False)
    gate = threading.Event()
    counted = catalog_screen.waiting_counts
    app = OkstraApp(Project(fresh_demo), notify="toast")
    held: list[bool] = []

    def count(*args: Any, **kwargs: Any) -> dict[Path, int] | None:
        if app.store_watched:  # the count begun once the feed watched: the one the notices wait for
            held.append(True)
            gate.wait(30)
        return counted(*args, **kwargs)

    monkeypatch.setattr(catalog_screen, "waiting_counts", count)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(held), "the catalog counts once the feed watches")
        await pilot.pause(0.5)
        assert app._notices is None, "the notices started beside the count made once the feed watched"
        gate.set()
        await wait_until(pilot, lambda: app._notices is not None, "the notices start once that count is in")


async def test_a_kept_count_come_after_the_first_frame_is_shown(
    fresh_demo: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded machine reads the kept count after the first frame: it is shown when it comes, not dropped."""
    _warm(fresh_demo)
    expected = _fresh_counts(fresh_demo)
    gate = threading.Event()
    kept = catalog_data.kept_waiting

    def late(root: Path) -> dict[Path, int] | None:
        gate.wait(30)
        return kept(root)

    monkeypatch.setattr(catalog_data, "kept_waiting", late)
    monkeypatch.setattr(catalog_screen, "waiting_counts", lambda *a, **k: None)
    app = OkstraApp(Project(fresh_demo), notify="toast")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        summary = screen.query_one("#catalog-summary", SummaryLine)
        assert "waiting for you" not in summary.content.plain
        gate.set()
        await wait_until(pilot, lambda: screen.waiting is not None, "the kept count is shown when it comes")
        assert f"◆ {sum(expected.values())} waiting for you" in summary.content.plain


def test_on_a_small_store_no_early_child_runs(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below :data:`INBOX_CHILD_ROWS` task folders the count after the first frame is quick: no child is started
    for it."""

    def no_child(root: Path) -> dict[str, int] | None:
        raise AssertionError("a counting child was started on a small store")

    monkeypatch.setattr(catalog_data, "_waiting_from_child", no_child)
    assert catalog_data.early_waiting(fresh_demo) is None


async def test_without_watchman_a_large_store_is_counted_from_the_start(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No watchman to vouch for a kept count: on a large store the counting child runs as the workbench starts,
    and the reading's own count waits for it (the two never read at once) before it confirms it."""
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    monkeypatch.setattr(catalog_data, "INBOX_CHILD_ROWS", 1)  # as on a large store
    expected = _fresh_counts(fresh_demo)
    gate = threading.Event()
    early = catalog_data.early_waiting
    confirmed: list[bool] = []

    def held(root: Path) -> dict[Path, int] | None:
        gate.wait(30)
        return early(root)

    def confirm(*args: Any, **kwargs: Any) -> dict[Path, int] | None:
        confirmed.append(gate.is_set())
        return None  # the reading's own count never comes: what is shown is the early one

    monkeypatch.setattr(catalog_data, "early_waiting", held)
    monkeypatch.setattr(catalog_screen, "waiting_counts", confirm)
    app = OkstraApp(Project(fresh_demo), notify="toast")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        assert screen.waiting is None and not confirmed, "the reading's count did not wait for the early one"
        gate.set()
        await wait_until(pilot, lambda: screen.waiting is not None and bool(confirmed), "the early count shown")
        assert confirmed == [True]
        summary = screen.query_one("#catalog-summary", SummaryLine)
        assert f"◆ {sum(expected.values())} waiting for you" in summary.content.plain
        marked = {row.folder() for row in screen.data.rows if row.ident in screen.waiting} if screen.data else set()
        assert marked == set(expected)


async def test_a_workbench_left_while_the_early_count_runs_starts_no_other(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Left before the early count ends, the workbench does not start the reading's own count after it."""
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    monkeypatch.setattr(catalog_data, "INBOX_CHILD_ROWS", 1)
    gate = threading.Event()
    counted: list[bool] = []

    def held(root: Path) -> dict[Path, int] | None:
        gate.wait(30)
        return None  # as when a leaving workbench ended the child

    monkeypatch.setattr(catalog_data, "early_waiting", held)
    monkeypatch.setattr(catalog_screen, "waiting_counts", lambda *a, **k: counted.append(True))
    waiting = catalog_data.KeptWaiting(fresh_demo, early=True)
    app = OkstraApp(Project(fresh_demo), notify="off", waiting=waiting)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        assert isinstance(app.screen, CatalogScreen) and not counted
        workers = list(app.screen.workers)
    gate.set()
    waiting.join()
    for worker in workers:
        if not worker.is_finished:
            await worker.wait()
    assert not counted


def _feed_held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The change feed's watcher (on file events) is not made until the event returned is set."""
    from okstra_tui import store_feed

    monkeypatch.setenv("OKSTRA_WATCH", "events")
    gate = threading.Event()
    real = store_feed.StoreWatcher

    def held(*args: Any, **kwargs: Any) -> Any:
        gate.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(store_feed, "StoreWatcher", held)
    return gate


@pytest.mark.parametrize("feed", ["events", "polled"])
async def test_a_decision_made_before_the_feed_watches_is_counted(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, feed: str
) -> None:
    """A decision made after the count looked but before the change feed's first look is told by no change:
    on file events it is in the feed's baseline; polled, another reader (``okstra inbox`` elsewhere) kept the
    inbox with it before that look, whose looks hide it from the look. Once the feed watches, the catalog counts
    again, and shows it."""
    gate = _feed_held(monkeypatch) if feed == "events" else _polled_feed_held(monkeypatch)
    before = _fresh_counts(fresh_demo)
    app = OkstraApp(Project(fresh_demo), notify="off")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        await wait_until(pilot, lambda: screen.waiting is not None, "the first count")
        assert sum(screen.waiting.values()) == sum(before.values())
        if feed == "events":
            _ask_approval(fresh_demo)  # the feed does not watch yet
        else:
            await _provisional_kept_elsewhere(pilot, fresh_demo)
        after = _fresh_counts(fresh_demo)
        assert sum(after.values()) == sum(before.values()) + 1, "one decision more"
        gate.set()
        await wait_until(
            pilot,
            lambda: screen.waiting is not None and sum(screen.waiting.values()) == sum(after.values()),
            "the decision made before the feed watched is counted",
        )


async def _provisional_kept_elsewhere(pilot: Pilot[None], root: Path) -> None:
    """A report the catalog does not read rewritten in place to make a design item provisional, out of the racy
    window; then another reader keeps the inbox, with the decision."""
    await agent_makes_an_item_provisional(pilot, root)
    report = sorted((layout.tasks_dir(root) / "checkout/saved-cards").glob("runs/*/reports/*.data.json"))[-1]
    stamp = report.stat().st_mtime_ns - 5_000_000_000
    os.utime(report, ns=(stamp, stamp))
    _warm(root)


async def test_a_polled_store_tells_the_count_of_a_decision_made_elsewhere(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the store is polled (no file events), a report rewritten in place by another process (its folder
    unchanged) to make a design item provisional shows in the count: told by the feed's full poll or by the
    catalog's own reading again, whichever comes first (the feed's part is shown in test_store_feed)."""
    monkeypatch.setenv("OKSTRA_WATCH", "poll")
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    before = _fresh_counts(fresh_demo)
    app = OkstraApp(Project(fresh_demo), notify="off")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        await wait_until(
            pilot,
            lambda: screen.waiting is not None and app.store_watched and screen._counted_watched,
            "the count, looked at once the feed polls",
        )
        assert sum(screen.waiting.values()) == sum(before.values())
        await agent_makes_an_item_provisional(pilot, fresh_demo)
        after = _fresh_counts(fresh_demo)
        assert sum(after.values()) > sum(before.values())
        await wait_until(
            pilot,
            lambda: screen.waiting is not None and sum(screen.waiting.values()) == sum(after.values()),
            "the decision made elsewhere is counted",
        )


async def test_a_view_read_before_the_feed_watches_looks_again_once_it_does(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inbox view read before the change feed watched; a decision made in between is in no burst: once the
    feed watches, the view looks again at what it read, and shows it. It reads once more, not on every burst."""
    from okstra_tui.screens.inbox import InboxScreen

    gate = _feed_held(monkeypatch)
    before = len(read_inbox(Project(fresh_demo)).items)
    app = OkstraApp(Project(fresh_demo), notify="off")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, InboxScreen) and app.screen.reads > 0, "the inbox")
        screen = app.screen
        assert isinstance(screen, InboxScreen) and len(screen.decisions) == before
        assert app.watching_feed is None
        _ask_approval(fresh_demo)  # the feed does not watch yet
        gate.set()
        await wait_until(pilot, lambda: len(screen.decisions) == before + 1, "the decision made before the feed")
        await wait_until(pilot, lambda: app.watching_feed is not None, "the feed watching")
        reads = screen.reads
        await pilot.pause(0.5)
        assert screen.reads == reads, "looked again once, not read again and again"


def _polled_feed_held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The change feed polls, and its watcher (whose first look asks the store index what changed) is not made
    until the event returned is set."""
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    gate = _feed_held(monkeypatch)
    monkeypatch.setenv("OKSTRA_WATCH", "poll")
    return gate


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One entry per whole count of what waits the catalog makes from now on."""
    counted: list[bool] = []
    real = catalog_screen.waiting_counts

    def counting(root: Path, rows: int, changed: frozenset[str] | None = None) -> dict[Path, int] | None:
        if changed is None:
            counted.append(True)
        return real(root, rows, changed)

    monkeypatch.setattr(catalog_screen, "waiting_counts", counting)
    return counted


async def test_a_polled_feed_that_told_every_change_since_the_count_needs_no_count_again(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The polled feed's first look names every change since the count shown left the inbox kept in the store
    index: once it watches, the catalog does not count the whole store again (a second counting child at the
    start, beside the notices' check, on a large store)."""
    gate = _polled_feed_held(monkeypatch)
    counted = _counting(monkeypatch)
    app = OkstraApp(Project(fresh_demo), notify="off")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        await wait_until(pilot, lambda: screen.waiting is not None and counted, "the first count")
        gate.set()
        await wait_until(pilot, lambda: app.store_watched and screen._counted_watched, "the feed watches")
        await pilot.pause(1.0)
        assert counted == [True], "the whole store was counted again once the feed watched"
        assert screen.waiting is not None
        assert sum(screen.waiting.values()) == sum(_fresh_counts(fresh_demo).values())
