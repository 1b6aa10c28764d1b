"""What a person has seen of a project: the per-user state behind "since you last looked".

Per user and project, a small JSON file in the user's state folder
(:func:`okstra_core.layout.okstra_state_dir`, ``seen/<digest of the project's
real path>.json``; never inside the store) records, per task folder, the
task's *signature* when the person last looked at it and the time they did.
A task whose signature differs from the recorded one has changed since: it is
*unread*. A task the file does not name yet (a task that appeared since) is
unread too; on the very first launch (no file) everything present is taken as
seen, so nothing is unread.

A task's signature is the metadata (mtime, size, inode) of its
``task-manifest.json`` and ``history/timeline.json``: okstra rewrites the
manifest when a run is prepared and when it ends (its status, report and
next-phase pointer), and appends to the timeline for each run, so a new run,
report or decision changes one of them; reading it costs two ``stat`` calls.

Opening a task marks one task: that mark is appended, as one JSON line, to a
journal beside the file (``<digest>.json.journal``), so it costs the same on
a store of 100,000 tasks as on one of ten. A mark of many tasks at once (mark
all read, the first launch), or one that finds the journal grown past
:data:`JOURNAL_MAX_BYTES`, replaces the file whole with the journal folded in
and then removes the journal. Both happen under one lock, and each update is
a change merged into the state as it is at that moment, so two workbenches
on the same project never lose each other's updates. A missing file is the
first launch (a journal without its file is not read); a corrupt file, or one
of another version, is replaced (with a warning), never trusted. Each journal
line names the state file it adds to (its inode and mtime), and is replayed
only over that file: a journal left behind when the file was replaced (a
crash between the two steps) never puts an older mark over a newer one. A
line that does not parse (a crashed append) is skipped.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from okstra_core import layout, reading, times
from okstra_core.errors import OkstraError

SEEN_VERSION: Final = 1
SEEN_DIR: Final = "seen"
#: A state file larger than this is not read (a task entry takes about 120 bytes).
SEEN_MAX_BYTES: Final = 64 * 1024 * 1024
LOCK_TIMEOUT: Final = 10.0
#: Beside the state file: the marks appended since it was last replaced, one JSON line each.
JOURNAL_SUFFIX: Final = ".journal"
#: A journal that has grown past this is folded into the state file by the next mark.
JOURNAL_MAX_BYTES: Final = 256 * 1024
#: A mark of more tasks than this replaces the state file rather than growing the journal.
JOURNAL_BATCH: Final = 64


@dataclass(frozen=True, slots=True)
class Mark:
    """What the person saw of one task: its signature then, and when (ISO-8601 UTC).

    The moments read are held once each (:func:`sys.intern`): a mark of every task at once (the first launch,
    mark all read) gives a hundred thousand tasks one moment, held for the whole session."""

    signature: str
    at: str


@dataclass(slots=True)
class SeenState:
    """The marks of one project, as read from the state file."""

    project: Path
    marks: dict[str, Mark] = field(default_factory=dict)
    #: True when there was no state file: everything present counts as seen.
    first: bool = False
    #: One line saying why the file was replaced, when it was unusable.
    warning: str | None = None

    def unread(self, signatures: Mapping[str, str]) -> set[str]:
        """The tasks (folder keys) of *signatures* that changed since they were seen, or were never seen."""
        if self.first:
            return set()
        return {
            key for key, sig in signatures.items() if (mark := self.marks.get(key)) is None or mark.signature != sig
        }

    def seen_at(self, key: str) -> dt.datetime | None:
        """When the task *key* was last looked at (None: never)."""
        mark = self.marks.get(key)
        return None if mark is None else _moment(mark.at)

    def moments(self) -> SeenMoments:
        """When each task was last looked at, without the signatures: what a session keeps of the state it read."""
        return SeenMoments(self.project, {key: mark.at for key, mark in self.marks.items()})

    def last_look(self) -> dt.datetime | None:
        """When the person last looked at any task of the project (None: never)."""
        times = [t for t in (_moment(m.at) for m in self.marks.values()) if t is not None]
        return max(times) if times else None


class SeenMoments:
    """When each task was last looked at, by folder key, as the state file said (the moments held once each):
    at 100,000 tasks 10.5 MB, where the whole state with its marks and signatures is 26.8 MB."""

    __slots__ = ("_at", "project")

    def __init__(self, project: Path, at: dict[str, str]) -> None:
        #: The project's real path, as the state file names it.
        self.project = project
        self._at = at

    def seen_at(self, key: str) -> dt.datetime | None:
        """When the task *key* was last looked at (None: never)."""
        at = self._at.get(key)
        return None if at is None else _moment(at)


def _moment(text: str) -> dt.datetime | None:
    return times.parse_time(text)


def state_path(project_root: Path) -> Path:
    """The state file of the project at *project_root* (keyed by its real path)."""
    return layout.okstra_state_dir() / SEEN_DIR / f"{layout.project_digest(project_root)}.json"


def journal_path(project_root: Path) -> Path:
    """The journal of marks appended since the state file was last replaced."""
    path = state_path(project_root)
    return path.with_name(path.name + JOURNAL_SUFFIX)


def task_key(project_root: Path, task_root: Path) -> str:
    """How the state file names a task: its folder under ``.okstra/tasks/`` (``group/task``)."""
    return layout.rel(task_root, layout.tasks_dir(project_root))


def task_signature(task_root: Path) -> str:
    """The metadata of the task's manifest and timeline, as one string (missing files count as missing)."""
    parts = []
    for path in (layout.task_manifest_path(task_root), layout.timeline_path(task_root)):
        try:
            st = os.stat(path)
        except OSError:
            parts.append("-")
            continue
        parts.append(f"{st.st_mtime_ns}.{st.st_size}.{st.st_ino}")
    return ":".join(parts)


