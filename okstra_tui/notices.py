"""Notices: the workbench tells the person when agents need them or a run ends, while it is open.

A child process (:func:`serve_notices`) is handed each burst of the app's one
change feed (:class:`~okstra_tui.store_feed.StoreFeed`) on its standard input,
reads the project's :class:`~okstra_core.workflows.pulse.Pulse` again for the
tasks the burst touched, and writes the notices of that reading
(:func:`~okstra_core.workflows.pulse.refresh_pulse`) as JSON lines; the workbench reads
them in a daemon thread and shows them as toasts. No second watcher looks at
the store, and the pulse's reading (every task's decisions, on every store
size) stays off the workbench's interpreter and out of its memory; the child
ends when the workbench closes the pipe. ``--notify`` (or
``OKSTRA_NOTIFY``, which the sessions of ``--serve`` inherit) chooses what else
happens: ``bell`` rings the terminal bell, ``desktop`` also sends the
terminal's own notification sequence, built here from text with every control
character removed, never from raw store bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, get_args

from .children import child_command, end_child
from .widgets.shown import cut

if TYPE_CHECKING:
    from okstra_core.workflows.pulse import Notice, Pulse

NotifyMode = Literal["off", "toast", "bell", "desktop"]
NOTIFY_MODES: Final[tuple[NotifyMode, ...]] = get_args(NotifyMode)
NOTIFY_ENV: Final = "OKSTRA_NOTIFY"
DEFAULT_MODE: NotifyMode = "toast"

#: More notices than this at once (a migration, a demo written into place) make one summary toast.
BURST: Final = 3


def check_arguments(root: Path | str) -> list[str]:
    """``okstra check``'s arguments for the notices' baseline check of *root* (JSON, quiet, no worker processes)."""
    return ["check", os.fspath(root), "--format", "json", "--quiet", "--jobs", "1"]


#: A desktop notification's title and body are cut to this many characters.
DESKTOP_TEXT_MAX: Final = 200

#: How a kind of notice is titled.
TITLES: Final = {
    "decision": "Waiting for you",
    "run-completed": "Run completed",
    "run-failed": "Run failed",
    "check-failed": "Check failed",
}


def mode_from_env(default: NotifyMode = DEFAULT_MODE) -> NotifyMode:
    """``OKSTRA_NOTIFY`` when it names a mode, else *default*."""
    value = os.environ.get(NOTIFY_ENV, "").strip().lower()
    for mode in NOTIFY_MODES:
        if value == mode:
            return mode
    return default


def plain(text: str, limit: int = DESKTOP_TEXT_MAX) -> str:
    """*text* with every control character (C0, DEL, C1) and the OSC separator ``;`` replaced, cut to *limit*."""
    out = "".join(" " if (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F) else ("," if c == ";" else c) for c in text)
    return cut(out, limit).plain


def desktop_sequence(title: str, body: str, environ: dict[str, str] | None = None) -> str:
    """The terminal's own notification sequence for *title* and *body*.

    OSC 777 (``notify``) for the terminals that read it and not OSC 9 (foot,
    urxvt), OSC 9 for the others (iTerm2, WezTerm, kitty, Windows Terminal,
    ConEmu). Title and body go through :func:`plain`, so no byte of them can end
    the sequence early or start another.
    """
    env = os.environ if environ is None else environ
    term = env.get("TERM", "")
    if term.startswith(("foot", "rxvt")):
        return f"\x1b]777;notify;{plain(title)};{plain(body)}\x1b\\"
    return f"\x1b]9;{plain(f'{title}: {body}')}\x1b\\"


def summary(found: list[Notice]) -> str:
    """One line for a burst: how many of each kind, and in how many tasks."""
    counts = Counter(n.kind for n in found)
    parts = []
    if counts["decision"]:
        parts.append(f"{counts['decision']} decision{'s' if counts['decision'] != 1 else ''} waiting")
    if counts["run-completed"]:
        parts.append(f"{counts['run-completed']} run{'s' if counts['run-completed'] != 1 else ''} completed")
    if counts["run-failed"]:
        parts.append(f"{counts['run-failed']} run{'s' if counts['run-failed'] != 1 else ''} failed")
    if counts["check-failed"]:
        parts.append(f"{counts['check-failed']} task{'s' if counts['check-failed'] != 1 else ''} failing the check")
    tasks = len({(n.project, n.task) for n in found})
    where = f"{', '.join(parts)} in {tasks} task{'s' if tasks != 1 else ''}"
    projects = sorted({n.project for n in found if n.project is not None})
    return where + (f" ({', '.join(projects)})" if projects else "")


class CheckBaseline:
    """Per task folder, the errors of the last check known; a task whose errors go from none to some is news.

    The baseline is one ``okstra check --format json`` (it uses the check cache) run when watching starts, in a
    child process of the notices' child when it runs beside the pulse's first reading, or in the notices' child
    itself, before that reading, with *here* (:meth:`run_here`); never in the workbench's interpreter. Until it
    has finished, no check notice is raised. After a change placed in a few task folders, those tasks alone
    are checked again, in process, and compared with it.
    """

    def __init__(self, root: Path, *, here: bool = False) -> None:
        self.root = root
        self.errors: dict[Path, int] | None = None
        self._lock = threading.Lock()
        self._child: subprocess.Popen[str] | None = None
        if here:
            self._run_here()
            return
        command = child_command("check", root)
        try:
            self._child = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True
            )
        except OSError:
            self._child = None

    @classmethod
    def run_here(cls, root: Path) -> CheckBaseline:
        """The baseline check run now, in this process, as the child runs it (its output taken here, its warnings
        dropped): where the check cache holds this checker's records, the check mostly reuses them, and a process
        of its own held a second interpreter and its imports beside this one (on a large store, at the moment the
        workbench's process tree is largest)."""
        return cls(root, here=True)

    def _run_here(self) -> None:
        import contextlib
        import io

        from okstra_core.malloc import give_back

        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                from okstra_core.cli import main

                main(check_arguments(self.root))
            self.errors = self._count(json.loads(out.getvalue())["findings"])
        except (Exception, SystemExit):  # the check could not run: no check notices, the Checks view says why
            self.errors = None
        finally:
            out.close()
            give_back()  # what the check read and let go, before the pulse's reading

    def ready(self) -> bool:
        """True once the baseline is known (reads the child's report when it has ended)."""
        with self._lock:
            return self._take_report()

    def wait_ready(self) -> bool:
        """Wait for the baseline check to end; True when its report could be read."""
        child = self._child
        if child is not None:
            child.wait()
        return self.ready()

    def _take_report(self) -> bool:
        child = self._child
        if self.errors is not None or child is None or child.poll() is None:
            return self.errors is not None
        out, _ = child.communicate()
        self._child = None
        try:
            findings = json.loads(out)["findings"]
        except (ValueError, KeyError, TypeError):
            return False  # the check could not run: no check notices, the Checks view says why
        self.errors = self._count(findings)
        return True

    def _count(self, findings: list[dict[str, str]]) -> dict[Path, int]:
        from okstra_core.layout import task_root_of

        counts: dict[Path, int] = {}
        for f in findings:
            task = task_root_of(self.root, self.root / str(f.get("path", "")))
            if task is not None and f.get("severity") == "error":
                counts[task] = counts.get(task, 0) + 1
        return counts

    def newly_failing(self, task_roots: set[Path]) -> dict[Path, tuple[int, str]]:
        """Of *task_roots*, those without errors before and with errors now: (errors, the first message)."""
        from okstra_core import layout
        from okstra_core.check import run_check

        if not self.ready() or not task_roots:
            return {}
        assert self.errors is not None
        try:
            report = run_check(self.root, only_tasks=[layout.rel(t, self.root) for t in task_roots], jobs=1)
        except Exception:  # the check cannot run now (the Checks view names why): no notice
            return {}
        first: dict[Path, str] = {}
        counts = self._count([{"path": f.path, "severity": f.severity} for f in report.findings])
        for f in report.findings:
            task = layout.task_root_of(self.root, self.root / f.path)
            if f.severity == "error" and task is not None:
                first.setdefault(task, f.message)
        out = {t: (counts[t], first.get(t, "")) for t in task_roots if counts.get(t, 0) and not self.errors.get(t, 0)}
        for t in task_roots:
            self.errors[t] = counts.get(t, 0)
        return out

    def close(self) -> None:
        if self._child is not None and self._child.poll() is None:
            self._child.kill()
            self._child.wait()


class NoticeWatcher:
    """Watches *root*'s store from a child process and hands each burst's notices to *deliver*.

    The watching, the readings of the pulse (every task's decisions and latest
    run: seconds of work and tens of megabytes on a store of 10,000 tasks) and
    the checks run in the child, so the workbench's interpreter and memory hold
    none of it; a daemon thread here reads the child's JSON lines (one per
    reading, see :func:`serve_notices`), drops the notices about tasks this
    process wrote in since the last reading, and calls *deliver* from that
    thread; the app passes a function that moves the notices to its UI thread.
    """

    def __init__(self, root: Path, deliver: Callable[[list[Notice]], None]) -> None:
        self.root = root
        self.deliver = deliver
        self._closed = threading.Event()
        self._ready = threading.Event()
        self._checks_ready = threading.Event()
        self._child: subprocess.Popen[str] | None = None
        #: Store files this process wrote since the last reading: what the person did here is no news to them.
        self._own: set[Path] = set()
        self._own_lock = threading.Lock()
        self._pipe_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="okstra-notices", daemon=True)

    @property
    def ready(self) -> bool:
        """True once the child has read the store's first pulse: a change from now on is news."""
        return self._ready.is_set()

    @property
    def checks_ready(self) -> bool:
        """True once the child knows the baseline check: a task that starts failing it is news from now on."""
        return self._checks_ready.is_set()

    def start(self) -> None:
        command = child_command("notices", self.root)
        try:
            self._child = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.PIPE, text=True
            )
        except OSError:
            return  # no child, no notices: the workbench goes on
        self._thread.start()

    def changed(self, paths: frozenset[str] | None) -> None:
        """Hand the child a burst of the app's change feed (*paths*, None when it cannot say which); callable from
        any thread."""
        child = self._child
        if child is None or child.stdin is None or self._closed.is_set():
            return
        line = json.dumps({"changed": None if paths is None else sorted(paths)}, ensure_ascii=True) + "\n"
        with self._pipe_lock:
            try:
                child.stdin.write(line)
                child.stdin.flush()
            except (OSError, ValueError):
                pass  # the child is gone: notices stop, the workbench goes on

    def own_write(self, path: Path) -> None:
        """Note that this process is writing *path* (from :func:`okstra_core.writes.observe_writes`)."""
        with self._own_lock:
            self._own.add(path)

    def _not_own(self, found: list[Notice]) -> list[Notice]:
        """*found* less the notices about tasks this process wrote in since the last reading."""
        with self._own_lock:
            own, self._own = self._own, set()
        return [n for n in found if n.task_root is None or not any(p.is_relative_to(n.task_root) for p in own)]

    def close(self) -> None:
        self._closed.set()
        end_child(self._child)

    def _run(self) -> None:
        child = self._child
        assert child is not None and child.stdout is not None
        try:
            self._read(child.stdout)
        except (OSError, ValueError):  # the pipe broke: notices stop, the workbench goes on
            return

    def _read(self, lines: Iterable[str]) -> None:
        for line in lines:
            if self._closed.is_set():
                return
            message = _parse_line(line)
            if message is None:
                continue  # not one of our lines: nothing to tell
            if message == "ready":
                self._ready.set()
                continue
            if message == "checks-ready":
                self._checks_ready.set()
                continue
            found = self._not_own(message)
            if found:
                self.deliver(found)


