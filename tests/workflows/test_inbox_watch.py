"""``okstra inbox PROJECT --watch [--json]``: the inbox, then a line per decision that starts or stops waiting."""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest

from okstra_core.workflows.inbox import KINDS

#: Long enough for a loaded machine; a healthy run sees each line within about a second.
LINE_TIMEOUT = 60.0

OKSTRA = str(Path(sys.executable).with_name("okstra"))
CHECKOUT = ".okstra/tasks/checkout"
SIDECAR = f"{CHECKOUT}/address-validation/runs/option-selection/user-responses/user-response-option-selection-001.md"


class Watch:
    """A running ``okstra inbox --watch`` whose output lines are read with a timeout."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.errors: list[str] = []
        threading.Thread(target=self._pump, args=(proc.stdout, self.lines), daemon=True).start()
        self._drained = threading.Thread(target=self._drain, args=(proc.stderr,), daemon=True)
        self._drained.start()

    @staticmethod
    def _pump(stream: IO[str] | None, into: queue.Queue[str | None]) -> None:
        assert stream is not None
        for line in stream:
            into.put(line.rstrip("\n"))
        into.put(None)

    def _drain(self, stream: IO[str] | None) -> None:
        assert stream is not None
        self.errors.extend(stream)

    def line(self) -> str:
        got = self.lines.get(timeout=LINE_TIMEOUT)
        assert got is not None, f"okstra inbox --watch ended early: {''.join(self.errors)}"
        return got

    def events(self, count: int) -> list[dict[str, Any]]:
        return [json.loads(self.line()) for _ in range(count)]

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=LINE_TIMEOUT)

    def said(self) -> str:
        """What the watcher wrote on standard error: all of it once it has ended (a failed stop says why)."""
        self._drained.join(LINE_TIMEOUT)
        return "".join(self.errors)


@contextmanager
def watching(root: Path, *extra: str, mode: str = "auto") -> Iterator[Watch]:
    env = {**os.environ, "OKSTRA_WATCH": mode}
    proc = subprocess.Popen(
        [OKSTRA, "inbox", str(root), "--watch", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    watch = Watch(proc)
    try:
        yield watch
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=LINE_TIMEOUT)


def _wait_watching(watch: Watch) -> None:
    """Wait until the watcher is set up (its stderr line), so that a change made next is seen."""
    deadline = threading.Event()
    for _ in range(int(LINE_TIMEOUT * 20)):
        if any("watching" in e for e in watch.errors):
            return
        deadline.wait(0.05)
    raise AssertionError(f"no 'watching' line: {watch.errors}")


def _keyed(items: list[dict[str, Any]]) -> set[tuple[str, str, str, str | None]]:
    return {(i["kind"], i["task"], i["path"], i["item"]) for i in items}


@pytest.mark.parametrize("mode", ["events", "poll"])
def test_json_lines_report_every_kind_leaving_and_coming_back(fresh_demo: Path, mode: str) -> None:
    with watching(fresh_demo, "--json", mode=mode) as watch:
        snapshot = json.loads(watch.line())
        assert (snapshot["version"], snapshot["event"]) == (1, "snapshot")
        items = snapshot["items"]
        assert {i["kind"] for i in items} == set(KINDS)  # the demo keeps one decision of each kind open
        _wait_watching(watch)
        checkout = fresh_demo / CHECKOUT
        checkout.rename(fresh_demo / ".okstra/checkout-away")
        waiting = [i for i in items if ":checkout:" in i["task"]]
        gone = watch.events(len(waiting))
        assert {e["event"] for e in gone} == {"removed"}
        assert _keyed([e["item"] for e in gone]) == _keyed(waiting)
        (fresh_demo / ".okstra/checkout-away").rename(checkout)
        back = watch.events(len(waiting))
        assert {e["event"] for e in back} == {"added"}
        assert _keyed([e["item"] for e in back]) == _keyed(waiting)
        assert all(list(e["item"]) == ["kind", "task", "path", "item", "summary", "since"] for e in back)
        assert watch.stop(signal.SIGTERM) == 0, watch.said()
    assert not any("Traceback" in e for e in watch.errors)


def test_a_decision_made_and_undone_by_another_process(fresh_demo: Path) -> None:
    sidecar = fresh_demo / SIDECAR
    data = sidecar.read_bytes()
    with watching(fresh_demo, "--json") as watch:
        watch.line()
        _wait_watching(watch)
        sidecar.unlink()  # the choice is gone: planning-prepare leaves, direction-choice comes
        events = watch.events(2)
        assert [(e["event"], e["item"]["kind"]) for e in events] == [
            ("removed", "planning-prepare"),
            ("added", "direction-choice"),
        ]
        sidecar.write_bytes(data)
        events = watch.events(2)
        assert [(e["event"], e["item"]["kind"]) for e in events] == [
            ("removed", "direction-choice"),
            ("added", "planning-prepare"),
        ]
        assert watch.stop(signal.SIGINT) == 0, watch.said()


def test_the_store_removed_and_made_again(fresh_demo: Path) -> None:
    okstra = fresh_demo / ".okstra"
    with watching(fresh_demo, "--json") as watch:
        count = len(json.loads(watch.line())["items"])
        _wait_watching(watch)
        okstra.rename(fresh_demo / "okstra-backup")
        assert {e["event"] for e in watch.events(count)} == {"removed"}
        (fresh_demo / "okstra-backup").rename(okstra)
        assert {e["event"] for e in watch.events(count)} == {"added"}
        assert watch.stop() == 0, watch.said()


def test_a_flood_of_files_is_one_reread(fresh_demo: Path) -> None:
    flood = fresh_demo / CHECKOUT / "fraud-rules/notes"
    with watching(fresh_demo, "--json") as watch:
        watch.line()
        _wait_watching(watch)
        flood.mkdir(exist_ok=True)
        for n in range(3000):
            (flood / f"20261130T0000{n:04d}Z-note.md").write_text("x", encoding="utf-8")
        (fresh_demo / SIDECAR).unlink()
        events = watch.events(2)  # nothing about the notes: they change no decision
        assert [(e["event"], e["item"]["kind"]) for e in events] == [
            ("removed", "planning-prepare"),
            ("added", "direction-choice"),
        ]
        assert watch.stop() == 0, watch.said()


def test_text_lines_mark_added_and_removed(fresh_demo: Path) -> None:
    with watching(fresh_demo) as watch:
        while not watch.line().endswith("tasks"):  # the snapshot ends with its count line
            pass
        _wait_watching(watch)
        (fresh_demo / SIDECAR).unlink()
        removed, added = watch.line(), watch.line()
        assert removed.startswith("- ") and "demo-shop:checkout:address-validation  planning-prepare IO-" in removed
        assert added.startswith("+ ") and "demo-shop:checkout:address-validation  direction-choice:" in added
        assert watch.stop() == 0, watch.said()


def test_not_a_project_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [OKSTRA, "inbox", str(tmp_path / "missing"), "--watch"], capture_output=True, text=True, timeout=LINE_TIMEOUT
    )
    assert result.returncode != 0 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_reading_only_the_changed_tasks_agrees_with_reading_everything(fresh_demo: Path) -> None:
    from okstra_core.layout import task_root_of
    from okstra_core.store import Project
    from okstra_core.workflows.inbox import read_inbox, refresh_inbox

    project = Project(fresh_demo)
    before = read_inbox(project)
    sidecar = fresh_demo / SIDECAR
    sidecar.unlink()
    manifest = fresh_demo / ".okstra/tasks/payments/refund-ledger/task-manifest.json"
    manifest.write_text("{broken", encoding="utf-8")
    roots = {task_root_of(fresh_demo, p) for p in (sidecar, manifest)}
    assert None not in roots and len(roots) == 2
    refreshed = refresh_inbox(Project(fresh_demo), before, {r for r in roots if r is not None})
    full = read_inbox(Project(fresh_demo))
    assert refreshed == full
    assert ".okstra/tasks/payments/refund-ledger/task-manifest.json" in refreshed.unreadable
    assert task_root_of(fresh_demo, fresh_demo / ".okstra/discovery/task-catalog.json") is None
    assert task_root_of(fresh_demo, fresh_demo / ".okstra/tasks/payments") is None


@pytest.mark.parametrize("mode", ["events", "poll"])
def test_the_watcher_says_which_paths_changed(tmp_path: Path, mode: str) -> None:
    from okstra_core.watch import CHANGED_MAX, StoreWatcher

    root = tmp_path / ".okstra"
    folder = root / "tasks/g/t"
    folder.mkdir(parents=True)
    for made in (root, root / "tasks", root / "tasks/g", folder):  # older than a clock tick: settled
        os.utime(made, ns=(made.stat().st_atime_ns, made.stat().st_mtime_ns - 60_000_000_000))
    watcher = StoreWatcher(root, lambda: [root, folder, *folder.iterdir()], mode=mode, poll_seconds=0.2)  # type: ignore[arg-type]
    try:
        (folder / "a.json").write_text("{}", encoding="utf-8")
        assert watcher.wait(timeout=LINE_TIMEOUT)
        changed = watcher.take_changed()
        assert changed is not None and changed <= {folder, folder / "a.json"} and changed
        assert watcher.take_changed() == set()
        watcher._note_changed(str(n) for n in range(CHANGED_MAX + 1))
        assert watcher.take_changed() is None  # too many: the caller reads everything again
    finally:
        watcher.close()


#: ``okstra inbox --watch --json`` in which a decision is made right after the first reading of the inbox.
_DECIDE_AFTER_FIRST_READ = """
import sys
import time
from pathlib import Path

