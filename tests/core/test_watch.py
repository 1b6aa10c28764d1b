"""``okstra_core.watch``: the one owner of change detection."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from okstra_core import inotify, watch
from okstra_core.watch import StoreWatcher, choose_mode, folder_count


def _store(tmp_path: Path) -> Path:
    """A small store whose folders were last changed a minute ago (a fresh mtime is looked at twice)."""
    root = tmp_path / ".okstra"
    (root / "tasks/g/t").mkdir(parents=True)
    for folder in (root, root / "tasks", root / "tasks/g", root / "tasks/g/t"):
        st = folder.stat()
        os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))
    return root


@pytest.mark.parametrize("mode", ["events", "poll"])
def test_a_change_wakes_the_waiter_once(tmp_path: Path, mode: watch.Mode) -> None:
    root = _store(tmp_path)
    watcher = StoreWatcher(root, lambda: [root, root / "tasks", *(root / "tasks").glob("*/*")], mode=mode)
    try:
        assert watcher.mode == mode
        assert watcher.wait(timeout=1.5) is False  # nothing changed
        (root / "tasks/g/t/new.json").write_text("{}", encoding="utf-8")
        assert watcher.wait(timeout=60) is True
    finally:
        watcher.close()


def test_an_events_watcher_sees_a_change_made_as_soon_as_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watch is in place when the watcher is made (``okstra inbox --watch`` says "watching" then), even when
    putting it in place takes a while, as on a large store."""
    import time

    import watchfiles.main

    real = watchfiles.main.RustNotify

    def slow_to_watch(*args: object) -> object:
        time.sleep(0.5)
        return real(*args)

    monkeypatch.setattr(watchfiles.main, "RustNotify", slow_to_watch)
    root = _store(tmp_path)
    watcher = StoreWatcher(root, lambda: [root], mode="events")
    try:
        (root / "tasks/g/t/new.json").write_text("{}", encoding="utf-8")
        assert watcher.wait(timeout=10) is True
    finally:
        watcher.close()


def test_close_ends_a_wait_in_progress(tmp_path: Path) -> None:
    root = _store(tmp_path)
    watcher = StoreWatcher(root, lambda: [root], mode="poll", poll_seconds=0.05)
    result: list[bool] = []
    waiter = threading.Thread(target=lambda: result.append(watcher.wait()))
    waiter.start()
    watcher.close()
    waiter.join(timeout=60)
    assert result == [False]


def test_a_new_folder_in_view_counts_as_a_change_when_polling(tmp_path: Path) -> None:
    root = _store(tmp_path)
    watcher = StoreWatcher(root, lambda: sorted((root / "tasks").glob("*/*")), mode="poll", poll_seconds=0.05)
    (root / "tasks/g/u").mkdir()
    assert watcher.wait(timeout=60) is True
    watcher.close()


def test_events_give_way_to_polling_past_half_the_watch_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _store(tmp_path)  # 4 folders
    limit = tmp_path / "max_user_watches"
    monkeypatch.setattr(watch, "INOTIFY_LIMIT_FILE", limit)
    monkeypatch.setattr(watch.sys, "platform", "linux")
    monkeypatch.delenv(watch.MODE_ENV, raising=False)
    limit.write_text("6\n", encoding="ascii")  # half: 3 folders
    assert choose_mode(root)[0] == "poll" and "watch limit of 6" in choose_mode(root)[1]
    limit.write_text("8\n", encoding="ascii")  # half: 4 folders
    assert choose_mode(root) == ("events", "file events")
    monkeypatch.setenv(watch.MODE_ENV, "poll")
    assert choose_mode(root) == ("poll", "polling (asked for)")


def test_folder_count_stops_early(tmp_path: Path) -> None:
    root = _store(tmp_path)
    for n in range(10):
        (root / f"f{n}").mkdir()
    assert folder_count(root, 1000) == 14
    assert folder_count(root, 3) == 3


def _slow_full_look(tmp_path: Path, hot: bool) -> tuple[StoreWatcher, Path]:
    """A polling watcher whose full look is not due for an hour; *hot*: the task folder is in its quick look."""
    task = tmp_path / "tasks" / "g" / "t"
    task.mkdir(parents=True)
    (task / "task-manifest.json").write_text("{}", encoding="utf-8")
    everything = [tmp_path / "tasks", task, task / "task-manifest.json"]
    watcher = StoreWatcher(tmp_path, lambda: everything, hot_paths=(lambda: [task]) if hot else None, mode="poll")
    watcher.poll_interval = 3600.0
    watcher._full_due = float("inf")
    return watcher, task


def _publish(task: Path) -> None:
    """A manifest published as okstra publishes it: a new file renamed over the old one, in the task folder."""
    new = task / ".tmp-manifest"
    new.write_text('{"workflow": {}}', encoding="utf-8")
    os.replace(new, task / "task-manifest.json")