def _parse_line(line: str) -> list[Notice] | Literal["ready", "checks-ready"] | None:
    """One line of :func:`serve_notices`: an event, a reading's notices, or ``None`` for anything else."""
    from okstra_core.workflows.pulse import Notice

    try:
        value = json.loads(line)
        event = value.get("event")
        if event == "ready" or event == "checks-ready":
            return event  # type: ignore[no-any-return]
        found = [
            Notice(n["kind"], n["task"], n["text"], None if n["taskRoot"] is None else Path(n["taskRoot"]))
            for n in value["notices"]
        ]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not all(n.kind in TITLES and isinstance(n.task, str) and isinstance(n.text, str) for n in found):
        return None  # not a reading this module wrote
    return found


def serve_notices(root: str) -> int:
    """The watching child's loop: JSON lines on stdout, ``{"event": "ready"}`` once the first pulse is read, then
    ``{"notices": [...]}`` after every reading (empty when nothing happened: the reader clears its own writes),
    and ``{"event": "checks-ready"}`` once the baseline check is known."""

    lock = threading.Lock()  # the baseline's thread and the loop both write lines

    def send(value: object) -> None:
        with lock:
            sys.stdout.write(json.dumps(value, ensure_ascii=True) + "\n")
            sys.stdout.flush()

    def deliver(found: list[Notice]) -> None:
        send(
            {
                "notices": [
                    {
                        "kind": n.kind,
                        "task": n.task,
                        "text": n.text,
                        "taskRoot": None if n.task_root is None else str(n.task_root),
                    }
                    for n in found
                ]
            }
        )

    try:
        watch_store(
            Path(root),
            lambda: send({"event": "ready"}),
            deliver,
            lambda: send({"event": "checks-ready"}),
            changes=_changes_from(sys.stdin),
        )
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    except Exception:  # a reading the readers did not foresee: notices stop (the pipe ends), the workbench goes on
        return 1
    return 0