def signatures(project_root: Path, task_roots: Iterable[Path]) -> dict[str, str]:
    """The signature of each task, by folder key."""
    return {task_key(project_root, root): task_signature(root) for root in task_roots}


def load(project_root: Path) -> SeenState:
    """The project's seen state; a missing file is the first launch, an unusable one is reported and not trusted."""
    for _ in range(LOAD_ATTEMPTS):
        state, file = _load_once(project_root)
        if file is None or _identity_at(state_path(project_root)) == file:
            return state
        # The file was replaced while it was read (another workbench folded its journal): read it again.
    return state


#: How often :func:`load` reads again when the file is replaced under it.
LOAD_ATTEMPTS: Final = 3


def _load_once(project_root: Path) -> tuple[SeenState, str | None]:
    """The state, and the identity of the file it was read from (None when none was read)."""
    path = state_path(project_root)
    state = SeenState(Path(os.path.realpath(project_root)))
    in_the_way = _in_the_way(path)
    if in_the_way is not None:
        state.first, state.warning = True, f"{path}: {in_the_way}"
        return state, None
    opened = reading.open_own_file(path)  # never waits, should a FIFO have been put there meanwhile
    if opened is None:
        state.first = True
        return state, None
    if isinstance(opened, reading.LoadError):
        state.first, state.warning = True, f"{opened}; it will be replaced"
        return state, None
    fd, st = opened
    file = _identity(st)
    try:
        data = reading.read_open(fd, st.st_size, SEEN_MAX_BYTES)
    except OSError as exc:
        state.first, state.warning = True, f"{path}: cannot be read ({exc.strerror}); it will be replaced"
        return state, None
    finally:
        os.close(fd)
    marks, problem = _parse(data, state.project)
    if problem is not None:
        state.first, state.warning = True, f"{path}: {problem}; it will be replaced"
        return state, file
    state.marks = marks
    _replay(journal_path(project_root), file, marks)
    return state, file


def _in_the_way(path: Path) -> str | None:
    """Why the state can never be kept at *path*: something other than a regular file stands there (a
    folder, a FIFO, a symlink), which no write replaces; None when there is a file or nothing."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode):
        return None
    what = reading.describe_mode(st.st_mode)
    return f"is {what}, not a regular file; nothing is remembered as seen until it is removed"


def _identity(st: os.stat_result) -> str:
    """Which state file this is: replacing the file gives it a new inode (and mtime)."""
    return f"{st.st_ino}:{st.st_mtime_ns}"


def _identity_at(path: Path) -> str | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return _identity(st) if stat.S_ISREG(st.st_mode) else None


def _journal_bytes(path: Path) -> bytes | None:
    """The journal's bytes; None when there is none, or something other than a plain file stands there."""
    opened = reading.open_own_file(path)
    if not isinstance(opened, tuple):
        return None  # none, or not a plain file (a symlink is never followed)
    fd, st = opened
    if st.st_nlink > 1:
        os.close(fd)
        return None
    try:
        return reading.read_open(fd, st.st_size, SEEN_MAX_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)


def _replay(path: Path, file: str, marks: dict[str, Mark]) -> None:
    """Apply to *marks*, in order, the journal's marks made on the state file *file*; a line that is not a
    whole mark, or was made on an earlier file (a journal left behind when the file was replaced), is skipped."""
    data = _journal_bytes(path)
    if data is None:
        return
    for line in data[:SEEN_MAX_BYTES].split(b"\n"):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and value.get("file") == file:
            key, sig, at = value.get("task"), value.get("signature"), value.get("at")
            if isinstance(key, str) and isinstance(sig, str) and isinstance(at, str):
                marks[key] = Mark(sig, sys.intern(at))