@pytest.mark.parametrize("hot", [True, False], ids=["quick-look", "full-look-only"])
def test_the_quick_look_sees_a_task_folder_change_between_full_looks(tmp_path: Path, hot: bool) -> None:
    watcher, task = _slow_full_look(tmp_path, hot)
    try:
        # Past the racy window of the files just made, so the quick look's first signature is settled.
        old = (task.stat().st_mtime_ns - 10_000_000_000) / 1e9
        os.utime(task, (old, old))
        watcher._hot_baseline = watch.signature([task]) if hot else {}
        _publish(task)
        woke = watcher.wait(timeout=10.0 if hot else 2.0)
        assert woke is hot
        if hot:
            assert watcher.take_changed() == {task}
            assert str(task) in watcher._hot_baseline
    finally:
        watcher.close()


def test_a_change_the_quick_look_reported_is_not_told_again_by_the_full_look(tmp_path: Path) -> None:
    """*told* (the store index) names what changed since the last full look, which includes what a quick look
    reported in between: the full look reports such a path again only if it changed once more."""
    task = tmp_path / "tasks" / "g" / "t"
    task.mkdir(parents=True)
    (task / "task-manifest.json").write_text("{}", encoding="utf-8")
    old = (task.stat().st_mtime_ns - 10_000_000_000) / 1e9
    os.utime(task, (old, old))
    watcher = StoreWatcher(tmp_path, list, hot_paths=lambda: [task], told=lambda: {str(task)}, mode="poll")
    try:
        watcher._full_due = watcher._hot_due = float("inf")
        for again in (False, True):
            _publish(task)
            time.sleep(0.1)  # out of the racy window: the looks are settled
            watcher._hot_due = 0.0
            assert watcher._poll_once(5.0) and watcher.take_changed() == {task}, "the quick look reports it"
            if again:
                _publish(task)
                time.sleep(0.1)
            watcher._full_due, watcher._hot_due = 0.0, float("inf")
            assert watcher._poll_once(5.0) is again
            assert watcher.take_changed() == ({task} if again else set())
            watcher._full_due = float("inf")
    finally:
        watcher.close()


def test_the_first_full_look_is_not_put_off_by_the_store_index_made_at_the_start(tmp_path: Path) -> None:
    """*told*'s first answer may make the store index (seconds of processor time on a large store). Polling looks
    again after a hundred times what a look cost; counting that one-off work put the first full look off by as
    much, so a decision made while the inbox was first read showed tens of seconds late."""
    calls: list[float] = []

    def told() -> set[str]:
        if not calls:
            busy = time.thread_time() + 0.2  # the store index made: 20 s of polling at 1 % of a core
            while time.thread_time() < busy:
                pass
        calls.append(time.monotonic())
        return set()

    watcher = StoreWatcher(tmp_path, list, told=told, mode="poll", poll_seconds=1.0)
    try:
        assert len(calls) == 1 and watcher.poll_interval == 1.0
        assert watcher._full_due - time.monotonic() <= 1.0
    finally:
        watcher.close()


@pytest.mark.parametrize("mode", ["events", "poll"])
def test_the_looks_of_the_start_are_done_once_the_first_full_look_has_asked_told_again(
    tmp_path: Path, mode: watch.Mode
) -> None:
    """What starts after a watcher's start waits for :attr:`StoreWatcher.looked`: with file events at once;
    polling, once the first full look (a poll after the start) has asked *told* a second time."""
    root = _store(tmp_path)
    asked: list[float] = []

    def told() -> set[str]:
        asked.append(time.monotonic())
        return set()

    watcher = StoreWatcher(root, lambda: [root], told=told, mode=mode, poll_seconds=0.5)
    try:
        if mode == "events":
            assert watcher.looked.is_set()
            return
        assert len(asked) == 1 and not watcher.looked.is_set()
        while not watcher.looked.is_set():
            assert watcher.wait(timeout=0.2) is False
            assert time.monotonic() - asked[0] < 30, "the first full look never came"
        assert len(asked) == 2
    finally:
        watcher.close()


