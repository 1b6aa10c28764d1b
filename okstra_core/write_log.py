"""The workbench's write log: every store write it made, with the ``okstra`` command line that makes the same one.

Per user and project, in the user's state folder
(:func:`okstra_core.layout.okstra_state_dir`, ``write-log/<project digest>/``;
never inside the store):

* ``log.jsonl``: one JSON object per write, oldest first (at most :data:`TRIM_AT`, trimmed to the newest
  :data:`KEEP_ENTRIES`)::

    {"version": 1, "at": "2026-12-02T07:41:05.123456Z", "what": "select IO-002",
     "task": "shop:payments:retry", "files": [".okstra/tasks/…/user-response-….md"],
     "commands": [["okstra", "direction", "select", "/home/me/shop", "--task", "…", "--at", "…"]],
     "projectRoot": "/home/me/shop"}

  ``projectRoot`` is the real root of the project written (the workbench opens one project at a time, and
  may switch to another: each entry names its own); an entry without it (written before it was recorded) is
  read all the same.

* ``inputs/``: the files those command lines read (the answers typed into a
  wizard), written once, readable by their owner only.

Each command line carries ``--at`` with the moment the workbench wrote, so
running it on the store as it was before the write makes the same bytes.
The log keeps the newest :data:`KEEP_ENTRIES` writes; older entries and the
inputs only they named are dropped. Appends and trims happen under a lock, so
two workbenches on one project both log. Reading is tolerant: a line that is
not an entry of this version is skipped and counted, never trusted.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import filelock

from . import layout, reading, times, writes, writes_outside
from .errors import OkstraError, WriteRefused

LOG_VERSION: Final = 1
WRITE_LOG_DIR: Final = "write-log"
LOG_FILE: Final = "log.jsonl"
INPUTS_DIR: Final = "inputs"
#: Entries kept; an append past :data:`TRIM_AT` trims the log back to this many.
KEEP_ENTRIES: Final = 500
TRIM_AT: Final = 600
#: The log is read from its last this-many bytes (a line is about 1 kB).
READ_MAX_BYTES: Final = 4 * 1024 * 1024
LOCK_TIMEOUT: Final = 10.0
#: Names tried for an input file before giving up (each taken one by other content).
MAX_NAME_TRIES: Final = 100
#: The program named first in every logged command line.
PROGRAM: Final = "okstra"


@dataclass(frozen=True, slots=True)
class Input:
    """A file a command line reads: the option naming it, the file's suffix and its text."""

    option: str
    suffix: str
    text: str


@dataclass(frozen=True, slots=True)
class Verb:
    """One ``okstra`` verb that makes (part of) a write: its words, options and input files.

    The project root goes after the words; ``--at`` is added when the entry is recorded.
    """

    words: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()
    inputs: tuple[Input, ...] = ()
    #: False for a verb that takes no ``--at`` (its write records no time).
    timed: bool = True


@dataclass(frozen=True, slots=True)
class Entry:
    """One logged write."""

    at: str
    what: str
    task: str
    files: tuple[str, ...]
    commands: tuple[tuple[str, ...], ...]
    #: The real root of the project written (None: an entry that does not say).
    project_root: str | None = None

    @property
    def moment(self) -> dt.datetime | None:
        return times.parse_time(self.at)


@dataclass(slots=True)
class Log:
    """The entries of one project's log, newest first, and how many lines were skipped as unusable."""

    entries: list[Entry] = field(default_factory=list)
    skipped: int = 0
    path: Path | None = None


def at_text(moment: dt.datetime) -> str:
    """``2026-12-02T07:41:05.123456Z``: a write's moment as ``--at`` takes it (microseconds, UTC)."""
    return times.iso_micro(moment)


def log_dir(project_root: Path) -> Path:
    """The folder of the project's write log (keyed by its real path)."""
    return layout.okstra_state_dir() / WRITE_LOG_DIR / layout.project_digest(project_root)


def log_path(project_root: Path) -> Path:
    return log_dir(project_root) / LOG_FILE


@contextmanager
def collected_writes() -> Iterator[list[Path]]:
    """The store files this thread writes inside the block, in order, each once."""
    thread = threading.get_ident()
    paths: list[Path] = []

    def note(path: Path) -> None:
        if threading.get_ident() == thread and path not in paths:
            paths.append(path)

    stop = writes.observe_writes(note)
    try:
        yield paths
    finally:
        stop()


def record(
    project_root: Path, moment: dt.datetime, what: str, task: str, files: Sequence[Path], verbs: Sequence[Verb]
) -> Entry:
    """Append one write to the project's log: its input files first, then the entry (under the log's lock).

    Raises :class:`~okstra_core.errors.OkstraError` naming the log when it cannot be written; the
    store write it describes has happened either way.
    """
    root = Path(os.path.realpath(project_root))
    folder = log_dir(root)
    stamp = times.compact_stamp(moment)
    commands: list[tuple[str, ...]] = []
    try:
        for number, verb in enumerate(verbs, 1):
            commands.append(_command(root, folder, f"{stamp}-{number}", verb, moment))
        entry = Entry(
            at=at_text(moment),
            what=what,
            task=task,
            files=tuple(_shown(path, root) for path in files),
            commands=tuple(commands),
            project_root=str(root),
        )
        _append(folder, entry)
    except filelock.Timeout:
        raise OkstraError(folder / LOG_FILE, f"is locked by another workbench for over {LOCK_TIMEOUT:.0f} s") from None
    except OkstraError:
        raise  # already one line naming its file
    except OSError as exc:
        raise OkstraError(folder / LOG_FILE, f"cannot be written ({exc.strerror or exc})") from None
    return entry


