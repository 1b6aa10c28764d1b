"""A store watcher fed by the user's watchman daemon (a subscription) instead of file events of its own.

Against the test session's own daemon (``private_watchman``): changes under ``.okstra/`` are told with their
paths and nothing outside it is; a daemon killed mid-session or a recrawl means "everything", and the watcher
carries on once the daemon is back; where watchman cannot be reached the watcher uses its own file events.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import PrivateWatchman

from okstra_core import watch, watchman
from okstra_core.watch import StoreWatcher

#: Generous: a loaded machine.
WAIT = 30.0


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "project" / ".okstra"
    (store / "tasks" / "g").mkdir(parents=True)
    return store


def _changed(watcher: StoreWatcher, until: float = WAIT) -> set[Path] | None:
    """What the watcher told changed, gathered until it has told something (None: everything)."""
    assert watcher.wait(until), "no change was told"
    return watcher.take_changed()


def _taken_until(watcher: StoreWatcher, wanted: Path) -> set[Path] | None:
    """Changes told until *wanted* is among them or everything is told (a burst may come in two words)."""
    seen: set[Path] = set()
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if not watcher.wait(deadline - time.monotonic()):
            break
        taken = watcher.take_changed()
        if taken is None:
            return None
        seen |= taken
        if wanted in seen:
            return seen
    raise AssertionError(f"{wanted} was never told; told: {sorted(map(str, seen))}")


def test_a_change_in_the_store_is_told_with_its_paths_and_one_outside_is_not(
    watchman_on: PrivateWatchman, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    polled: list[int] = []
    watcher = StoreWatcher(store, lambda: polled.append(1) or [store], hot_paths=lambda: polled.append(1) or [store])
    try:
        assert watcher.mode == "watchman", watcher.why
        assert polled == []  # nothing of the store is looked at by the watcher itself
        written = store / "tasks" / "g" / "task.json"
        written.write_text("{}", encoding="utf-8")  # at once: before the daemon's first word
        assert written in (_taken_until(watcher, written) or set())
        (store.parent / "README.md").write_text("outside the store", encoding="utf-8")
        assert not watcher.wait(1.0)
        made = store / "tasks" / "g" / "runs" / "report.md"
        made.parent.mkdir()
        made.write_text("a report in a new folder", encoding="utf-8")
        assert made in (_taken_until(watcher, made) or set())
        assert polled == []
    finally:
        watcher.close()


def test_a_daemon_killed_mid_session_means_everything_then_changes_again(
    watchman_on: PrivateWatchman, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    watcher = StoreWatcher(store, lambda: [store])
    try:
        assert watcher.mode == "watchman", watcher.why
        watchman_on.kill()
        (store / "tasks" / "g" / "while-down.json").write_text("{}", encoding="utf-8")
        # The subscription's end is "everything"; so is subscribing again (what changed meanwhile is unknown).
        assert _changed(watcher) is None
        later = store / "tasks" / "g" / "after.json"
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            later.write_text(str(time.monotonic()), encoding="utf-8")
            if watcher.wait(2.0):
                taken = watcher.take_changed()
                if taken is not None and later in taken:
                    break
        else:
            raise AssertionError("no change was told with its path after the daemon came back")
        assert watchman_on.pid() is not None  # subscribing again started the daemon
    finally:
        watcher.close()


def test_a_recrawl_means_everything(watchman_on: PrivateWatchman, tmp_path: Path) -> None:
    store = _store(tmp_path)
    watcher = StoreWatcher(store, lambda: [store])
    try:
        assert watcher.mode == "watchman", watcher.why
        watchman_on.run("debug-recrawl", os.path.realpath(store.parent))
        (store / "tasks" / "g" / "after-recrawl.json").write_text("{}", encoding="utf-8")
        told: list[set[Path] | None] = []
        deadline = time.monotonic() + WAIT
        while None not in told and time.monotonic() < deadline:
            if watcher.wait(deadline - time.monotonic()):
                told.append(watcher.take_changed())
        assert None in told
    finally:
        watcher.close()


def test_watchman_that_cannot_be_reached_leaves_the_watcher_its_own_file_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    broken = tmp_path / "bin"
    broken.mkdir()
    program = broken / "watchman"
    program.write_text("#!/bin/sh\necho 'cannot start' >&2\nexit 3\n", encoding="utf-8")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{broken}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("OKSTRA_WATCHMAN", "on")
    watcher = StoreWatcher(store, lambda: [store])
    try:
        assert watcher.mode == "events"
        assert "watchman get-sockname failed: cannot start" in watcher.why
        written = store / "tasks" / "g" / "task.json"
        written.write_text("{}", encoding="utf-8")
        assert written in (_taken_until(watcher, written) or set())
    finally:
        watcher.close()


def test_auto_takes_watchman_only_where_the_setting_allows_it(
    watchman_on: PrivateWatchman, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    assert watch.choose_mode(store)[0] == "watchman"
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    assert watch.choose_mode(store)[0] == "events"
    monkeypatch.setenv(watch.MODE_ENV, "watchman")
    assert watch.choose_mode(store)[0] == "watchman"  # asked for by name
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv(watch.MODE_ENV, "auto")
    monkeypatch.setenv("OKSTRA_WATCHMAN", "on")
    assert not watchman.installed()
    assert watch.choose_mode(store)[0] == "events"


def test_a_process_asks_for_the_daemons_socket_once(
    watchman_on: PrivateWatchman, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    logged = tmp_path / "bin"
    logged.mkdir()
    calls = tmp_path / "calls.log"
    program = logged / "watchman"
    program.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {watchman_on.bin / "watchman"} "$@"\n', encoding="utf-8")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{logged}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setattr(watchman, "_SOCKETS", {})
    token = watchman.changed_since(store.parent, None).token
    assert watchman.changed_since(store.parent, token).changed == set()
    watcher = StoreWatcher(store, lambda: [store])
    try:
        assert watcher.mode == "watchman", watcher.why
    finally:
        watcher.close()
    assert calls.read_text(encoding="utf-8").count("get-sockname") == 1
    watchman_on.kill()
    # The socket told before leads nowhere now: asked afresh, which starts the daemon again.
    for _ in range(5):
        if watchman.changed_since(store.parent, token).token is not None:
            break
    else:
        raise AssertionError("the daemon was not started again")
    assert calls.read_text(encoding="utf-8").count("get-sockname") >= 2


class _Said:
    """A watchman client that says the words given, one per receive()."""

    def __init__(self, *words: dict[str, object]) -> None:
        self.words = list(words)

    def receive(self) -> dict[str, object]:
        return self.words.pop(0)

    def getSubscription(self, name: str) -> None:  # pywatchman's name
        return None


def test_what_the_daemon_says_of_a_subscription_is_read_as_it_means(tmp_path: Path) -> None:
    sub = object.__new__(watchman.Subscription)
    sub._base, sub._recrawls = str(tmp_path), 0
    name = watchman.SUBSCRIPTION
    sub._client = _Said(
        {"subscription": name, "files": [".okstra/a.json"]},
        {"subscription": name, "state-enter": "hg.update"},
        {"subscription": name, "files": []},
        {"log": "a log line"},
        {"subscription": name, "is_fresh_instance": True, "files": []},
        {"subscription": name, "files": [".okstra/b.json"], "warning": "Recrawled this watch 1 time"},
        {"subscription": name, "files": [".okstra/c.json"], "warning": "Recrawled this watch 1 time"},
        {"subscription": name, "canceled": True},
    )
    assert sub.take() == (True, {os.path.join(tmp_path, ".okstra/a.json")})
    assert sub.take() == (False, set())  # another client's state names no file
    assert sub.take() == (False, set())
    assert sub.take() == (False, set())
    assert sub.take() == (True, None)  # the daemon started afresh
    assert sub.take() == (True, None)  # it recrawled: events may have been lost
    assert sub.take() == (True, {os.path.join(tmp_path, ".okstra/c.json")})  # the same count since
    with pytest.raises(watchman.Unusable):
        sub.take()