def _changes_from(lines: Iterable[str]) -> Iterator[frozenset[str] | None]:
    """The workbench's change bursts, one JSON line each (``{"changed": [paths]}``, or ``null`` when it cannot say
    which), until the workbench closes the pipe; a line that is not one of these is skipped."""
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if not isinstance(value, dict) or "changed" not in value:
            continue
        paths = value["changed"]
        if paths is None:
            yield None
        elif isinstance(paths, list):
            yield frozenset(str(p) for p in paths)


#: The most paths the bursts merged while none is taken hold: beyond, they are one burst that cannot say which.
MERGED_PATHS_MAX: Final = 100_000


class _Bursts:
    """*changes* drained by a thread of their own as they come, and merged while the reader is busy (a reading of
    the whole store, the baseline check): the workbench's pipe never fills (its writes would stall its feed), and
    one reading follows many bursts. A burst that cannot say which paths (None), or merged paths past
    :data:`MERGED_PATHS_MAX`, make the merged burst None."""

    def __init__(self, changes: Iterable[frozenset[str] | None]) -> None:
        self._changes = changes
        self._ready = threading.Condition()
        self._pending: set[str] | None = set()
        self._due = False  # a burst came since the last one taken
        self._ended = False
        threading.Thread(target=self._drain, name="okstra-notices-bursts", daemon=True).start()

    def _drain(self) -> None:
        try:
            for burst in self._changes:
                with self._ready:
                    pending = self._pending
                    if burst is None or pending is None or len(pending) + len(burst) > MERGED_PATHS_MAX:
                        self._pending = None
                    else:
                        pending.update(burst)
                    self._due = True
                    self._ready.notify()
        except (OSError, ValueError):
            pass  # the pipe broke: the bursts end
        finally:
            with self._ready:
                self._ended = True
                self._ready.notify()

    def __iter__(self) -> Iterator[frozenset[str] | None]:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._due or self._ended)
                if not self._due:
                    return
                taken, self._pending, self._due = self._pending, set(), False
            yield None if taken is None else frozenset(taken)