def _shown(path: Path, root: Path) -> str:
    try:
        return layout.rel(path, root)
    except ValueError:
        return str(path)


def _command(root: Path, folder: Path, name: str, verb: Verb, moment: dt.datetime) -> tuple[str, ...]:
    argv = [PROGRAM, *verb.words, str(root)]
    for option, value in verb.options:
        argv += [option, value]
    for number, given in enumerate(verb.inputs, 1):
        argv += [given.option, str(_save_input(folder / INPUTS_DIR, f"{name}-{number}", given))]
    if verb.timed:
        argv += ["--at", at_text(moment)]
    return tuple(argv)


def _save_input(inputs: Path, name: str, given: Input) -> Path:
    """Save *given* as a new file of *inputs* (two writes of one moment, or of two workbenches, never share one)."""
    data = given.text.encode("utf-8")
    for attempt in range(MAX_NAME_TRIES):
        target = inputs / f"{name}{f'.{attempt}' if attempt else ''}{given.suffix}"
        try:
            writes_outside.create_private(target, data)
        except WriteRefused:
            continue  # taken by other content: the next name
        return target
    raise WriteRefused(inputs, f"no free name for input {name} after {MAX_NAME_TRIES} tries")


def _append(folder: Path, entry: Entry) -> None:
    path = folder / LOG_FILE
    os.makedirs(folder, mode=writes_outside.PRIVATE_DIR_MODE, exist_ok=True)
    line = json.dumps(_doc(entry), ensure_ascii=False, separators=(",", ":")) + "\n"
    with filelock.FileLock(str(path) + layout.LOCK_SUFFIX, timeout=LOCK_TIMEOUT):
        # Whole lines only, never through a symlink, and never waiting on a FIFO put in the log's place.
        try:
            writes_outside.append_lines(path, line.encode("utf-8"), mode=writes_outside.PRIVATE_MODE)
        except OkstraError as exc:
            raise OkstraError(path, f"cannot be written ({exc.reason})") from None
        if _line_count(path) > TRIM_AT:
            _trim(folder)


def _doc(entry: Entry) -> dict[str, Any]:
    return {
        "version": LOG_VERSION,
        "at": entry.at,
        "what": entry.what,
        "task": entry.task,
        "files": list(entry.files),
        "commands": [list(c) for c in entry.commands],
        **({} if entry.project_root is None else {"projectRoot": entry.project_root}),
    }


def _line_count(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))


def _trim(folder: Path) -> None:
    """Keep the newest :data:`KEEP_ENTRIES` lines; drop the inputs no kept line names (caller holds the lock)."""
    path = folder / LOG_FILE
    lines = path.read_bytes().splitlines(keepends=True)[-KEEP_ENTRIES:]
    data = b"".join(lines)
    writes_outside.replace_file(path, data)
    named = data.decode("utf-8", "replace")
    inputs = folder / INPUTS_DIR
    with suppress(OSError):
        for name in os.listdir(inputs):
            if name not in named:
                with suppress(OSError):
                    os.unlink(inputs / name)


def read_log(project_root: Path) -> Log:
    """The project's logged writes, newest first (an absent log has none; unusable lines are counted)."""
    path = log_path(project_root)
    log = Log(path=path)
    opened = reading.open_own_file(path)
    if opened is None:
        return log
    if isinstance(opened, reading.LoadError):
        raise OkstraError(path, opened.reason)
    with os.fdopen(opened[0], "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > READ_MAX_BYTES:
            handle.seek(size - READ_MAX_BYTES)
            handle.readline()  # the first line is cut: skip it
        data = handle.read(READ_MAX_BYTES)
    for raw in data.splitlines():
        entry = _entry(raw)
        if entry is None:
            log.skipped += 1
        else:
            log.entries.append(entry)
    log.entries.reverse()
    return log


def _entry(raw: bytes) -> Entry | None:
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser's depth
        return None
    if not isinstance(doc, dict) or doc.get("version") != LOG_VERSION:
        return None
    at, what, task = doc.get("at"), doc.get("what"), doc.get("task")
    files, commands = doc.get("files"), doc.get("commands")
    if not (isinstance(at, str) and isinstance(what, str) and isinstance(task, str)):
        return None
    if not (isinstance(files, list) and all(isinstance(f, str) for f in files)):
        return None
    if not (isinstance(commands, list) and all(_is_argv(c) for c in commands)):
        return None
    project_root = doc.get("projectRoot")  # optional: older entries do not name it
    root = project_root if isinstance(project_root, str) else None
    return Entry(at, what, task, tuple(files), tuple(tuple(c) for c in commands), project_root=root)


def _is_argv(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(word, str) for word in value)