def test_the_inbox_quick_look_names_every_task_folder_and_where_decisions_land(fresh_demo: Path) -> None:
    from okstra_core import layout
    from okstra_core.store import Project
    from okstra_core.workflows.inbox import HotPaths, pending_decisions, read_paths

    project = Project(fresh_demo)
    hot = HotPaths(fresh_demo)
    roots = [ref.root for ref in project.task_refs]
    quick = hot()
    assert set(roots) <= set(quick) and len(quick) < len(read_paths(project))
    waiting = next(d.task_root for d in pending_decisions(project) if d.task_root is not None)
    hot.waiting = {waiting}
    task = next(ref for ref in project.task_refs if ref.root == waiting).open()
    landing = {layout.instruction_set_dir(waiting), layout.clarification_response_path(waiting)}
    for rd in task.run_dirs:
        landing |= {rd.path / "user-responses", rd.path / "design-prep-inputs"}
    assert landing <= set(hot()), "where a decision on a waiting task lands is looked at often"
    # A new run dir shows once the task's folder changed (okstra publishes the manifest there when it prepares one).
    new_run = layout.runs_dir(waiting) / "final-verification"
    assert not new_run.exists()
    new_run.mkdir(parents=True)
    stamp = os.stat(waiting).st_mtime_ns + 1_000_000_000
    os.utime(waiting, ns=(stamp, stamp))
    assert new_run / "user-responses" in set(hot())


