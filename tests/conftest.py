"""Shared fixtures: demo projects made by the core's own write path."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.manager_home import list_managers
from okstra_core.store import Project

#: Where the suite's temporary folders go when the machine has a memory file system: the tests kill processes
#: and corrupt files, they never cut the power, so nothing they prove depends on the disk, and on a disk the
#: store's fsyncs take about a third of the run.
MEMORY_TEMP = Path("/dev/shm")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Temporary folders (``tmp_path``, ``tmp_path_factory``) in memory, unless ``--basetemp`` or
    ``PYTEST_DEBUG_TEMPROOT`` already say where; the xdist workers get theirs inside the controller's.

    Only failed tests keep their folders (``tmp_path_retention_policy``), so the memory a run holds stays small.
    """
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return
    if MEMORY_TEMP.is_dir() and os.access(MEMORY_TEMP, os.W_OK | os.X_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(MEMORY_TEMP)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never touch a real ``~/.okstra``."""
    monkeypatch.setenv("OKSTRA_HOME", str(tmp_path_factory.mktemp("okstra-home")))


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never write the user's real cache folder (``~/.cache/okstra``)."""
    monkeypatch.delenv("OKSTRA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never write the user's real state folder (``~/.local/state/okstra``: the check cache's key)."""
    monkeypatch.delenv("OKSTRA_CACHE_KEY", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("OKSTRA_STATE_DIR", str(tmp_path_factory.mktemp("okstra-state")))


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never read or write the user's real configuration folder (``~/.config/okstra``: view preferences)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))


@pytest.fixture(autouse=True)
def _quiet_notices(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workbench watches the store for notices only in the tests about them (they ask for it)."""
    monkeypatch.setenv("OKSTRA_NOTIFY", "off")


@pytest.fixture(autouse=True)
def _no_user_watchman(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach the user's watchman daemon: watchman is off unless a test asks for the private one."""
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    monkeypatch.delenv("WATCHMAN_SOCK", raising=False)


class PrivateWatchman:
    """A watchman daemon of the test session's own (its socket, state, log and pid files in *folder*), reached
    through a ``watchman`` program in :attr:`bin` that names them, so that okstra starts it as it would start a
    user's daemon."""

    def __init__(self, folder: Path) -> None:
        program = shutil.which("watchman")
        if program is None:
            pytest.fail(
                "watchman is not installed: .ci/run installs Debian's watchman package (apt-get install watchman)"
            )
        self.program = program
        self.folder = folder
        self.bin = folder / "bin"
        self.bin.mkdir()
        self.options = [
            f"--sockname={folder / 'sock'}",
            f"--statefile={folder / 'state'}",
            f"--logfile={folder / 'log'}",
            f"--pidfile={folder / 'pid'}",
        ]
        wrapper = self.bin / "watchman"
        wrapper.write_text(f'#!/bin/sh\nexec {program} {" ".join(self.options)} "$@"\n', encoding="utf-8")
        wrapper.chmod(0o755)

    def run(self, *args: str) -> str:
        done = subprocess.run([str(self.bin / "watchman"), *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"watchman {' '.join(args)}: {done.stderr or done.stdout}"
        return done.stdout

    def pid(self) -> int | None:
        try:
            return int((self.folder / "pid").read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return None

    def kill(self) -> None:
        """Kill the daemon as a crash would (SIGKILL), and wait until it is gone."""
        pid = self.pid()
        assert pid is not None, "the private watchman daemon is not running"
        os.kill(pid, signal.SIGKILL)
        stat = Path(f"/proc/{pid}/stat")
        for _ in range(1000):
            try:
                if ") Z" in stat.read_text(encoding="utf-8"):
                    return  # dead, waiting for a parent to collect it
            except OSError:
                return
            time.sleep(0.01)
        raise AssertionError(f"watchman daemon {pid} did not end")

    def stop(self) -> None:
        if self.pid() is not None:
            subprocess.run(
                [str(self.bin / "watchman"), "--no-spawn", "shutdown-server"], capture_output=True, timeout=30
            )


@pytest.fixture
def store_looks(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], Counter[str]]:
    """Counts, from the call on, each ``os.stat`` and ``os.lstat`` naming a folder given or a path under it (the
    looks of the target "at most one look per store path"), by path."""

    def counting(under: Path) -> Counter[str]:
        folder = str(under)
        prefix = folder + os.sep
        looks: Counter[str] = Counter()
        for name in ("stat", "lstat"):
            real = getattr(os, name)

            def counted(path: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
                if not isinstance(path, int):
                    text = os.fspath(path)
                    if isinstance(text, str) and (text == folder or text.startswith(prefix)):
                        looks[text] += 1
                return _real(path, *args, **kwargs)

            monkeypatch.setattr(os, name, counted)
        return looks

    return counting


@pytest.fixture(scope="session")
def private_watchman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateWatchman]:
    """The session's own watchman daemon (stopped at the end); fails when watchman is not installed."""
    daemon = PrivateWatchman(tmp_path_factory.mktemp("watchman"))
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def watchman_on(private_watchman: PrivateWatchman, monkeypatch: pytest.MonkeyPatch) -> PrivateWatchman:
    """okstra asks the session's private watchman daemon what changed (and says when it cannot)."""
    monkeypatch.setenv("PATH", f"{private_watchman.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("OKSTRA_WATCHMAN", "on")
    return private_watchman


#: Signals whose handlers a test must leave as it found them: a process forked by a later test in the same
#: worker inherits them (a pool worker that turns SIGTERM into something else outlives its pool's end).
_PROCESS_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


@pytest.fixture(autouse=True)
def _signal_handlers_kept() -> Iterator[None]:
    """No test leaves a signal handler of its own installed (the code under test puts back what it replaced)."""
    before = {sig: signal.getsignal(sig) for sig in _PROCESS_SIGNALS}
    yield
    after = {sig: signal.getsignal(sig) for sig in _PROCESS_SIGNALS}
    changed = [sig.name for sig in _PROCESS_SIGNALS if after[sig] != before[sig]]
    for sig in _PROCESS_SIGNALS:
        signal.signal(sig, before[sig])
    assert not changed, f"signal handlers left changed: {', '.join(changed)}"


#: How long a call may go without returning before it is taken as blocked (generous: a loaded machine).
BLOCKED_AFTER = 60.0


@pytest.fixture
def without_waiting() -> Callable[[Callable[[], object], Path], object]:
    """Run a call that must never block on the FIFO at a path: what it returned or raised.

    A call still running after :data:`BLOCKED_AFTER` seconds fails the test; the FIFO is then opened from the
    other end so that the blocked thread ends.
    """

    def run(call: Callable[[], object], fifo: Path) -> object:
        outcome: list[object] = []

        def target() -> None:
            try:
                outcome.append(call())
            except BaseException as exc:  # the caller looks at what was raised
                outcome.append(exc)

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        thread.join(BLOCKED_AFTER)
        if thread.is_alive():
            for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
                with contextlib.suppress(OSError):
                    os.close(os.open(fifo, flags))  # the other end: the blocked open returns
            thread.join(BLOCKED_AFTER)
            pytest.fail(f"blocked on the FIFO {fifo}")
        return outcome[0]

    return run


#: The shared demo's entries as each worker generated it (see :func:`_shared_demo_left_alone`).
_DEMO_STATE: dict[Path, dict[str, tuple[int, ...]]] = {}


def _tree_state(root: Path) -> dict[str, tuple[int, ...]]:
    """Every entry under *root* (symlinks not followed) with its inode, mode, size, mtime and change time: any
    write, rename, chmod, new or removed entry changes it."""
    out: dict[str, tuple[int, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[path] = (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return out


@pytest.fixture(scope="session")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo project generated once per session (per xdist worker) and shared: read-only, as every test that
    is given it must leave it (:func:`_shared_demo_left_alone` fails the test that does not)."""
    from okstra_core.demo import generate

    target = tmp_path_factory.mktemp("demo") / "project"
    generate(target)
    _DEMO_STATE[target] = _tree_state(target)
    return target


@pytest.fixture(autouse=True)
def _shared_demo_left_alone(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test given the shared demo (not only a private copy of it) fails when it changed the demo: the tests
    that come after it in the same worker would read its changes, and fail or pass depending on the order."""
    yield
    for shared, private in (("demo_root", "fresh_demo"), ("many_root", "fresh_many")):
        if shared in request.fixturenames and private not in request.fixturenames:
            _left_alone(request.getfixturevalue(shared))


def _left_alone(root: Path) -> None:
    before, after = _DEMO_STATE[root], _tree_state(root)
    if after != before:
        _DEMO_STATE[root] = after  # the next test is judged on what it changes itself
        changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        shown = ", ".join(os.path.relpath(p, root) for p in changed[:5])
        pytest.fail(f"the test changed the shared demo (use fresh_demo for a private copy): {shown}", pytrace=False)


@pytest.fixture
def fresh_demo(demo_root: Path, tmp_path: Path) -> Path:
    """A private, mutable copy of the demo project (symlinks copied as symlinks), its manager home registering
    the copy (a reader that follows the registry never reaches the shared demo)."""
    target = tmp_path / "project"
    shutil.copytree(demo_root, target, symlinks=True)
    for path in layout.demo_home(target).glob(f"{layout.MANAGERS_DIR}/*/{layout.MANAGER_PROJECTS}"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(json.dumps(str(demo_root))[1:-1], json.dumps(str(target))[1:-1]), encoding="utf-8")
    return target


def classify_documents(project: Project, home: Path) -> dict[Path, str]:
    """Every JSON/JSONL document and sidecar of the demo, with its document kind."""
    root = project.root
    out: dict[Path, str] = {
        layout.task_catalog_path(root): "task-catalog",
        layout.latest_task_path(root): "latest-task",
        layout.project_json_path(root): "project",
    }
    for ref in project.task_refs:
        task = ref.open()
        out[layout.task_manifest_path(task.root)] = "task-manifest"
        out[layout.timeline_path(task.root)] = "timeline"
        for path, kind in (
            (layout.fix_cycles_path(task.root), "fix-cycles"),
            (layout.recap_log_path(task.root), "recap-log"),
            (layout.selected_direction_path(task.root), "selected-direction"),
            (layout.consumers_path(task.root), "consumers"),
        ):
            if path.exists():
                out[path] = kind
        for path, _ in task.carry():
            out[path] = "carry"
        for rd in task.run_dirs:
            for art in rd.artifacts():
                spec = art.spec
                if spec.reader == "report":
                    out[art.path] = "final-report"
                elif spec.reader == "folder" and spec.doc is not None:
                    out[art.path / "catalog.json"] = spec.doc
                elif spec.doc is not None:
                    out[art.path] = spec.doc
            for path, _parsed in rd.flat_legacy():
                if path.name.endswith(".json"):
                    out[path] = "legacy-flat"
    for inv in project.invocations():
        out[inv.paths.meta] = "invocation-meta"
        if inv.paths.result.exists():
            out[inv.paths.result] = "invocation-result"
            out[inv.paths.completion] = "invocation-completion"
    for manager in list_managers(home):
        out[manager.folder / "manager.json"] = "manager"
        out[manager.folder / "projects.json"] = "manager-projects"
        for mtask in manager.tasks():
            for name, kind in (
                ("manifest.json", "manager-task-manifest"),
                ("children.json", "manager-children"),
                ("snapshots.json", "manager-snapshots"),
                ("directives.jsonl", "manager-directives"),
                ("events.jsonl", "manager-events"),
            ):
                out[mtask.folder / name] = kind
    return out


def document_values(docs: dict[Path, str]) -> list[tuple[Path, str, Any]]:
    """Each JSON value of the classified documents (one per JSONL line, one per sidecar header),
    with its registered document kind; flat legacy files (read as they are) are left out."""
    import json

    from okstra_core import sidecar
    from okstra_core.models import DOC_KINDS_BY_NAME, FINAL_REPORT_VERSIONS

    out: list[tuple[Path, str, Any]] = []
    for path, kind in sorted(docs.items()):
        if kind == "legacy-flat":
            continue
        text = path.read_text(encoding="utf-8")
        if kind.endswith("-header"):
            values = [sidecar.parse(text).header]
        elif DOC_KINDS_BY_NAME.get(kind) is not None and DOC_KINDS_BY_NAME[kind].jsonl:
            values = [json.loads(line) for line in text.splitlines()]
        else:
            values = [json.loads(text)]
        for value in values:
            doc_kind = FINAL_REPORT_VERSIONS[value["schemaVersion"]] if kind == "final-report" else kind
            out.append((path, doc_kind, value))
    return out


@pytest.fixture(scope="session")
def many_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo of many projects (``okstra demo --projects``), generated once per session and shared read-only:
    ``shop``, ``billing``, ``mobile`` and their manager home ``okstra-home``."""
    from okstra_core.demo.projects import generate_projects

    target = tmp_path_factory.mktemp("many") / "demo"
    generate_projects(target)
    _DEMO_STATE[target] = _tree_state(target)
    return target


@pytest.fixture
def fresh_many(many_root: Path, tmp_path: Path) -> Path:
    """A private, mutable copy of the demo of many projects, its manager registering the copies."""
    from okstra_core.demo.projects import HOME_DIR

    target = tmp_path / "many"
    shutil.copytree(many_root, target, symlinks=True)
    for path in (target / HOME_DIR / layout.MANAGERS_DIR).glob(f"*/{layout.MANAGER_PROJECTS}"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(json.dumps(str(many_root))[1:-1], json.dumps(str(target))[1:-1]), encoding="utf-8")
    return target


def count_looks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ``os.stat`` and ``os.lstat`` made from now on in this test, by path, in order."""
    looked: list[str] = []
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def counting(path: object, *args: object, _real: object = real, **kwargs: object) -> object:
            looked.append(os.fspath(path))  # type: ignore[arg-type]
            return _real(path, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(os, name, counting)
    return looked