import okstra_core.workflows.inbox as inbox
from okstra_core import cli

read = inbox.read_inbox
decided = []


def read_then_decide(project):
    got = read(project)
    if not decided:
        decided.append(True)
        Path(sys.argv[1]).unlink()
        time.sleep(0.2)  # older than a clock tick: a look taken now sees the change as settled
    return got


inbox.read_inbox = read_then_decide
sys.exit(cli.main(["inbox", sys.argv[2], "--watch", "--json"]))
"""


@pytest.mark.parametrize("mode", ["events", "poll"])
def test_a_decision_made_during_the_first_reading_is_reported(fresh_demo: Path, mode: str) -> None:
    """The watcher starts before the inbox is read: nothing made in between is lost."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _DECIDE_AFTER_FIRST_READ, str(fresh_demo / SIDECAR), str(fresh_demo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OKSTRA_WATCH": mode},
    )
    watch = Watch(proc)
    try:
        snapshot = json.loads(watch.line())
        assert "planning-prepare" in {i["kind"] for i in snapshot["items"]}  # read before the decision
        events = watch.events(2)
        assert [(e["event"], e["item"]["kind"]) for e in events] == [
            ("removed", "planning-prepare"),
            ("added", "direction-choice"),
        ]
        assert watch.stop() == 0, watch.said()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=LINE_TIMEOUT)