def _parse(data: bytes, project: Path) -> tuple[dict[str, Mark], str | None]:
    if len(data) > SEEN_MAX_BYTES:
        return {}, f"larger than {SEEN_MAX_BYTES:,} bytes"
    try:
        doc = json.loads(data, object_hook=_as_mark)
    except (ValueError, RecursionError):
        return {}, "not valid JSON"
    if not isinstance(doc, dict) or doc.get("version") != SEEN_VERSION:
        return {}, f"not a version {SEEN_VERSION} seen-state file"
    if doc.get("project") != str(project):
        return {}, "written for another project"
    tasks = doc.get("tasks")
    if not isinstance(tasks, dict):
        return {}, "has no task list"
    marks: dict[str, Mark] = {}
    for key, value in tasks.items():
        if isinstance(value, Mark):
            marks[key] = value
        elif isinstance(value, dict) and isinstance(value.get("signature"), str) and isinstance(value.get("at"), str):
            marks[key] = Mark(value["signature"], sys.intern(value["at"]))
    return marks, None


def _as_mark(value: dict[str, Any]) -> Any:
    """A parsed object written as a mark (its two fields, text) as its :class:`Mark`, made as the parse goes: the
    objects of a hundred thousand marks are never all held beside them."""
    if len(value) == 2 and type(sig := value.get("signature")) is str and type(at := value.get("at")) is str:
        return Mark(sig, sys.intern(at))
    return value


def mark_seen(
    project_root: Path, seen: Mapping[str, str], *, now: dt.datetime | None = None, replace_all: bool = False
) -> None:
    """Record that the person saw the tasks of *seen* (folder key -> signature) at *now*.

    Merged into the state as it is (under its lock), so another workbench's
    marks stay; *replace_all* drops the marks of tasks *seen* does not name
    (mark everything read, the first launch). A few marks are appended to the
    journal; more, or a long journal, replace the file (see the module's
    notes). An unusable file is replaced. Raises
    :class:`~okstra_core.errors.OkstraError` when the state cannot be written.
    """
    import filelock  # the writers are imported when a mark is written, not with the workbench's first frame

    from okstra_core import writes_outside

    path = state_path(project_root)
    at = times.iso(now or dt.datetime.now(dt.UTC))
    project = Path(os.path.realpath(project_root))
    in_the_way = _in_the_way(path)
    if in_the_way is not None:
        raise OkstraError(path, in_the_way)
    try:
        os.makedirs(path.parent, exist_ok=True)
        lock = filelock.FileLock(str(path) + layout.LOCK_SUFFIX, timeout=LOCK_TIMEOUT)
        with lock:
            if not replace_all and (not seen or _append(project_root, seen, at)):
                return
            current = {} if replace_all else load(project_root).marks
            current.update({key: Mark(sig, at) for key, sig in seen.items()})
            writes_outside.replace_file(path, _dump(project, current))
            # The file now holds every journalled mark (or drops them with the rest): the journal goes.
            _remove_journal(journal_path(project_root))
    except filelock.Timeout:
        raise OkstraError(path, f"is locked by another workbench for over {LOCK_TIMEOUT:.0f} s") from None
    except OSError as exc:
        raise OkstraError(path, f"cannot be written ({exc.strerror or exc})") from None


def _remove_journal(journal: Path) -> None:
    try:
        os.unlink(journal)
    except FileNotFoundError:
        pass
    except OSError as exc:  # left in place, its older marks would be replayed over the file's newer ones
        raise OkstraError(journal, f"cannot be removed ({exc.strerror or exc})") from None


def _append(project_root: Path, seen: Mapping[str, str], at: str) -> bool:
    """Append the marks of *seen* to the journal (the caller holds the lock); False when the file must be
    replaced instead: many marks, no usable state file to append to, or a journal grown long."""
    from okstra_core import writes_outside

    file = _identity_at(state_path(project_root))
    if len(seen) > JOURNAL_BATCH or file is None:
        return False
    journal = journal_path(project_root)
    try:
        st = os.lstat(journal)
    except FileNotFoundError:
        pass
    else:  # a long journal, or something else in its place, goes with the replaced file
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1 or st.st_size > JOURNAL_MAX_BYTES:
            return False
    # Each line names the file it adds to: replayed only over that file, never over a newer one.
    lines = b"".join(
        (json.dumps({"task": key, "signature": sig, "at": at, "file": file}, ensure_ascii=False) + "\n").encode()
        for key, sig in seen.items()
    )
    writes_outside.append_lines(journal, lines)
    return True


def _dump(project: Path, marks: Mapping[str, Mark]) -> bytes:
    doc: dict[str, Any] = {
        "version": SEEN_VERSION,
        "project": str(project),
        "tasks": {key: {"signature": m.signature, "at": m.at} for key, m in sorted(marks.items())},
    }
    # Compact: written by the C encoder (an indented dump of 100,000 marks is Python's, 0.5 s and 70 MB at once).
    return (json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
