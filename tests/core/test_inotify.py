"""``okstra_core.inotify``: file events from inotify itself, and the store watcher that uses them."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from okstra_core import inotify
from okstra_core.inotify import Batch, FolderEvents
from okstra_core.watch import StoreWatcher

pytestmark = pytest.mark.skipif(not inotify.available(), reason="inotify is Linux's")


def _drain(events: FolderEvents, batch: Batch | None = None, timeout: float = 5.0) -> Batch:
    """Every event until a quiet 0.2 s (at least one within *timeout*)."""
    into = batch or Batch()
    first = events.read(timeout)
    while first is not None:
        into.paths |= first.paths
        into.made += first.made
        into.moved_out += first.moved_out
        into.overflow |= first.overflow
        first = events.read(0.2)
    return into


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "c").mkdir()
    return tmp_path


def test_every_kind_of_change_below_the_top_is_told_by_its_path(tree: Path) -> None:
    events = FolderEvents()
    try:
        events.add_tree(str(tree))
        assert len(events) == 4
        deep = tree / "a" / "b" / "x.json"
        deep.write_text("1", encoding="utf-8")
        assert str(deep) in _drain(events).paths
        deep.write_text("22", encoding="utf-8")
        assert str(deep) in _drain(events).paths
        os.rename(deep, tree / "c" / "y.json")
        moved = _drain(events).paths
        assert {str(deep), str(tree / "c" / "y.json")} <= moved
        (tree / "c" / "y.json").unlink()
        assert str(tree / "c" / "y.json") in _drain(events).paths
    finally:
        events.close()


def test_a_folder_made_is_watched_with_what_it_already_holds(tree: Path) -> None:
    events = FolderEvents()
    try:
        events.add_tree(str(tree))
        (tree / "new" / "inner").mkdir(parents=True)  # inner is made before new's watch: found by the listing
        told = _drain(events)
        assert str(tree / "new") in told.made and str(tree / "new") in told.paths
        assert len(events) == 6
        (tree / "new" / "inner" / "z.md").write_text("z", encoding="utf-8")
        assert str(tree / "new" / "inner" / "z.md") in _drain(events).paths
    finally:
        events.close()


def test_a_folder_moved_keeps_being_told_under_its_new_name_and_one_moved_out_is_not_watched(
    tree: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    events = FolderEvents()
    try:
        events.add_tree(str(tree))
        os.rename(tree / "a", tree / "c" / "a2")
        _drain(events)
        (tree / "c" / "a2" / "b" / "w.json").write_text("w", encoding="utf-8")
        assert str(tree / "c" / "a2" / "b" / "w.json") in _drain(events).paths
        assert len(events) == 4
        os.rename(tree / "c" / "a2", elsewhere / "gone")
        _drain(events)
        assert len(events) == 2, "the folders moved out are no longer watched"
        (elsewhere / "gone" / "b" / "v.json").write_text("v", encoding="utf-8")
        assert events.read(0.3) is None
    finally:
        events.close()


def test_a_flood_beyond_the_kernels_queue_says_anything_may_have_changed(tree: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text(encoding="ascii"))
    if limit > 100_000:
        pytest.fail(f"max_queued_events is {limit}: too many files to overflow it here")
    events = FolderEvents()
    try:
        events.add_tree(str(tree))
        for n in range(limit + 10):  # each a new name: the kernel merges only an event repeating the last
            (tree / "c" / f"f{n}").touch()
        assert _drain(events).overflow
    finally:
        events.close()


def test_a_watcher_told_the_watch_limit_is_reached_polls_and_says_why(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(self: FolderEvents, folder: str) -> bool:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), folder)

    monkeypatch.setattr(FolderEvents, "_add", refused)
    watcher = StoreWatcher(tree, lambda: [tree / "c"], mode="events")
    try:
        assert watcher.mode == "poll" and "max_user_watches" in watcher.why
        (tree / "c" / "new.json").write_text("{}", encoding="utf-8")
        assert watcher.wait(timeout=10) is True, "polling sees the change"
    finally:
        watcher.close()


def test_a_watch_refused_on_a_new_folder_starts_again_and_polls_if_still_refused(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = StoreWatcher(tree, lambda: [tree / "c", *(tree / "c").iterdir()], mode="events")
    try:
        assert watcher.mode == "events"

        def refused(self: FolderEvents, folder: str) -> bool:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), folder)

        monkeypatch.setattr(FolderEvents, "_add", refused)
        (tree / "c" / "fresh").mkdir()
        assert watcher.wait(timeout=10) is True
        assert watcher.take_changed() is None, "a folder unwatched: anything may have changed"
        watcher.wait(timeout=3)  # the events thread has ended: watched afresh, refused, polled
        assert watcher.mode == "poll" and "max_user_watches" in watcher.why
        (tree / "c" / "fresh" / "late.json").write_text("{}", encoding="utf-8")
        assert watcher.wait(timeout=10) is True
    finally:
        watcher.close()


def test_close_ends_the_events_thread_that_waits_in_the_kernel(tree: Path) -> None:
    watcher = StoreWatcher(tree, lambda: [tree], mode="events")
    thread = watcher._events_thread
    assert thread is not None and thread.is_alive()
    watcher.close()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_a_wake_after_close_writes_nothing_to_whatever_reuses_the_pipes_number(tmp_path: Path) -> None:
    events = FolderEvents()
    pipe_end = events._wake_write
    events.close()
    other = tmp_path / "other.txt"
    fd = os.open(other, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        if fd != pipe_end:  # the lowest free number is handed out: one of the three just freed
            os.dup2(fd, pipe_end)
        events.wake()
    finally:
        os.close(fd)
        if fd != pipe_end:
            os.close(pipe_end)
    assert other.read_bytes() == b""