def test_the_events_are_watched_before_the_watcher_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through ``watchfiles`` (where there is no inotify), file events are set up in a thread; the watcher waits
    for them, so a change made next is seen. (From inotify, the watches are set up before the thread starts.)"""
    import watchfiles

    from okstra_core import inotify
    from okstra_core.watch import StoreWatcher

    monkeypatch.setattr(inotify, "available", lambda: False)

    set_up = threading.Event()

    def slow_watch(*paths: Path, stop_event: Any, **options: Any) -> Iterator[set[tuple[int, str]]]:
        set_up.wait(0.5)  # setting up the watches on a large tree takes a while
        set_up.set()
        while not stop_event.is_set():
            set_up.wait(0.01)
        yield from ()

    monkeypatch.setattr(watchfiles, "watch", slow_watch)
    watcher = StoreWatcher(tmp_path, lambda: [tmp_path], mode="events")
    try:
        assert set_up.is_set()
    finally:
        watcher.close()


def _obeys_chmod() -> list[str]:
    """A command prefix under which ``chmod 000`` holds (skips where none can be had)."""
    from .test_inbox_unlistable import _without_permission_override

    prefix = _without_permission_override()
    if prefix is None:
        pytest.skip("root without setpriv: this process reads any folder whatever its mode")
    return prefix


@pytest.mark.parametrize("mode", ["events", "poll"])
def test_json_lines_say_a_folder_could_not_be_listed(fresh_demo: Path, mode: str) -> None:
    """chmod 000 on a task group: an "unreadable" event comes before the removals, and another when it lists again."""
    prefix = _obeys_chmod()
    group = fresh_demo / CHECKOUT
    proc = subprocess.Popen(
        [*prefix, OKSTRA, "inbox", str(fresh_demo), "--watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OKSTRA_WATCH": mode},
    )
    watch = Watch(proc)
    try:
        items = json.loads(watch.line())["items"]
        waiting = [i for i in items if ":checkout:" in i["task"]]
        _wait_watching(watch)
        group.chmod(0)
        probe = subprocess.run([*prefix, "ls", str(group)], capture_output=True, check=False)
        if probe.returncode == 0:
            pytest.skip("this process lists a chmod 000 folder (permissions are not enforced here)")
        told = watch.events(1 + len(waiting))
        assert told[0] == {"version": 1, "event": "unreadable", "unreadable": 1, "unreadablePaths": [f"{CHECKOUT}/"]}
        assert {e["event"] for e in told[1:]} == {"removed"}
        group.chmod(0o755)
        told = watch.events(1 + len(waiting))
        assert told[0] == {"version": 1, "event": "unreadable", "unreadable": 0, "unreadablePaths": []}
        assert {e["event"] for e in told[1:]} == {"added"}
        assert watch.stop() == 0, watch.said()
    finally:
        group.chmod(0o755)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=LINE_TIMEOUT)


def _aged(root: Path) -> None:
    """Every store file and folder written a while ago, out of the racy window (a path written within it is
    looked at as changed again at the next look)."""
    from okstra_core import layout

    for folder, _, files in os.walk(layout.okstra_dir(root)):
        for name in [*files, "."]:
            stamp = os.stat(os.path.join(folder, name)).st_mtime_ns - 5_000_000_000
            os.utime(os.path.join(folder, name), ns=(stamp, stamp))


def _approve(root: Path, task_id: str) -> None:
    from okstra_core.store import Project
    from okstra_core.workflows.tasks import update_task_manifest

    task = Project(root).find_task(task_id)
    assert task is not None

    def approve(manifest: Any) -> Any:
        manifest.workflow.awaiting_approval = not manifest.workflow.awaiting_approval
        return manifest

    update_task_manifest(root, task.root, approve)
    _aged(root)


@pytest.mark.parametrize("cached", [True, False])
def test_what_the_inbox_read_is_told_changed_as_a_fresh_look_sees_it(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    """A polling watcher's told part (the store index; ``--no-cache``: a baseline of a fresh reading) names, after
    a change, exactly the paths a fresh reading had read whose look changed; nothing while nothing changed; and,
    through the index, it reads no task again while nothing changed."""
    from okstra_core.check.cache import open_store_index
    from okstra_core.commands.common import polled
    from okstra_core.store import Project
    from okstra_core.watch import signature
    from okstra_core.workflows import inbox
    from okstra_core.workflows.inbox import read_paths

    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    _aged(fresh_demo)
    opened: list[Path] = []
    monkeypatch.setattr(
        "okstra_core.check.cache.open_store_index",
        lambda root, *a, **k: opened.append(root) or open_store_index(root, *a, **k),
    )
    looked, told = polled(argparse.Namespace(no_cache=not cached, cache_dir=None), fresh_demo)
    assert looked() == []
    before = signature(read_paths(Project(fresh_demo)))
    assert told() == set()  # the first answer is the baseline (cold: the index is built)
    scans: list[object] = []
    scan = inbox._scan
    monkeypatch.setattr(inbox, "_scan", lambda task: scans.append(task) or scan(task))
    assert told() == set()
    assert not scans or not cached, "a warm look read tasks again"
    for task_id in ("checkout/saved-cards", "checkout/saved-cards", "demo-shop:platform:ci-speedup"):
        _approve(fresh_demo, task_id)
        after = signature(read_paths(Project(fresh_demo)))
        expected = {path for path, sig in before.items() if after.get(path) != sig}
        assert expected and told() == expected
        assert told() == set()
        before = after
    assert bool(opened) == cached


def test_a_store_index_kept_by_another_process_meanwhile_cannot_say_which(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process that kept the inbox between two looks recorded newer looks: a change made before it would
    not show against them, so the look answers "cannot say which" (None), and names changes again after."""
    from okstra_core.check.cache import open_store_index
    from okstra_core.store import Project
    from okstra_core.workflows.inbox import InboxTold, read_inbox

    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    _aged(fresh_demo)
    told = InboxTold(fresh_demo, lambda look: open_store_index(fresh_demo, look=look))
    assert told() == set()
    _approve(fresh_demo, "checkout/saved-cards")
    index = open_store_index(fresh_demo)
    assert not isinstance(index, str)
    with index:  # an ``okstra inbox`` run elsewhere
        read_inbox(Project(fresh_demo), index)
    assert told() is None
    assert told() == set()
    _approve(fresh_demo, "checkout/saved-cards")
    assert told()