def watch_store(
    root: Path,
    ready: Callable[[], None],
    deliver: Callable[[list[Notice]], None],
    checks_ready: Callable[[], None] = lambda: None,
    *,
    changes: Iterable[frozenset[str] | None],
) -> None:
    """Follow *root*'s store through *changes* (the workbench's one change feed: the paths of each burst, None
    when it cannot say which) until they end: *ready* once the first pulse is read, then *deliver* with the
    notices of every reading (possibly none); *checks_ready* (from another thread) once the baseline check is
    known, from when on a task that starts failing the check is news."""
    from okstra_core.check.cache import check_kept

    bursts = _Bursts(changes)  # drained from now on: the workbench never waits on a full pipe
    # Where this checker's records of the store are kept, the baseline check mostly reuses them: it runs first and
    # alone, so that the pulse held from now on and the check's own reading are never in memory at once (on a
    # large store each is hundreds of megabytes). A store not checked with the cache (or by another version) would
    # keep the notices waiting a whole check: there the pulse comes first and the check runs beside it.
    checks: CheckBaseline | None = CheckBaseline.run_here(root) if check_kept(root) else None
    try:
        # Imported once the check has ended: what the pulse's reading needs is not held beside it either.
        from okstra_core.layout import task_root_of
        from okstra_core.malloc import give_back
        from okstra_core.store import Project
        from okstra_core.workflows.pulse import read_pulse, refresh_pulse

        from .data.catalog import through_index

        # A reading of every task goes through the store index, which the workbench's count at its start has
        # brought up to date (on a workbench started on a catalog, this child starts once that count has ended):
        # its decisions and runs are kept there, and no task is read again.
        before = through_index(root, None, read_pulse)[0]
        give_back()  # what reading the whole store freed, before a baseline check starts beside this child
        if checks is None:
            checks = CheckBaseline(root)
    except BaseException:
        if checks is not None:
            checks.close()
        raise
    baseline = checks

    def announce_checks() -> None:
        if baseline.wait_ready():
            checks_ready()

    threading.Thread(target=announce_checks, daemon=True).start()
    try:
        ready()
        for changed in bursts:
            roots = None if changed is None else {task_root_of(root, Path(path)) for path in changed}
            if roots is None or None in roots:
                before, found = through_index(root, None, partial(read_pulse, before=before))
                give_back()
                failing: dict[Path, tuple[int, str]] = {}
            else:
                touched = {r for r in roots if r is not None}
                before, found = refresh_pulse(Project(root), before, touched)
                failing = baseline.newly_failing(touched)
            deliver(found + _check_notices(root, before, failing))
    finally:
        baseline.close()


def _check_notices(root: Path, pulse: Pulse, failing: dict[Path, tuple[int, str]]) -> list[Notice]:
    """A notice per task that newly fails the check, named by its task key."""
    from okstra_core import layout
    from okstra_core.text import visible
    from okstra_core.workflows.pulse import Notice

    if not failing:
        return []
    keys = {folder: key for key, (_, folder) in pulse.runs.items()}
    out = []
    for task_root, (count, message) in sorted(failing.items()):
        key = keys.get(os.fspath(task_root)) or layout.rel(task_root, root)
        text = f"{count} check error{'s' if count != 1 else ''}: {message}"
        out.append(Notice("check-failed", key, visible(text)[:200], task_root))
    return out
