"""The change feed over another project's store (as Home reads every project): watched, not looked at file by file."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.demo.projects import BILLING_DIR, SHOP_DIR
from okstra_core.store import Project
from okstra_core.watch import signature
from okstra_core.workflows.inbox import read_paths
from okstra_core.workflows.tasks import update_task_manifest
from okstra_tui import store_feed
from okstra_tui.store_feed import StoreFeed

from .conftest import WAIT_SECONDS


def _until(predicate: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"still not the case after {WAIT_SECONDS:.0f} s: {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("mode", ["events", "poll"])
def test_another_projects_store_is_watched_not_looked_at_each_second(
    fresh_many: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("OKSTRA_WATCH", mode)
    billing = fresh_many / BILLING_DIR
    store = os.fspath(layout.okstra_dir(billing)) + os.sep
    read = signature(read_paths(Project(billing)))  # what Home read of billing's inbox
    looks: list[list[str]] = []
    own_look = store_feed.signature

    def look(paths: list[Path]) -> dict[str, tuple[int, int, int, int]]:
        looks.append([str(p) for p in paths])
        return own_look(paths)

    monkeypatch.setattr(store_feed, "signature", look)
    delivered: list[frozenset[str] | None] = []
    feed = StoreFeed(fresh_many / SHOP_DIR, delivered.append)
    feed.follow("home", read)
    feed.start()
    try:
        _until(lambda: feed.watching() == 1, "billing's store watched")
        _until(lambda: len(looks) >= 1, "the feed's first look")
        first = len(looks)
        _until(lambda: len(looks) >= first + 3, "three more looks of the feed")
        # Once watched, the feed itself no longer looks at what was read there.
        assert not [p for paths in looks[first:] for p in paths if p.startswith(store)]

        task = Project(billing).find_task("billing:invoices:late-fees")
        assert task is not None
        manifest = str(layout.task_manifest_path(task.root))
        assert manifest in read

        def approve(value):  # type: ignore[no-untyped-def]
            assert value.workflow is not None
            value.workflow.awaiting_approval = False
            return value

        update_task_manifest(billing, task.root, approve)
        _until(
            lambda: any(paths is None or manifest in paths for paths in delivered),
            "the change in billing's store delivered",
        )
    finally:
        feed.close()


@pytest.mark.parametrize("mode", ["events", "poll"])
def test_a_file_read_through_a_symlink_out_of_the_store_is_looked_at(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """The store's watcher never sees a symlink's target outside the store change: the feed looks at what a view
    read through the symlink itself, and names that path when the target changes."""
    from okstra_core import reading

    monkeypatch.setenv("OKSTRA_WATCH", mode)
    target = fresh_demo / "notes" / "brief.md"
    target.parent.mkdir()
    target.write_text("one\n", encoding="utf-8")
    task = Project(fresh_demo).find_task("demo-shop:platform:ci-speedup")
    assert task is not None
    link = task.root / "brief-link.md"
    link.symlink_to(target)
    with reading.recording() as reads:
        assert reading.read_text(link, root=fresh_demo) == "one\n"
    assert reads.linked == {str(link)}
    delivered: list[frozenset[str] | None] = []
    feed = StoreFeed(fresh_demo, delivered.append)
    feed.follow("view", reads.paths)
    feed.start()
    try:
        time.sleep(0.3)
        target.write_text("two, longer\n", encoding="utf-8")
        _until(lambda: any(paths is None or str(link) in paths for paths in delivered), "the symlink's change named")
    finally:
        feed.close()


@pytest.mark.parametrize("asked", ["events", "poll"])
def test_a_store_polled_because_its_watches_were_refused_is_told_once(
    fresh_many: Path, monkeypatch: pytest.MonkeyPatch, asked: str
) -> None:
    """Polling asked for is not worth a word; polling because the kernel refused the watches (the user's limit is
    reached) is said once, with what to raise."""
    from okstra_core import inotify

    def refused(self: inotify.FolderEvents, folder: str) -> bool:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), folder)

    monkeypatch.setenv("OKSTRA_WATCH", asked)
    monkeypatch.setattr(inotify.FolderEvents, "_add", refused)
    warned: list[str] = []
    feed = StoreFeed(fresh_many / SHOP_DIR, lambda paths: None, warned.append)
    feed.start()
    try:
        _until(lambda: feed._watcher is not None and feed.polled, "the store polled")
        time.sleep(2.5)  # two more rounds of the feed
    finally:
        feed.close()
    if asked == "poll":
        assert warned == []
    else:
        assert len(warned) == 1 and "max_user_watches" in warned[0] and (fresh_many / SHOP_DIR).name in warned[0]


def test_a_polling_feed_asks_the_store_index_what_changed_in_what_the_inbox_reads(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polled, the feed looks itself only at what the views read in the store; a change to a file only the inbox
    read (no view follows it) is named all the same, told by the store index."""
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    monkeypatch.setenv("OKSTRA_WATCH", "poll")
    task = Project(fresh_demo).find_task("checkout/saved-cards")
    assert task is not None
    manifest = layout.task_manifest_path(task.root)
    assert str(manifest) in read_paths(Project(fresh_demo))
    delivered: list[frozenset[str] | None] = []
    feed = StoreFeed(fresh_demo, delivered.append)
    viewed = str(layout.task_catalog_path(fresh_demo))
    feed.follow("view", [viewed, str(fresh_demo / "README.md")])
    assert feed._poll_paths() == [viewed]  # what the views read inside the store, nothing else
    feed.start()
    try:
        assert feed.started.wait(WAIT_SECONDS)

        def approve(value: Any) -> Any:
            value.workflow.awaiting_approval = True
            return value

        update_task_manifest(fresh_demo, task.root, approve)
        _until(lambda: any(paths is None or str(manifest) in paths for paths in delivered), "the manifest named")
        assert None not in delivered, "the index could say which paths changed"
    finally:
        feed.close()


def test_a_polling_feed_first_looks_once_the_count_at_the_start_is_in(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polled, the feed's first look at what the inbox reads waits for the count of what waits at the start (which
    brings the store index up to date): a cold index is built once, not also in the workbench at the same time."""
    import threading

    from okstra_tui.app import OkstraApp

    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    monkeypatch.setenv("OKSTRA_WATCH", "poll")
    opened: list[object] = []
    from okstra_core.check import cache

    real = cache.open_store_index
    monkeypatch.setattr(cache, "open_store_index", lambda root, *a, **k: opened.append(root) or real(root, *a, **k))
    counted = threading.Event()
    feed = StoreFeed(fresh_demo, lambda paths: None)
    feed.ready = lambda: counted.wait(WAIT_SECONDS)
    feed.start()
    try:
        time.sleep(0.5)
        assert not opened and not feed.started.is_set()
        counted.set()
        assert feed.started.wait(WAIT_SECONDS) and len(opened) == 1
    finally:
        feed.close()
    app = OkstraApp(Project(fresh_demo), notify="off")
    assert app._feed.ready is not None, "the workbench's feed waits for its count at the start"
    assert app._kept_waiting is not None and app._kept_waiting.join(WAIT_SECONDS)