def test_a_first_look_names_what_changed_since_another_reader_kept_the_inbox(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workbench's feed looks first once its count at the start kept the inbox in the store index: what
    changed since then is named by that first look, and a polling watcher's first wait reports it (a view that
    read before it would otherwise show the past)."""
    from okstra_core import layout
    from okstra_core.check.cache import open_store_index
    from okstra_core.store import Project
    from okstra_core.watch import StoreWatcher
    from okstra_core.workflows.inbox import InboxTold, read_inbox

    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    _aged(fresh_demo)
    index = open_store_index(fresh_demo)
    assert not isinstance(index, str)
    with index:  # the count at the start
        read_inbox(Project(fresh_demo), index)
    _approve(fresh_demo, "checkout/saved-cards")
    task = Project(fresh_demo).find_task("checkout/saved-cards")
    assert task is not None
    manifest = str(layout.task_manifest_path(task.root))
    assert manifest in InboxTold(fresh_demo, lambda look: open_store_index(fresh_demo, look=look))()
    _approve(fresh_demo, "checkout/saved-cards")
    told = InboxTold(fresh_demo, lambda look: open_store_index(fresh_demo, look=look))
    watcher = StoreWatcher(layout.okstra_dir(fresh_demo), list, told=told, mode="poll")
    try:
        assert watcher.wait(timeout=5.0)
        changed = watcher.take_changed()
        assert changed is not None and Path(manifest) in changed
    finally:
        watcher.close()