def _inotify_watches() -> int:
    """Inotify watches this process holds, over all its inotify instances."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
                total += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue
    return total


@pytest.fixture(params=["inotify", "watchfiles"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """File events from inotify itself (Linux), or through ``watchfiles`` (elsewhere)."""
    if request.param == "watchfiles":
        monkeypatch.setattr(inotify, "available", lambda: False)
    elif not inotify.available():
        pytest.fail("inotify is expected on the Linux machines these tests run on")
    return str(request.param)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="counts inotify watches in /proc")
def test_symlinks_in_the_store_are_never_followed(tmp_path: Path, backend: str) -> None:
    """A link up the tree (a loop through the store's parent), a link to 400 folders outside the store and one
    to ``/``: nothing outside the store is watched, and changes in it are still seen, in new folders too."""
    root = _store(tmp_path)
    for n in range(400):
        (tmp_path / "outside" / f"f{n}").mkdir(parents=True)
    reports = root / "tasks/g/t/runs/analysis/reports"
    reports.mkdir(parents=True)
    (reports / "projlink").symlink_to("../../../../../..")  # tmp_path: the store's parent
    (root / "tasks/g/outlink").symlink_to(tmp_path / "outside")  # 400 folders outside the store
    (root / "tasks/g/rootlink").symlink_to("/")
    (root / "tasks/g/other").mkdir()
    before = _inotify_watches()
    watcher = StoreWatcher(root, lambda: [root], mode="events")
    try:
        store_folders = folder_count(root, 1000)
        assert store_folders < 20
        watching = 0
        for _ in range(200):  # until the watch is set up (at most 20 s)
            watching = _inotify_watches() - before
            if watching >= store_folders:
                break
            threading.Event().wait(0.1)
        assert watching == store_folders, f"{watching} watches for {store_folders} folders"
        watcher.take_changed()
        (root / "tasks/g/other/decision.json").write_text("{}", encoding="utf-8")
        assert watcher.wait(timeout=20) is True
        assert root / "tasks/g/other/decision.json" in (watcher.take_changed() or set())
        (root / "tasks/g/other/history").mkdir()
        assert watcher.wait(timeout=20) is True
        for _ in range(200):  # the new folder is watched from now on
            if _inotify_watches() - before == store_folders + 1:
                break
            threading.Event().wait(0.1)
        watcher.wait(timeout=5)
        changed = watcher.take_changed()
        if backend == "watchfiles":
            # Watched afresh, the watcher says once that anything may have changed meanwhile (no event saw it).
            assert changed is None
        else:  # the new folder is watched on its own: anything in it lies under the path told
            assert changed == {root / "tasks/g/other/history"}
        (root / "tasks/g/other/history/timeline.json").write_text("{}", encoding="utf-8")
        assert watcher.wait(timeout=20) is True
        assert root / "tasks/g/other/history/timeline.json" in (watcher.take_changed() or set())
        assert _inotify_watches() - before == store_folders + 1
    finally:
        watcher.close()


def _files(tmp_path: Path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        path = tmp_path / f"f{i}"
        if i % 3:  # every third is missing
            path.write_text("x" * i, encoding="utf-8")
            old = time.time() - 10  # out of the racy window: two looks a moment apart agree
            os.utime(path, (old, old))
        paths.append(str(path))
    return paths


def test_a_long_look_is_shared_with_a_forked_process_and_gives_each_paths_look_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _files(tmp_path, 40)
    monkeypatch.setattr(watch, "SPLIT_AT", 10)
    monkeypatch.setattr(watch, "_may_fork", lambda: True)
    forks = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    assert watch.look_many(paths) == [watch.look_one(p) for p in paths]
    assert len(forks) == 1
    assert watch._forked_looks(paths[5:])() == [watch.look_one(p) for p in paths[5:]], "the forked half answers"


def test_a_forked_half_that_gives_no_answer_is_looked_at_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _files(tmp_path, 40)
    monkeypatch.setattr(watch, "SPLIT_AT", 10)
    monkeypatch.setattr(watch, "_may_fork", lambda: True)
    monkeypatch.setattr(watch, "_forked_looks", lambda paths: lambda: None)
    assert watch.look_many(paths) == [watch.look_one(p) for p in paths]
    monkeypatch.setattr(watch, "_forked_looks", lambda paths: lambda: [watch.MISSING])  # an answer cut short
    assert watch.look_many(paths) == [watch.look_one(p) for p in paths]


def test_work_forked_answers_or_is_stopped() -> None:
    """A forked process's bytes come back whole (larger than a pipe holds); one stopped is ended unheard; one whose
    work fails answers nothing."""
    assert watch.Forked(lambda: b"x" * 300_000).answer() == b"x" * 300_000
    slow = watch.Forked(lambda: time.sleep(60) or b"late")  # type: ignore[func-returns-value]
    started = time.monotonic()
    slow.stop()
    assert time.monotonic() - started < 30 and slow.answer() is None

    def fails() -> bytes:
        raise RuntimeError("in the forked process")

    assert watch.Forked(fails).answer() == b""


def test_a_process_running_other_threads_is_never_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "_cores", lambda: {0, 1})
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not watch._may_fork()
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert watch._may_fork()
    monkeypatch.setattr(watch, "_cores", lambda: {0})
    assert not watch._may_fork(), "one core: nothing to share"


def test_the_watchers_polling_in_one_process_share_its_polling_budget(tmp_path: Path) -> None:
    roots = [_store(tmp_path / name) for name in ("a", "b", "c")]
    before = watch._Pollers.count
    watchers = [StoreWatcher(root, lambda root=root: [root], mode="poll") for root in roots]  # type: ignore[misc]
    try:
        assert watch._Pollers.count == before + 3
        assert watch._shared(watch.POLL_SHARE) == pytest.approx(watch.POLL_SHARE / (before + 3))
        watchers.pop().close()
        assert watch._shared(watch.HOT_SHARE) == pytest.approx(watch.HOT_SHARE / (before + 2))
    finally:
        for watcher in watchers:
            watcher.close()
    events = StoreWatcher(roots[0], lambda: [roots[0]], mode="events")
    try:
        assert watch._Pollers.count == before, "a watcher on file events takes no share"
    finally:
        events.close()


def test_packed_looks_read_back_as_looked_at() -> None:
    """Packed looks read back as the tuples a look gives: times before 1970, an inode above 2**63, the marks of
    a missing and an unsettled path; a time beyond 64 bits is kept at its end."""
    sigs = [
        (1, 2, 3, 4),
        (-5_000_000_000, 7, 0, 2**64 - 1),
        watch.MISSING,
        watch.UNSETTLED,
        (2**63 - 1, 2**63 - 1, 2**63 - 1, 2**63),
    ]
    looks = watch.Looks.of(sigs)
    assert list(looks) == sigs and looks == sigs and len(looks) == 5
    assert [looks[i] for i in range(-5, 5)] == sigs * 2 and looks[1:3] == sigs[1:3] and looks[::2] == sigs[::2]
    assert watch.UNSETTLED in looks and watch.MISSING in looks and (1, 2, 3, 5) not in looks and "x" not in looks
    assert watch.UNSETTLED not in watch.Looks.of(sigs[:3])
    assert list(watch.Looks.of([(2**70, 1, 2, 3)])) == [(2**63 - 1, 1, 2, 3)]
    again = watch.Looks.from_bytes(looks.to_bytes())
    assert again == looks and watch.Looks.from_bytes(looks.to_bytes()[:-1]) is None
    with pytest.raises(IndexError):
        looks[5]


def test_packed_looks_say_where_they_differ() -> None:
    sigs = [(i, i, i, i) for i in range(3000)]
    other = list(sigs)
    for place in (0, 1023, 1024, 2999):
        other[place] = watch.MISSING
    assert list(watch.Looks.of(sigs).differing(watch.Looks.of(other))) == [0, 1023, 1024, 2999]
    assert list(watch.Looks.of(sigs).differing(watch.Looks.of(sigs))) == []
    assert watch.Looks.of(sigs) != watch.Looks.of(other) and watch.Looks.of(sigs) != sigs[:-1]


def test_a_path_still_unsettled_is_named_again(tmp_path: Path) -> None:
    """A look that finds a path unsettled twice in a row reports a change (it is read once more): the path is
    named, so that a caller reading only what changed reads it."""
    path = str(tmp_path / "a")
    watcher = StoreWatcher(tmp_path, list, mode="poll")
    try:
        before, now = {path: watch.UNSETTLED}, {path: watch.UNSETTLED}
        assert watch.changed(before, now) and watcher._report(before, now, True)
        assert watcher.take_changed() == {Path(path)}
    finally:
        watcher.close()
