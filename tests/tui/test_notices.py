"""Notices: a toast when a decision starts waiting or a run ends, written by another process while the app runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from okstra_core import writes
from okstra_core.store import Project
from okstra_tui.app import OkstraApp
from okstra_tui.notices import NoticeWatcher, desktop_sequence, plain, summary
from okstra_tui.screens.inbox import InboxScreen
from okstra_tui.screens.task import TaskScreen
from okstra_tui.screenshots import settle

from .conftest import SIZE, wait_until

TASKS = ".okstra/tasks"
SIDECAR = "checkout/address-validation/runs/option-selection/user-responses/user-response-option-selection-001.md"
QUIET_TASKS = ("payments/retry-policy", "search/index-rebuild", "search/query-latency", "search/stale-cache")


def _app(root: Path, notify: str = "toast") -> OkstraApp:
    project = Project.open(root)
    assert isinstance(project, Project)
    return OkstraApp(project, notify=notify)  # type: ignore[arg-type]


def elsewhere(code: str) -> None:
    """Run *code* in another process (as an agent writing the store would)."""
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, timeout=120)


def _set_manifests(root: Path, tasks: tuple[str, ...], **fields: object) -> None:
    """Rewrite the manifests of *tasks* (group/task) in one other process, each published by a rename."""
    elsewhere(f"""
        import json, os
        for task in {list(tasks)!r}:
            path = os.path.join({str(root / TASKS)!r}, task, "task-manifest.json")
            value = json.load(open(path, encoding="utf-8"))
            for dotted, new in {fields!r}.items():
                *parents, last = dotted.split(".")
                node = value
                for key in parents:
                    node = node.setdefault(key, {{}})
                node[last] = new
            with open(path + ".new", "w", encoding="utf-8") as fh:
                json.dump(value, fh)
            os.replace(path + ".new", path)
    """)


def _toasts(app: OkstraApp) -> list[tuple[str, str]]:
    return [(n.title, n.message) for n in app._notifications]


async def _watching(pilot: Pilot[None], app: OkstraApp) -> NoticeWatcher:
    """Wait until the app's watching child has read the store's first pulse; its watcher."""
    await wait_until(pilot, lambda: app._notices is not None and app._notices.ready, "watching")
    assert app._notices is not None
    return app._notices


async def test_a_decision_that_starts_waiting_is_a_toast_and_g_opens_the_inbox(fresh_demo: Path) -> None:
    app = _app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _watching(pilot, app)
        elsewhere(f"import os; os.unlink({str(fresh_demo / TASKS / SIDECAR)!r})")
        await wait_until(pilot, lambda: app.latest_notices, "a notice")
        assert [(n.kind, n.task) for n in app.latest_notices] == [("decision", "demo-shop:checkout:address-validation")]
        await wait_until(pilot, lambda: _toasts(app), "the toast shown")  # a notification reaches the app by message
        (title, message), *_ = _toasts(app)
        assert title == "Waiting for you"
        assert message.startswith("demo-shop:checkout:address-validation: a direction to choose: choose a direction")
        assert message.endswith(" · g opens it")
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, InboxScreen)


async def test_runs_that_end_are_toasts_and_g_opens_the_task(fresh_demo: Path) -> None:
    app = _app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _watching(pilot, app)
        _set_manifests(fresh_demo, ("search/index-rebuild",), latestRunStatus="error")
        await wait_until(pilot, lambda: app.latest_notices, "a failed run")
        assert [(n.kind, n.task) for n in app.latest_notices] == [("run-failed", "demo-shop:search:index-rebuild")]
        assert "run ended: error" in app.latest_notices[0].text
        app.latest_notices = []
        _set_manifests(fresh_demo, ("search/index-rebuild",), latestRunStatus="completed")
        await wait_until(pilot, lambda: app.latest_notices, "a completed run")
        assert [(n.kind, n.text.endswith("run completed")) for n in app.latest_notices] == [("run-completed", True)]
        await wait_until(pilot, lambda: len(_toasts(app)) >= 2, "both toasts shown")
        titles = [title for title, _ in _toasts(app)]
        assert titles.count("Run failed") == 1 and titles.count("Run completed") == 1
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, TaskScreen)
        assert app.screen.location.task == fresh_demo / TASKS / "search/index-rebuild"


async def test_a_burst_is_one_summary_toast(fresh_demo: Path) -> None:
    app = _app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _watching(pilot, app)
        before = len(_toasts(app))
        _set_manifests(fresh_demo, QUIET_TASKS, **{"workflow.awaitingApproval": True})
        await wait_until(pilot, lambda: len(app.latest_notices) == len(QUIET_TASKS), "four approvals")
        await wait_until(pilot, lambda: len(_toasts(app)) > before, "the summary toast shown")
        await settle(pilot)
        toasts = _toasts(app)[before:]
        assert toasts == [("Since the last look", "4 decisions waiting in 4 tasks · g opens the first")]


async def test_desktop_notices_carry_our_sequence_and_no_store_byte_raw(fresh_demo: Path) -> None:
    app = _app(fresh_demo, notify="desktop")
    sent: list[str] = []
    rang: list[bool] = []
    app.write_to_terminal = sent.append  # type: ignore[method-assign]
    app.bell = lambda: rang.append(True)  # type: ignore[method-assign]
    hostile = "ship it\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u009b31m;done"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _watching(pilot, app)
        _set_manifests(
            fresh_demo,
            ("search/stale-cache",),
            **{"workflow.awaitingApproval": True, "workflow.nextRecommendedPhase.rationale": hostile},
        )
        await wait_until(pilot, lambda: sent, "a desktop notification")
    assert rang == [True]
    (sequence,) = sent
    assert sequence.startswith("\x1b]9;Waiting for you: demo-shop:search:stale-cache: a phase to approve")
    assert sequence.endswith("\x1b\\")
    inner = sequence[len("\x1b]9;") : -2]
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in inner)
    assert ";" not in inner and "ship it" in inner and "52" in inner


async def test_own_writes_raise_no_notice(fresh_demo: Path) -> None:
    app = _app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _watching(pilot, app)
        manifest = fresh_demo / TASKS / "search/query-latency/task-manifest.json"

        def approve(current: bytes | None) -> bytes:
            assert current is not None
            value = json.loads(current)
            value["workflow"]["awaitingApproval"] = True
            return json.dumps(value).encode()

        writes.replace_locked(fresh_demo, manifest, approve)  # the workbench's own write
        _set_manifests(fresh_demo, ("search/stale-cache",), **{"workflow.awaitingApproval": True})  # an agent's
        await wait_until(pilot, lambda: app.latest_notices, "the agent's notice")
        await settle(pilot)
        assert {n.task for n in app.latest_notices} == {"demo-shop:search:stale-cache"}


async def test_the_watching_child_ends_with_the_app(fresh_demo: Path) -> None:
    app = _app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        child = (await _watching(pilot, app))._child
        assert child is not None
        assert child.poll() is None  # the pulse is read and watched there, not in the workbench
    assert child.poll() is not None


async def test_notify_off_watches_nothing(fresh_demo: Path) -> None:
    app = _app(fresh_demo, notify="off")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app._notices is None


def test_desktop_sequences_are_built_from_plain_text() -> None:
    assert desktop_sequence("T", "a;b\x07c", {"TERM": "xterm-256color"}) == "\x1b]9;T: a,b c\x1b\\"
    assert desktop_sequence("T\x1b", "body", {"TERM": "foot"}) == "\x1b]777;notify;T ;body\x1b\\"
    assert plain("x" * 300).endswith("…") and len(plain("x" * 300)) == 200


def test_summary_counts_kinds_and_tasks() -> None:
    from okstra_core.workflows.pulse import Notice

    found = [
        Notice("decision", "p:g:a", "", None),
        Notice("decision", "p:g:b", "", None),
        Notice("run-failed", "p:g:a", "", None),
        Notice("run-completed", "p:g:c", "", None),
    ]
    assert summary(found) == "2 decisions waiting, 1 run completed, 1 run failed in 3 tasks"


async def test_a_task_that_newly_fails_the_check_is_a_toast(fresh_demo: Path) -> None:
    app = _app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notices = await _watching(pilot, app)
        await wait_until(pilot, lambda: notices.checks_ready, "the baseline check")
        manifest = next((fresh_demo / TASKS / "search/stale-cache/runs").rglob("run-manifest-*.json"))
        elsewhere(f"open({str(manifest)!r}, 'w').write('{{broken')")
        await wait_until(pilot, lambda: any(n.kind == "check-failed" for n in app.latest_notices), "a check notice")
        (notice,) = [n for n in app.latest_notices if n.kind == "check-failed"]
        assert notice.task == "demo-shop:search:stale-cache"
        assert re.fullmatch(r"[0-9]+ check errors?: invalid JSON: .*", notice.text), notice.text
        expected = ("Check failed", f"{notice.task}: {notice.text} · g opens it")
        await wait_until(pilot, lambda: expected in _toasts(app), "the check toast shown")
        await pilot.press("g")
        await settle(pilot)
        from okstra_tui.screens.checks import ChecksScreen

        assert isinstance(app.screen, ChecksScreen)


def _ended(pid: int) -> bool:
    """Whether process *pid* has ended (a zombie no one reaps has ended too)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_the_baseline_check_ends_with_the_workbench_that_started_it(fresh_demo: Path, tmp_path: Path) -> None:
    import os
    import time

    # The child's check is made to take minutes (as on a large store); its parent then dies without closing it.
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(
        "import time\nimport okstra_core.cli as cli\n_main = cli.main\n"
        "def main(argv=None):\n    time.sleep(300)\n    return _main(argv)\ncli.main = main\n",
        encoding="utf-8",
    )
    parent = textwrap.dedent(
        """
        import os, sys
        from pathlib import Path
        from okstra_tui.notices import CheckBaseline
        baseline = CheckBaseline(Path(sys.argv[1]))
        print(baseline._child.pid, flush=True)
        os._exit(0)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(slow), *sys.path])}
    out = subprocess.run([sys.executable, "-c", parent, str(fresh_demo)], capture_output=True, text=True, env=env)
    pid = int(out.stdout.strip())
    deadline = time.monotonic() + 60  # a bound on a hang, not a measure of speed
    while not _ended(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    ended = _ended(pid)
    if not ended:
        os.kill(pid, 9)
    assert ended, "the baseline check outlived the workbench that started it"


def test_only_the_watching_childs_own_lines_are_notices() -> None:
    from okstra_tui.notices import _parse_line

    good = (
        '{"notices": [{"kind": "decision", "task": "p:g:t", "text": "pick one", "taskRoot": "/p/.okstra/tasks/g/t"}]}'
    )
    (notice,) = _parse_line(good)  # type: ignore[misc]
    assert (notice.kind, notice.task, notice.task_root) == ("decision", "p:g:t", Path("/p/.okstra/tasks/g/t"))
    assert _parse_line('{"event": "ready"}') == "ready"
    for bad in (
        "Traceback (most recent call last):",
        "[]",
        '{"notices": [{"kind": "nope", "task": "t", "text": "", "taskRoot": null}]}',
        '{"notices": [{"kind": "decision"}]}',
    ):
        assert _parse_line(bad) is None, bad


def _watch_in_process(root: Path) -> list[str]:
    """Run the notices' loop here until its baseline check has ended; what happened in order: the baseline check
    started or ended, the pulse read, the watcher ready."""
    import time

    import okstra_tui.notices as notices
    from okstra_tui.data import catalog

    happened: list[str] = []

    def changes() -> Iterator[frozenset[str] | None]:
        deadline = time.monotonic() + 120  # a bound on a hang, not a measure of speed
        while "check ended" not in happened and time.monotonic() < deadline:
            time.sleep(0.05)
        yield from ()

    reading = catalog.through_index

    class Baseline(notices.CheckBaseline):
        def __init__(self, root: Path, *, here: bool = False) -> None:
            happened.append("check started here" if here else "check started")
            super().__init__(root, here=here)
            if here:
                assert self._child is None, "a check run here started a child all the same"
                happened.append("check ended")

        def wait_ready(self) -> bool:
            ready = super().wait_ready()
            happened.append("check ended")
            return ready

    def through_index(*args: object) -> object:
        happened.append("pulse read")
        return reading(*args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(notices, "CheckBaseline", Baseline)
        mp.setattr(catalog, "through_index", through_index)
        notices.watch_store(root, lambda: happened.append("ready"), lambda found: None, changes=changes())
    return happened


def test_a_kept_check_runs_alone_before_the_pulse_is_read(fresh_demo: Path) -> None:
    # Never checked with the cache: the pulse first, the check beside the pulse held.
    first = _watch_in_process(fresh_demo)
    assert first[:2] == ["pulse read", "check started"] and {"ready", "check ended"} <= set(first), first
    # That check kept its records: the next watcher's check runs first, in the notices' own process (no second
    # interpreter beside it), and ends before the pulse is read.
    second = _watch_in_process(fresh_demo)
    assert second[:3] == ["check started here", "check ended", "pulse read"] and "ready" in second, second


def test_the_baseline_run_here_counts_what_the_child_counts_and_prints_nothing(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run in the notices' process, the baseline check is the child's own ``okstra check``: the same errors per
    task, and nothing of its output on the standard output, which is the notices' pipe to the workbench."""
    from okstra_tui.notices import CheckBaseline

    manifest = next((fresh_demo / TASKS / "search/stale-cache/runs").rglob("run-manifest-*.json"))
    manifest.write_text("{broken", encoding="utf-8")
    child = CheckBaseline(fresh_demo)
    assert child.wait_ready() and child.errors
    capsys.readouterr()
    here = CheckBaseline.run_here(fresh_demo)
    assert here.ready() and here.errors == child.errors
    assert any("stale-cache" in str(task) for task in here.errors)
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_a_baseline_run_here_that_cannot_run_leaves_the_notices_going(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check that ends the way a command does (an exit, a failure) in the notices' process is no baseline:
    no check notices, and the notices' process goes on."""
    import okstra_core.cli as cli
    from okstra_tui.notices import CheckBaseline

    def exits(argv: list[str]) -> int:
        print("partial output")
        raise SystemExit(2)

    monkeypatch.setattr(cli, "main", exits)
    baseline = CheckBaseline.run_here(fresh_demo)
    assert baseline.errors is None and not baseline.ready()
    assert capsys.readouterr().out == ""


def test_records_another_checker_kept_leave_the_pulse_first(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records kept by another version of okstra are no reuse: the check would be a whole one, and the notices
    do not wait for it."""
    from okstra_core.check import cache

    _watch_in_process(fresh_demo)  # this version's records, kept
    assert cache.check_kept(fresh_demo)
    monkeypatch.setattr(cache, "checker_fingerprint", lambda: "another version")
    assert not cache.check_kept(fresh_demo)
    assert _watch_in_process(fresh_demo)[:2] == ["pulse read", "check started"]


def _drained(fed: list[frozenset[str] | None]) -> list[frozenset[str] | None]:
    """The bursts *fed* as a reader busy until every one was taken from the pipe reads them."""
    import threading

    from okstra_tui.notices import _Bursts

    given = threading.Event()

    def source() -> Iterator[frozenset[str] | None]:
        yield from fed
        given.set()

    bursts = _Bursts(source())
    # Nobody reads yet (the reader is busy): every burst is taken from the pipe all the same.
    assert given.wait(10), "the bursts were not drained while the reader was busy"
    return list(bursts)


def test_bursts_are_drained_as_they_come_and_merged_while_the_reader_is_busy() -> None:
    from okstra_tui.notices import MERGED_PATHS_MAX

    assert _drained([frozenset({"a"}), frozenset({"b", "c"}), frozenset({"a"})]) == [frozenset({"a", "b", "c"})]
    # A burst that cannot say which, or too many paths, make the merged burst None; the end comes after it.
    assert _drained([frozenset({"a"}), None, frozenset({"b"})]) == [None]
    assert _drained([frozenset(str(i) for i in range(MERGED_PATHS_MAX)), frozenset({"x"})]) == [None]
    assert _drained([]) == []
