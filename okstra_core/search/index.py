"""The search index of one project: SQLite FTS5 tables in the store index's database, in the user's cache
folder, never in the store.

The tables are the search's *part* of the store index's database
(:mod:`okstra_core.store_index`: one file per project,
``<cache>/index/<digest of the root>.sqlite``, in WAL mode, so that a
workbench and a command can read it while a third process brings it up to
date); each is named ``search_...``, and the part carries its own version
(:data:`PART_FORMAT`): a part of another version is dropped and made afresh,
the store index's facts left as they are. Each indexed file is recorded with
the same freshness key as the check cache uses (size, mtime, ctime, inode),
each walked folder with its own key and its listing: an unchanged folder is
confirmed by one ``stat`` (a name added, removed or renamed changes its
mtime), an unchanged file by one more, and only changed, added and removed
files are read again. Anything whose mtime is within :data:`RACY_NS` of the
look is recorded as unsettled and looked at again next time (a second write in
the same clock tick would keep the same metadata).

Opened with ``watchman=True``, the look first asks the user's watchman daemon
what changed under ``.okstra/`` since the clock kept in ``search_meta`` (the
store index's freshness source, :class:`okstra_core.store_index.ChangedSince`;
the facts keep their own clock, as each holds as of its own): a folder with no
change at, below or above it, whose record was settled, is taken as recorded
without a ``stat``, and so is everything below it, without even its record
being read. The look then reads the records of the folders on the way to a
change, below a changed one and of those whose record is unsettled (two
partial indexes find them), and nothing else; an answer watchman cannot vouch
for means the full look.
The clock kept is the one watchman gave before the look, written in the same
transaction as what the look found, and only over the clock this process read
(else none is kept).

A first build (no database at the index's path) is made where no other
process sees it (:func:`okstra_core.store_index.private_path`): one
transaction, its rollback journal in memory, each page written once, the rows
the workers read written as each hands them back while the others still read;
then synced and put in place with a hard link, which never replaces a database
another process made meanwhile (that one is kept, and updated instead). A
build left by a process that is gone is removed by the next one.

The database is trusted only when it is ours (:func:`okstra_core.store_index.adopt`:
its ``application_id``, its format and the project it names). A file that is
not, or that SQLite finds corrupt, truncated or locked past
:data:`BUSY_SECONDS`, is removed and built afresh, with one line in
:attr:`SearchIndex.notices`. A database the search kept in a folder of its own
(``<cache>/search/``) before is removed when found. Nothing here writes in the
store.
"""

from __future__ import annotations

import hashlib
import operator
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from .. import layout, reading, store_index
from ..progress import Progress
from ..store_index import ChangedSince
from .extract import INDEX_CHARS, child_role, extract, file_kind
from .query import Query, QueryError
from .tokens import FTS_TOKENIZER

#: How long a write waits for another process's before the index is taken as locked.
BUSY_SECONDS: float = 15.0
#: Files and folders modified this close to the look are not trusted to show a later change.
RACY_NS: int = 2_000_000_000
#: Snippet markers around a match (control characters, which the indexed text never holds).
MATCH_START: Final = "\x02"
MATCH_END: Final = "\x03"
#: Tokens of context in a snippet.
SNIPPET_TOKENS: Final = 14

T = TypeVar("T")

_UNSETTLED: Final = "racy"
#: A folder record holding an unsettled key or hash of its files, and one holding an unsettled hash of its
#: transcripts (always, while transcripts are not indexed): the conditions of two partial indexes.
_UNSETTLED_DIR: Final = f"(stat = '{_UNSETTLED}' OR plain_hash = '{_UNSETTLED}')"
_UNSETTLED_LOGS: Final = f"log_hash = '{_UNSETTLED}'"
#: A folder's record as a look takes it (not its files' kinds: only a folder looked at file by file needs them).
_RECORD: Final = "stat, role, subdirs, plain, logged, plain_hash, log_hash"
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
#: What SQLite says (with SQLITE_ERROR) of a ``MATCH`` expression it cannot parse: the query's fault, not the index's.
_UNPARSABLE: Final = re.compile(
    r"fts5: (syntax error|parser stack overflow)|expression tree is too large", re.IGNORECASE
)


def _unparsable(exc: sqlite3.OperationalError) -> bool:
    """Whether *exc* says the ``MATCH`` expression could not be parsed (never that the index is damaged)."""
    return getattr(exc, "sqlite_errorcode", 1) == 1 and _UNPARSABLE.search(str(exc)) is not None


#: The search's part of the store index's database (:func:`okstra_core.store_index.part_made`): its name, which
#: every one of its tables starts with, and its version, bumped whenever its tables or what they hold change.
PART: Final = "search"
PART_FORMAT: Final = 6

_SCHEMA: Final = (
    "CREATE TABLE search_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE search_dirs("
    "path TEXT PRIMARY KEY, stat TEXT NOT NULL, role TEXT NOT NULL, subdirs TEXT NOT NULL, plain TEXT NOT NULL, "
    "logged TEXT NOT NULL, plain_hash TEXT NOT NULL, log_hash TEXT NOT NULL, files TEXT NOT NULL)",
    "CREATE TABLE search_files("
    "id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, dir TEXT NOT NULL, stat TEXT NOT NULL, kind TEXT NOT NULL, "
    "task TEXT NOT NULL, run_type TEXT, mtime INTEGER NOT NULL, capped INTEGER NOT NULL, error TEXT, "
    "chars INTEGER NOT NULL, recorded INTEGER)",
    # The folders whose record is not yet settled, so that a search asks for them without reading every folder's.
    f"CREATE INDEX search_dirs_unsettled ON search_dirs(path) WHERE {_UNSETTLED_DIR}",
    f"CREATE INDEX search_dirs_unsettled_logs ON search_dirs(path) WHERE {_UNSETTLED_LOGS}",
    "CREATE INDEX search_files_by_task ON search_files(task)",
    "CREATE INDEX search_files_by_dir ON search_files(dir)",
    "CREATE TABLE search_sections(id INTEGER PRIMARY KEY, file INTEGER NOT NULL, kind TEXT NOT NULL, label TEXT)",
    "CREATE INDEX search_sections_by_file ON search_sections(file)",
    "CREATE TABLE search_tasks(rel TEXT PRIMARY KEY, key TEXT NOT NULL, type TEXT)",
    f"CREATE VIRTUAL TABLE search_body USING fts5(text, tokenize='{FTS_TOKENIZER}')",
)

#: The folder of the search's own database files before its tables moved into the store index's: a file left
#: there is removed when the project is searched.
_OLD_DIR: Final = "search"


class SearchError(Exception):
    """The index cannot be used at all (its folder is unusable); the message is one line naming it."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching section of one file."""

    task: str
    task_folder: str
    task_type: str | None
    kind: str
    label: str | None
    #: The file, relative to the project root (POSIX).
    path: str
    #: Text around the match; matched tokens between :data:`MATCH_START` and :data:`MATCH_END`.
    snippet: str
    capped: bool
    modified_ns: int
    score: float

    def snippet_parts(self) -> list[tuple[str, bool]]:
        """The snippet as (text, is a match) pieces."""
        parts: list[tuple[str, bool]] = []
        for i, piece in enumerate(self.snippet.split(MATCH_START)):
            if i == 0:
                parts.append((piece, False))
                continue
            match, _, rest = piece.partition(MATCH_END)
            parts.append((match, True))
            parts.append((rest, False))
        return [(text, matched) for text, matched in parts if text]

    @property
    def plain_snippet(self) -> str:
        return self.snippet.replace(MATCH_START, "").replace(MATCH_END, "")


@dataclass(frozen=True, slots=True)
class Results:
    hits: list[Hit]
    #: Matching sections in all (the hits are the first ``limit`` of them).
    total: int


@dataclass(slots=True)
class Update:
    """What one update did."""

    read: int = 0
    removed: int = 0
    unchanged: int = 0
    rebuilt: bool = False


def index_path(cache_dir: Path, root: Path) -> Path:
    """The database holding the search's tables for the project *root* in the cache folder *cache_dir*: the
    store index's."""
    return store_index.index_path(Path(os.path.abspath(cache_dir)), root)


def _remove_old_file(cache_dir: Path, root: Path) -> None:
    """Remove the search's own database of *root* left in *cache_dir* by an okstra that kept one (and its
    folder once empty)."""
    folder = Path(os.path.abspath(cache_dir)) / _OLD_DIR
    if not folder.is_dir():
        return
    for named in {os.path.abspath(root), os.path.realpath(root)}:
        ident = hashlib.sha256(os.fsencode(named)).hexdigest()[:32]
        with suppress(OSError):
            store_index.discard(folder / f"{ident}.sqlite")
    with suppress(OSError):
        folder.rmdir()


def _key(st: os.stat_result, now_ns: int) -> str:
    return _key_of(_META(st), now_ns)


def _key_of(meta: tuple[int, ...], now_ns: int) -> str:
    """The key of a file whose metadata (:data:`_META`) was looked at no earlier than *now_ns*."""
    _, size, mtime, ctime, ino = meta
    if abs(now_ns - mtime) < RACY_NS or abs(now_ns - ctime) < RACY_NS:
        return _UNSETTLED
    return f"{size},{mtime},{ctime},{ino}"


#: One file read, as a reader hands it back: its row of ``search_files`` but the id and recorded time (path,
#: folder, key, kind, task, run type, mtime, whether it was cut, why it could not be read, characters), then its
#: sections (kind, label, text). Plain tuples, made in the reader: a worker's results cross to the parent pickled,
#: and the parent writes them with the write lock held.
_Row = tuple[str, str, str, str, str, str | None, int, int, str | None, int, tuple[tuple[str, str | None, str], ...]]
_Read = tuple[list[_Row], dict[str, dict[str, int]]]


@dataclass(slots=True)
class _Look:
    """The store as one look found it."""

    #: Every walked folder: key, role, sub-folders, the names of its files and of its transcripts, the hashes
    #: of their metadata, and its files' ``kind\tname`` lines (None until a file-by-file look needs them).
    dirs: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    #: Folders listed afresh or whose files' hash changed: looked at file by file.
    dirty: list[str] = field(default_factory=list)
    #: Folders in the index that are no longer there.
    gone: list[str] = field(default_factory=list)
    #: Files looked at.
    files: int = 0
    #: Files read again in place (counted in both stale and removed).
    replaced: int = 0
    #: Whether transcripts were looked at.
    logs: bool = False
    #: For a folder a worker listed afresh, each file's metadata (:data:`_META`) as the worker looked at it, by
    #: name, and the time the look began: the file-by-file look is then made there, shared out.
    metas: dict[str, tuple[int, dict[str, tuple[int, ...]]]] = field(default_factory=dict)
    #: The folders the index held before the look: only their files can have rows.
    known: frozenset[str] = frozenset()
    #: On a first build, the folders whose files the workers read as they walked them (not compared again), the
    #: files read and the recorded times of their tasks (:func:`_read_walked`).
    read_dirs: set[str] = field(default_factory=set)
    read: list[_Row] = field(default_factory=list)
    times: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Of those, the files already written in the index as they came (:meth:`SearchIndex._look`'s sink).
    sunk: int = 0
    #: Told what changed: the folders taken as recorded with everything below them, unread; the folders the walk
    #: reached that are no longer folders; and whether :attr:`files` counts every file (else the index counts).
    vouched: set[str] = field(default_factory=set)
    lost: list[str] = field(default_factory=list)
    counted: bool = True


class _Records(dict[str, "tuple[str, ...] | None"]):
    """The index's folder records, each read from *conn* when first asked for (None: the index has none): a look
    told what changed reads only the few it reaches."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__()
        self._conn = conn

    def get(self, rel: str, default: Any = None) -> Any:
        if not dict.__contains__(self, rel):
            row = self._conn.execute(f"SELECT {_RECORD} FROM search_dirs WHERE path = ?", (rel,)).fetchone()
            self[rel] = None if row is None else tuple(row)
        found = self[rel]
        return default if found is None else found

    def found(self) -> dict[str, tuple[str, ...]]:
        """The records read that the index held."""
        return {rel: record for rel, record in self.items() if record is not None}


#: A file's metadata as the folder hash holds it (the check cache's key, less the device).
_META: Final = operator.attrgetter("st_mode", "st_size", "st_mtime_ns", "st_ctime_ns", "st_ino")
_MTIME: Final = operator.itemgetter(2)
_CTIME: Final = operator.itemgetter(3)


def _split(line: str) -> tuple[str, str, str]:
    return line.partition("\t")


def _files_hash(folder: str, names: str, now: int) -> str:
    """The hash of the metadata of the files *names* (newline-separated) in *folder*; :data:`_UNSETTLED` when
    one is gone or was modified within :data:`RACY_NS` of *now*.

    One ``stat`` per file, the loop in C (``map``); Python's hash of a tuple of integers is the same in every
    process of one Python build, and a different build only makes every folder be looked at file by file once.
    """
    if not names:
        return "0"
    try:
        metas = tuple(map(_META, map(os.stat, map(folder.__add__, names.split("\n")))))
    except OSError:
        return _UNSETTLED
    if now - max(max(map(_MTIME, metas)), max(map(_CTIME, metas))) < RACY_NS:
        return _UNSETTLED
    return str(hash(metas))


def _hash_of(names: str, metas: dict[str, tuple[int, ...]], now: int) -> str:
    """:func:`_files_hash` of *names* from their metadata already looked at (*metas*, by name): one look of each
    file serves both the folder's hash and the file-by-file comparison."""
    if not names:
        return "0"
    try:
        found = tuple(map(metas.__getitem__, names.split("\n")))
    except KeyError:  # gone before it could be looked at
        return _UNSETTLED
    if now - max(max(map(_MTIME, found)), max(map(_CTIME, found))) < RACY_NS:
        return _UNSETTLED
    return str(hash(found))


#: The slashes in a task folder's project-relative path (``.okstra/tasks/<group>/<task>``): the shared-out look
#: walks the folders above it in the parent and each task folder's subtree in a worker.
_TASK_DEPTH: Final = 3

#: What the look's forked workers read, set before they are forked: (base, known folders, logs, now, task folders,
#: the project root when the workers read the files too: a first build).
_SHARED: tuple[str, dict[str, tuple[str, ...]], bool, int, list[tuple[str, str]], Path | None] | None = None


def _walk(
    base: str,
    known: Mapping[str, tuple[str, ...] | None],
    logs: bool,
    now: int,
    stack: list[tuple[str, str]],
    out: _Look,
    defer_depth: int | None = None,
    quiet: ChangedSince | None = None,
    look_files: bool = False,
) -> list[tuple[str, str]]:
    """Walk the folders of *stack* (project-relative, with their roles) and below into *out*; a folder at
    *defer_depth* is not walked but returned, for a worker. A folder the freshness source *quiet* vouches for
    is taken as recorded, without a look, and so is everything below it (:func:`_vouched`). With *look_files*
    (a worker), the files of a folder listed afresh are looked at here too (:attr:`_Look.metas`)."""
    deferred: list[tuple[str, str]] = []
    while stack:
        rel, role = stack.pop()
        if defer_depth is not None and rel.count("/") >= defer_depth:
            deferred.append((rel, role))
            continue
        if quiet is not None:
            if rel in out.dirs or rel in out.vouched:
                continue  # a folder whose record is unsettled, reached from above too
            if _vouched(base, rel, role, known.get(rel), logs, quiet, out):
                continue
        try:
            st = os.lstat(base + rel)
        except OSError:
            out.lost.append(rel)
            continue
        if not stat.S_ISDIR(st.st_mode):
            out.lost.append(rel)
            continue
        key = _key(st, now)
        previous = known.get(rel)
        if previous is not None and previous[0] == key and previous[1] == role and key != _UNSETTLED:
            subdirs, plain, logged, plain_hash, log_hash = previous[2:]
            files: str | None = None
            listed = False
        else:
            # Listed after the stat: a change in between shows as a new key next time.
            subdirs, files, plain, logged, linked = _listing(base + rel, role)
            plain_hash = log_hash = _UNSETTLED
            listed = True
            if linked:
                # A file here is a symlink: watchman names its target when it changes, never this folder, so the
                # folder is never vouched for, nor its record taken as it stands (listed and looked at each time).
                key = _UNSETTLED
            if look_files:
                # Each file's key is judged against the moment its look began (a file written during the walk is
                # not taken as settled).
                out.metas[rel] = (time.time_ns(), _file_metas(base + rel + "/", files, logs))
        if subdirs:
            stack.extend((f"{rel}/{name}", sub) for sub, _, name in map(_split, subdirs.split("\n")))
        folder = base + rel + "/"
        if listed:
            # Looked at file by file next (:meth:`SearchIndex._changes`): its hashes are made from those looks.
            now_plain: str | None = None
            now_logs: str | None = None if logs else log_hash
        else:
            now_plain = _files_hash(folder, plain, now)
            now_logs = _files_hash(folder, logged, now) if logs else log_hash
        out.dirs[rel] = (key, role, subdirs, plain, logged, now_plain, now_logs, files)
        out.files += plain.count("\n") + 1 if plain else 0
        if logs:
            out.files += logged.count("\n") + 1 if logged else 0
        changed = now_plain != plain_hash or now_plain == _UNSETTLED
        if logs:  # the transcripts' hash counts only while they are indexed
            changed = changed or now_logs != log_hash or now_logs == _UNSETTLED
        if listed or changed:
            out.dirty.append(rel)
    return deferred


def _file_metas(folder: str, files: str, logs: bool) -> dict[str, tuple[int, ...]]:
    """The metadata (:data:`_META`) of each file of *files* (``kind\tname`` lines) in *folder*, by name; the
    transcripts' only with *logs*; a file gone meanwhile is left out."""
    metas: dict[str, tuple[int, ...]] = {}
    for kind, _, name in map(_split, files.split("\n") if files else ()):
        if kind == "log" and not logs:
            continue
        try:
            metas[name] = _META(os.stat(folder + name))
        except OSError:
            continue
    return metas


def _vouched(
    base: str,
    rel: str,
    role: str,
    previous: tuple[str, ...] | None,
    logs: bool,
    quiet: ChangedSince,
    out: _Look,
) -> bool:
    """Take the folder *rel* as recorded, and every folder below it, when the freshness source says nothing
    changed at, below or above it and its record was settled; False: it must be looked at.

    Nothing changed below a folder vouched for, so each folder below it is vouched for too, unless its own
    record is unsettled: those are looked at wherever they are (:meth:`SearchIndex._look` starts from them)."""
    if previous is None or previous[1] != role or _UNSETTLED in (previous[0], previous[5]):
        return False
    if (logs and previous[6] == _UNSETTLED) or not quiet.quiet(base + rel):
        return False
    out.vouched.add(rel)
    return True


_Walked = tuple[
    dict[str, tuple[Any, ...]],
    list[str],
    str,
    int,
    dict[str, tuple[int, dict[str, tuple[int, ...]]]],
    _Read | None,
]


def _walk_range(start: int, stop: int) -> _Walked:
    """Worker entry point: walk ``folders[start:stop]``; return only what the parent keeps (the folders to look
    at file by file, in order), the folders visited (newline-separated), the files counted and the metadata of
    the files of the folders listed afresh; on a first build, instead of that metadata, the files read."""
    assert _SHARED is not None
    base, known, logs, now, folders, root = _SHARED
    out = _Look()
    # Reversed: the walk pops from the end, so the folders are taken in the parent's order.
    _walk(base, known, logs, now, folders[start:stop][::-1], out, look_files=True)
    if root is None:
        return {rel: out.dirs[rel] for rel in out.dirty}, out.dirty, "\n".join(out.dirs), out.files, out.metas, None
    read = _read_walked(root, base, out)
    return {rel: out.dirs[rel] for rel in out.dirty}, out.dirty, "\n".join(out.dirs), out.files, {}, read


def _read_walked(root: Path, base: str, out: _Look) -> _Read:
    """Read every file of the folders *out* walked, which the index has never held (a first build): each task's
    files in path order, then its recorded times, as :meth:`SearchIndex._found` reads them."""
    stale: list[tuple[str, str, str, int]] = []
    for rel in out.dirty:
        entry = out.dirs[rel]
        # Every folder is listed afresh on a first build, its files looked at as it was.
        got = out.metas.pop(rel, None)
        looked, metas = got if got is not None else (time.time_ns(), _file_metas(base + rel + "/", entry[-1], out.logs))
        stale.extend(_file_by_file(rel, entry[-1], metas, looked, {})[0])
        out.dirs[rel] = _rehashed(entry, metas, looked, out.logs)
    timed = _timed(out.dirty)
    return _read_units(root, _units(stale, timed), timed)


def _timed(folders: Iterable[str]) -> set[str]:
    """The task folders (``<group>/<task-id>``) holding *folders*: those whose recorded times are read again."""
    return {t for t in (layout.task_and_run_type(rel)[0] for rel in folders) if t.count("/") == 1}


def _units(
    stale: list[tuple[str, str, str, int]], timed: set[str]
) -> list[tuple[str, list[tuple[str, str, str, int]]]]:
    """The files to read (*stale*) by task, in path order, with every task of *timed* (maybe with none)."""
    by_task: dict[str, list[tuple[str, str, str, int]]] = {folder: [] for folder in timed}
    for each in sorted(stale):
        by_task.setdefault(layout.task_and_run_type(each[0])[0], []).append(each)
    return sorted(by_task.items())


def _file_by_file(
    rel: str, files: str, metas: dict[str, tuple[int, ...]], looked: int, stored: dict[str, tuple[int, str]]
) -> tuple[list[tuple[str, str, str, int]], list[int], int]:
    """The files of the folder *rel* (``kind\tname`` lines, their metadata *metas* as looked at from *looked*)
    to read, as (path, kind, key, mtime); the ids of the rows of *stored* (by path: id, key) to forget; and how
    many of those are read again in place."""
    stale: list[tuple[str, str, str, int]] = []
    removed: list[int] = []
    replaced = 0
    current = set()
    for kind, _, name in map(_split, files.split("\n") if files else ()):
        meta = metas.get(name)
        if meta is None or not stat.S_ISREG(meta[0]):
            continue  # a transcript not looked at, or gone, or no longer a file
        path = f"{rel}/{name}"
        key = _key_of(meta, looked)
        current.add(path)
        old = stored.get(path)
        if old is None or old[1] != key or key == _UNSETTLED:
            stale.append((path, kind, key, meta[2]))
            if old is not None:
                removed.append(old[0])
                replaced += 1
    removed.extend(ident for path, (ident, _) in stored.items() if path not in current)
    return stale, removed, replaced


def _rehashed(entry: tuple[Any, ...], metas: dict[str, tuple[int, ...]], looked: int, logs: bool) -> tuple[Any, ...]:
    """A folder's record *entry* with the hashes of its files made from *metas* when it was listed afresh."""
    if entry[5] is not None and entry[6] is not None:
        return entry
    hashes = (_hash_of(entry[3], metas, looked), _hash_of(entry[4], metas, looked) if logs else entry[6])
    return (*entry[:5], *hashes, entry[7])


def _walk_ranges(folders: int, jobs: int, reading_too: bool) -> list[tuple[int, int]]:
    """The ``(start, stop)`` ranges of *folders* task folders handed to *jobs* workers: four each, or, when
    they read as they walk (a first build), 64 each, for the progress shown."""
    size = max(1, -(-folders // ((64 if reading_too else 4) * jobs)))
    return [(i, min(i + size, folders)) for i in range(0, folders, size)]


def _shared_walk(
    base: str,
    known: dict[str, tuple[str, ...]],
    logs: bool,
    now: int,
    folders: list[tuple[str, str]],
    jobs: int,
    ranges: list[tuple[int, int]],
    root: Path | None = None,
) -> Iterator[_Walked]:
    """Walk each of *ranges* of *folders* in *jobs* forked workers, which see *known* without it being sent to
    them; with *root* (a first build), each worker also reads the files of what it walked."""
    global _SHARED
    _SHARED = (base, known, logs, now, folders, root)
    try:
        yield from _in_workers(_walk_range, ranges, jobs)
    finally:
        _SHARED = None


def _in_workers(work: Callable[[int, int], T], ranges: list[tuple[int, int]], jobs: int) -> Iterator[T]:
    """*work* of each ``(start, stop)`` of *ranges* in *jobs* forked workers, in order (each ends with this
    process); the pool is imported here, so that a search told what changed starts and imports none."""
    if not ranges:
        return
    from ..workers import worker_pool

    with worker_pool(jobs) as pool:
        yield from pool.map(work, *zip(*ranges, strict=True))


#: Files to read from which a build or an update shares the reading out between worker processes.
SHARED_READ_FROM: int = 2000

#: What the forked readers read, set before they are forked: (root, tasks with their files to read, tasks whose
#: recorded times are wanted).
_SHARED_READ: tuple[Path, list[tuple[str, list[tuple[str, str, str, int]]]], set[str]] | None = None


def _read_units(root: Path, units: list[tuple[str, list[tuple[str, str, str, int]]]], timed: set[str]) -> _Read:
    """Read the files of each task of *units*, and the recorded times of those in *timed* (:mod:`.recorded`:
    a whole task at a time, since a run document written after a prompt places that prompt in its execution)."""
    from .recorded import task_times

    read: list[_Row] = []
    times: dict[str, dict[str, int]] = {}
    with reading.roots_resolved_once():
        for folder, files in units:
            # A task's text and its recorded times read many of the same documents: each is read once.
            with reading.memo(root):
                for rel, kind, key, mtime in files:
                    got = extract(root / rel, root, kind)
                    sections = tuple((s.kind, s.label, s.text) for s in got.sections)
                    task, run_type = layout.task_and_run_type(rel)
                    chars = sum(len(s.text) for s in got.sections)
                    row = (rel, rel.rpartition("/")[0], key, kind, task, run_type, mtime, int(got.capped), got.error)
                    read.append((*row, chars, sections))
                if folder in timed:
                    times[folder] = task_times(root, folder)
    return read, times


def _read_ranges(units: list[tuple[str, list[tuple[str, str, str, int]]]]) -> list[tuple[int, int]]:
    """*units* cut into runs of whole tasks of about a hundred files each (the steps of the progress shown)."""
    ranges: list[tuple[int, int]] = []
    start = files = 0
    for n, (_, each) in enumerate(units, start=1):
        files += len(each) + 1
        if files >= 100 or n == len(units):
            ranges.append((start, n))
            start, files = n, 0
    return ranges


def _read_range(start: int, stop: int) -> _Read:
    """Worker entry point: read ``units[start:stop]``."""
    assert _SHARED_READ is not None
    root, units, timed = _SHARED_READ
    return _read_units(root, units[start:stop], timed)


def _shared_read(
    root: Path, units: list[tuple[str, list[tuple[str, str, str, int]]]], timed: set[str], jobs: int
) -> Iterator[_Read]:
    """Read *units* in *jobs* forked workers, in order, in chunks of about a hundred files (the progress steps)."""
    global _SHARED_READ
    _SHARED_READ = (root, units, timed)
    try:
        yield from _in_workers(_read_range, _read_ranges(units), jobs)
    finally:
        _SHARED_READ = None


@dataclass(slots=True)
class _Found:
    """What one look found to change in the index, read before the write lock is taken."""

    #: How many files were read (new or changed), and the rows to forget.
    stale: int
    removed: list[int]
    #: The stale files, read.
    read: list[_Row]
    #: The recorded time of each file of the tasks touched, by task folder.
    times: dict[str, dict[str, int]]


class SearchIndex:
    """The index of the project *root*, kept in *cache_dir*. Open it with :meth:`open`, close with :meth:`close`."""

    def __init__(
        self, root: Path, cache_dir: Path, *, include_logs: bool = False, jobs: int = 1, watchman: bool = False
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.path = index_path(cache_dir, self.root)
        self.include_logs = include_logs
        #: Whether the look asks watchman what changed since the clock kept (the store index's freshness source).
        self.watchman = watchman
        #: Why watchman could not be asked (None: it was, or it was not asked for).
        self.watchman_problem: str | None = None
        #: Processes the look at the store is shared out between (forked; one: the look runs here).
        self.jobs = jobs
        #: One line per index found unusable and rebuilt.
        self.notices: list[str] = []
        self._conn: sqlite3.Connection | None = None
        #: Where a new database is being built, out of sight until :meth:`update` puts it in place (None: the
        #: database open is the one in place).
        self._private: Path | None = None
        self._cache_dir = cache_dir
        misplaced = layout.misplaced_cache(cache_dir, self.root)
        if misplaced is not None:
            raise SearchError(f"{cache_dir}: {misplaced}")

    # ------------------------------------------------------------- opening

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self.open()
        assert self._conn is not None
        return self._conn

    def open(self) -> None:
        """Open the index, building it afresh when there is none or it is not ours: the store index's database,
        with the search's part made in it when it holds none of this version."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise SearchError(f"{self.path.parent}: cannot create the index folder: {exc.strerror or exc}") from None
        _remove_old_file(self._cache_dir, self.root)
        there, problem = self._file_state()
        if problem is not None:
            self._discard(problem)
        if not there or problem is not None:
            self._open_private()
            return
        try:
            self._conn = self._connect()
            problem = store_index.adopt(self._conn, self.root)
            if problem is None:
                store_index.part_made(self._conn, PART, PART_FORMAT, _SCHEMA)
        except sqlite3.DatabaseError as exc:
            problem = self._problem(exc)
        if problem is not None:
            self._discard(problem)
            self._create()

    def _file_state(self) -> tuple[bool, str | None]:
        """Whether the database file is there, and why it cannot be used (None: it can, or it is not there)."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return False, None
        except OSError as exc:
            raise SearchError(f"{self.path}: cannot look at the index: {exc.strerror or exc}") from None
        if not stat.S_ISREG(st.st_mode):
            return True, "is not a regular file"
        return True, None

    def _open_private(self) -> None:
        """Start a new database where no other process sees it; :meth:`update` builds it in one transaction and
        puts it in place (:func:`okstra_core.store_index.publish`)."""
        store_index.remove_stale_private(self.path)
        private = store_index.private_path(self.path)
        store_index.discard(private)
        try:
            self._conn = store_index.connect_private(private)
            self._private = private
            store_index.create(self._conn, self.root)
            store_index.part_made(self._conn, PART, PART_FORMAT, _SCHEMA)
        except sqlite3.Error as exc:
            self.close()
            raise SearchError(f"{private}: cannot make the index: {exc}") from None

    def _publish(self) -> bool:
        """Put the database built privately in place and open it there; False when another process put one
        there meanwhile (this one is dropped, that one left as it is, and opened)."""
        assert self._conn is not None and self._private is not None
        conn, private = self._conn, self._private
        self._conn = self._private = None
        try:
            placed = store_index.publish(conn, private, self.path)
        except (OSError, sqlite3.Error) as exc:
            raise SearchError(f"{self.path}: cannot put the new index in place: {exc}") from None
        self.open()
        return placed

    def _connect(self) -> sqlite3.Connection:
        try:
            return store_index.connect(self.path, BUSY_SECONDS)
        except sqlite3.DatabaseError:
            raise  # what the file is: the caller's to judge
        except sqlite3.Error as exc:
            raise SearchError(f"{self.path}: cannot open the index: {exc}") from None

    def _create(self) -> None:
        """A new database, with the store index's tables and the search's."""
        self._conn = self._connect()
        store_index.create(self._conn, self.root)
        store_index.part_made(self._conn, PART, PART_FORMAT, _SCHEMA)

    def _problem(self, exc: sqlite3.DatabaseError) -> str:
        """What a database error says of the index: damaged or locked (rebuilt); anything else is raised."""
        if store_index.damaged(exc):
            return f"is damaged ({exc})"
        if store_index.busy(exc):
            return f"is locked by another process for over {BUSY_SECONDS:g}s"
        if isinstance(exc, sqlite3.OperationalError) and "fts5" in str(exc).lower():
            return f"is damaged ({exc})"
        raise SearchError(f"{self.path}: cannot use the index: {exc}") from None

    def rebuild(self) -> None:
        """Start the search's part afresh: the next :meth:`update` reads every file (the store index's facts are
        left as they are)."""
        for attempt in (0, 1):
            try:
                with self._guarded():
                    store_index.part_made(self.conn, PART, PART_FORMAT, _SCHEMA, afresh=True)
                    return
            except _Retry:
                if attempt:
                    raise SearchError(f"{self.path}: the index could not be rebuilt") from None

    def _discard(self, reason: str | None) -> None:
        """Remove the database (and its WAL and shared-memory files); say why, when there is a reason."""
        self.close()
        if reason is not None:
            self.notices.append(f"store index {self.path} {reason}: rebuilt")
        try:
            store_index.discard(self.path)
        except OSError as exc:
            raise SearchError(
                f"{exc.filename or self.path}: cannot remove the unusable index: {exc.strerror}"
            ) from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._private is not None:  # built but never put in place
            with suppress(OSError):
                store_index.discard(self._private)
            self._private = None

    def __enter__(self) -> SearchIndex:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _guarded(self) -> Iterator[None]:
        """Run a block; an index found corrupt or locked meanwhile is rebuilt and the block run once more."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if self._private is not None:
                # A new database that failed (a full disk, say): dropped; the next try starts from what is in place.
                self.notices.append(f"store index {self.path} could not be built ({exc}): building it again")
                self.close()
                self.open()
            else:
                self._discard(self._problem(exc))
                self._create()
            raise _Retry from None

    # ------------------------------------------------------------- updating

    def update(self, progress: Progress | None = None) -> Update:
        """Bring the index up to date with the store: read changed and added files, forget removed ones."""
        before = len(self.notices)
        for attempt in (0, 1):
            try:
                with self._guarded():
                    result = self._update(progress)
                    if self._private is not None and not self._publish():
                        result = self._update(progress)  # into the index another process put in place meanwhile
                    result.rebuilt = len(self.notices) > before
                    return result
            except _Retry:
                if attempt:
                    raise SearchError(f"{self.path}: the index could not be rebuilt") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _wants_logs(self) -> bool:
        if self.include_logs:
            return True
        row = self.conn.execute("SELECT value FROM search_meta WHERE key = 'logs'").fetchone()
        return row is not None

    def _ask_watchman(self) -> tuple[ChangedSince | None, str | None, str | None]:
        """What watchman says changed since the clock kept (None: look at everything), the clock kept, and the
        clock to keep once the index holds what this look found (asked before the look)."""
        from .. import watchman

        kept = store_index.kept_clock(self.conn, "search_meta")
        since = watchman.changed_since(self.root, kept)
        self.watchman_problem = since.problem
        if since.token is None:
            return None, kept, None
        within = os.fspath(layout.okstra_dir(self.root))
        return (None if since.changed is None else ChangedSince(since.changed, within=within)), kept, since.token

    def _update(self, progress: Progress | None) -> Update:
        logs = self._wants_logs()
        generation = self._generation()
        quiet, kept, clock = self._ask_watchman() if self.watchman else (None, None, None)
        if self._private is not None:
            # A new database no other process sees: one transaction from before the look, the rows the workers
            # read as they walk written while the others still read.
            self.conn.execute("BEGIN")
            look = self._look({}, logs, None, progress, sink=self._insert)
            return self._updated(look, generation, kept, clock, progress)
        if quiet is not None and clock is not None and not quiet.changed and self._settled(logs):
            # Nothing changed under the store since the clock kept, and nothing was recorded too recently to be
            # trusted: the index holds as it is, without a walk.
            if clock != kept:
                self._keep_clock_alone(generation, kept, clock)
            return Update(unchanged=self.conn.execute("SELECT count(*) FROM search_files").fetchone()[0])
        look = self._look({} if quiet is not None else self._known_dirs(), logs, quiet, progress)
        catalog_key = self._catalog_key()
        if (
            not look.dirty
            and not look.gone
            and not self._catalog_changed(catalog_key)
            and (not self.include_logs or self._logs_recorded())
        ):
            if clock is not None and clock != kept:
                self._keep_clock_alone(generation, kept, clock)
            return Update(unchanged=self._files(look))
        # What changed is read before the write lock is taken: the other writers of the database (a search, the
        # store index keeping facts) wait only for the writes.
        found = self._found(look, progress)
        self.conn.execute("BEGIN IMMEDIATE")
        return self._updated(look, generation, kept, clock, progress, found=found, catalog_key=catalog_key)

    def _updated(
        self,
        look: _Look,
        generation: int,
        kept: str | None,
        clock: str | None,
        progress: Progress | None = None,
        found: _Found | None = None,
        catalog_key: str | None = None,
    ) -> Update:
        """Write what *look* found (*found*: read already, else read now) in the transaction open, and commit;
        the catalog's key is *catalog_key* when taken already."""
        conn = self.conn
        logs = look.logs
        if catalog_key is None:
            catalog_key = self._catalog_key()
        try:
            if found is None:
                found = self._found(look, progress)
            elif self._generation() != generation:
                # Another process changed the index while this one looked or waited for the lock: look again, at
                # everything (what watchman named is as of this process's clock, not of the other's rows).
                look = self._look(self._known_dirs(), logs)
                found = self._found(look, progress)
            stale, removed = found.stale, found.removed
            self._forget(removed)
            self._save_times(found.times, {row[0] for row in found.read})
            self._insert(found.read, found.times)
            self._save_dirs(look)
            if self._catalog_changed(catalog_key):
                self._save_tasks(catalog_key)
            if self.include_logs:
                conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('logs', '1')")
            conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('generation', ?)", (str(generation + 1),))
            if clock is not None:
                store_index.keep_clock(conn, "search_meta", kept, clock)
            files = self._files(look)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return Update(read=stale, removed=len(removed) - look.replaced, unchanged=files - stale)

    def _files(self, look: _Look) -> int:
        """How many files the store holds, as *look* counted them or, told what changed, as the index does."""
        if look.counted:
            return look.files
        return int(self.conn.execute("SELECT count(*) FROM search_files").fetchone()[0])

    def _unsettled(self, logs: bool) -> list[tuple[str, str]]:
        """The folders (with their roles) whose record is not settled: looked at whatever the source says."""
        conn = self.conn
        found: dict[str, str] = {}
        for racy in (_UNSETTLED_DIR, _UNSETTLED_LOGS) if logs else (_UNSETTLED_DIR,):
            found.update(conn.execute(f"SELECT path, role FROM search_dirs WHERE {racy}").fetchall())
        return sorted(found.items(), reverse=True)

    def _gone(self, records: _Records, look: _Look) -> list[str]:
        """The folders of the index no longer there, as a look told what changed found them: each the walk found
        gone, or missing from the listing of the folder that held it, with every folder of the index below it."""
        cut = list(look.lost)
        for rel, now in look.dirs.items():
            before = records.get(rel)
            if before is None or before[2] == now[2]:
                continue
            listed = {name for _, _, name in map(_split, now[2].split("\n"))} if now[2] else set()
            cut.extend(f"{rel}/{name}" for _, _, name in map(_split, before[2].split("\n")) if name not in listed)
        gone: set[str] = set()
        for rel in cut:
            rows = self.conn.execute(
                "SELECT path FROM search_dirs WHERE path = ? OR (path > ? AND path < ?)", (rel, f"{rel}/", f"{rel}0")
            )
            gone.update(path for (path,) in rows)
        return sorted(gone - look.dirs.keys() - look.vouched)

    def _settled(self, logs: bool) -> bool:
        """Whether every record the look would take from the index is settled (none was made within
        :data:`RACY_NS` of its look), the catalog's included, and the transcripts are recorded when wanted."""
        conn = self.conn
        for racy in (_UNSETTLED_DIR, _UNSETTLED_LOGS) if logs else (_UNSETTLED_DIR,):
            if conn.execute(f"SELECT 1 FROM search_dirs WHERE {racy} LIMIT 1").fetchone() is not None:
                return False
        catalog = conn.execute("SELECT value FROM search_meta WHERE key = 'catalog'").fetchone()
        return catalog is not None and catalog[0] != _UNSETTLED and (not self.include_logs or self._logs_recorded())

    def _keep_clock_alone(self, generation: int, kept: str | None, clock: str) -> None:
        """The look found nothing to change: keep the clock it holds as of, unless another process wrote in the
        index since this one read *generation* (its rows are as of its own look, not of this clock)."""
        conn = self.conn
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            if self._generation() == generation:
                store_index.keep_clock(conn, "search_meta", kept, clock)

    def _generation(self) -> int:
        """How many updates the index has had (each one adds one)."""
        row = self.conn.execute("SELECT value FROM search_meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row is not None else 0

    def _logs_recorded(self) -> bool:
        return self.conn.execute("SELECT 1 FROM search_meta WHERE key = 'logs'").fetchone() is not None

    def _known_dirs(self) -> dict[str, tuple[str, ...]]:
        rows = self.conn.execute(f"SELECT path, {_RECORD} FROM search_dirs")
        return {row[0]: row[1:] for row in rows}

    def _look(
        self,
        known: dict[str, tuple[str, ...]],
        logs: bool,
        quiet: ChangedSince | None = None,
        progress: Progress | None = None,
        sink: Callable[[list[_Row], dict[str, dict[str, int]]], None] | None = None,
    ) -> _Look:
        """Look at every walked folder (listing only those whose key changed) and the files in them.

        An unchanged folder's files are confirmed together: their metadata, read by one ``stat`` each in C
        (``map``), hashed and compared with the hash recorded; only a folder whose hash differs (or that was
        listed afresh) is looked at file by file, in :meth:`_changes`. With :attr:`jobs` above one (and
        ``fork``), the task folders' subtrees are shared out between worker processes. The rows the workers read
        on a first build go to *sink* as each worker hands them back, else into :attr:`_Look.read`.
        """
        now = time.time_ns()
        base = str(self.root) + os.sep
        out = _Look()
        start = [(layout.rel(layout.tasks_dir(self.root), self.root), layout.TASKS_DIR)]
        if quiet is not None:
            # Told what changed, the look is a few folders, here: those on the way to a change, those below a
            # changed one and those whose record is unsettled. The records of the others are not even read.
            records = _Records(self.conn)
            _walk(base, records, logs, now, [*start, *self._unsettled(logs)], out, quiet=quiet)
            out.gone = self._gone(records, out)
            out.counted = False
            known = records.found()
        elif self.jobs <= 1 or not _can_fork():
            _walk(base, known, logs, now, start, out)
            out.gone = [p for p in known if p not in out.dirs]
        else:
            # The store and its task groups here; each task folder's subtree in a worker. On a first build (the
            # index holds no folder), the worker reads the files of what it walked too: one pass, nothing compared.
            deferred = _walk(base, known, logs, now, start, out, defer_depth=_TASK_DEPTH)
            visited = set(out.dirs)
            root = None if known else self.root
            ranges = _walk_ranges(len(deferred), self.jobs, root is not None)
            walked = _shared_walk(base, known, logs, now, deferred, self.jobs, ranges, root)
            for done, (dirs, dirty, seen, files, metas, read) in enumerate(walked, start=1):
                out.dirs.update(dirs)
                out.dirty.extend(dirty)
                out.metas.update(metas)
                visited.update(seen.split("\n") if seen else ())
                out.files += files
                if read is not None:
                    out.read_dirs.update(dirty)
                    if sink is not None:
                        sink(*read)
                        out.sunk += len(read[0])
                    else:
                        out.read.extend(read[0])
                        out.times.update(read[1])
                    if progress is not None:  # the files of the tasks not walked yet: as many as so far, each
                        count = out.sunk + len(out.read)
                        progress(count, max(count, count * len(ranges) // done))
            out.gone = [p for p in known if p not in visited]
        out.logs = logs
        out.known = frozenset(known)
        return out

    def _changes(self, look: _Look) -> tuple[list[tuple[str, str, str, int]], list[int]]:
        """The files to read (path, kind, key, mtime) and the ids of the rows to forget."""
        stale: list[tuple[str, str, str, int]] = []
        removed: list[int] = []
        conn = self.conn
        now = time.time_ns()
        base = str(self.root) + os.sep
        for rel in look.gone:
            removed.extend(i for (i,) in conn.execute("SELECT id FROM search_files WHERE dir = ?", (rel,)))
        for rel in look.dirty:
            if rel in look.read_dirs:
                continue  # read by the worker that walked it (a first build)
            stored: dict[str, tuple[int, str]] = {}
            if rel in look.known:  # a folder new to the index has no rows: not asked for (every folder, on a build)
                rows = conn.execute("SELECT id, path, stat FROM search_files WHERE dir = ?", (rel,))
                stored = {path: (ident, key) for ident, path, key in rows}
            files = look.dirs[rel][-1]
            if files is None:
                row = conn.execute("SELECT files FROM search_dirs WHERE path = ?", (rel,)).fetchone()
                files = row[0] if row is not None else ""
                look.dirs[rel] = (*look.dirs[rel][:-1], files)
            worker_look = look.metas.pop(rel, None)  # dropped once compared
            looked, metas = worker_look or (now, _file_metas(base + rel + "/", files, look.logs))
            found, gone, replaced = _file_by_file(rel, files, metas, looked, stored)
            stale.extend(found)
            removed.extend(gone)
            look.replaced += replaced
            # Listed afresh by the walk: hashed from these looks.
            look.dirs[rel] = _rehashed(look.dirs[rel], metas, looked, look.logs)
        return stale, removed

    def _forget(self, ids: list[int]) -> None:
        conn = self.conn
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            conn.execute(
                f"DELETE FROM search_body WHERE rowid IN (SELECT id FROM search_sections WHERE file IN ({marks}))",
                chunk,
            )
            conn.execute(f"DELETE FROM search_sections WHERE file IN ({marks})", chunk)
            conn.execute(f"DELETE FROM search_files WHERE id IN ({marks})", chunk)

    def _found(self, look: _Look, progress: Progress | None) -> _Found:
        """What the store holds that the index does not, as *look* found it: the files to read, read; the rows
        to forget; the recorded times of the tasks touched.

        Task by task (a task's files, then its recorded times); with :attr:`jobs` above one (and ``fork``) and
        at least :data:`SHARED_READ_FROM` files to read, the tasks are shared out between worker processes.
        """
        stale, removed = self._changes(look)
        compared = [rel for rel in look.dirty if rel not in look.read_dirs]
        timed = _timed((*compared, *look.gone)) - look.times.keys()
        units = _units(stale, timed)
        total = len(stale)
        shared = len(stale) >= SHARED_READ_FROM and self.jobs > 1 and _can_fork()
        chunks = (
            _shared_read(self.root, units, timed, self.jobs)
            if shared
            else (_read_units(self.root, units[a:b], timed) for a, b in _read_ranges(units))
        )
        read, times = look.read, look.times  # what the workers read as they walked (a first build)
        look.read, look.times = [], {}
        before = look.sunk + len(read)
        for got, at in chunks:
            read.extend(got)
            times.update(at)
            if progress is not None and total:
                progress(look.sunk + len(read), before + total)
        return _Found(look.sunk + len(read), removed, read, dict(sorted(times.items())))

    def _insert(self, read: list[_Row], times: dict[str, dict[str, int]]) -> None:
        """Add the files *read*, each with its recorded time from *times* (by task folder), in three batches:
        the ids are given here (in the order of *read*, then of each file's sections), so no row waits for the
        one before it."""
        conn = self.conn
        first_file = conn.execute("SELECT coalesce(max(id), 0) FROM search_files").fetchone()[0] + 1
        first_section = conn.execute("SELECT coalesce(max(id), 0) FROM search_sections").fetchone()[0] + 1

        def files() -> Iterator[tuple[Any, ...]]:
            for file_id, row in enumerate(read, start=first_file):
                rel, task = row[0], row[4]
                recorded = times[task].get(rel) if task in times else None
                yield (file_id, *row[:10], recorded)

        def sections() -> Iterator[tuple[int, int, tuple[str, str | None, str]]]:
            section_id = first_section
            for file_id, row in enumerate(read, start=first_file):
                for section in row[10]:
                    yield section_id, file_id, section
                    section_id += 1

        conn.executemany(
            "INSERT INTO search_files(id, path, dir, stat, kind, task, run_type, mtime, capped, error, chars, "
            "recorded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            files(),
        )
        conn.executemany(
            "INSERT INTO search_sections(id, file, kind, label) VALUES (?, ?, ?, ?)",
            ((ident, file_id, kind, label) for ident, file_id, (kind, label, _) in sections()),
        )
        conn.executemany(
            "INSERT INTO search_body(rowid, text) VALUES (?, ?)",
            ((ident, text) for ident, _, (_, _, text) in sections()),
        )

    def _save_times(self, times: dict[str, dict[str, int]], added: set[str]) -> None:
        """The recorded time of each file kept of the tasks in *times* (the files *added* take theirs with them)."""
        for folder, at in times.items():
            self.conn.execute("UPDATE search_files SET recorded = NULL WHERE task = ?", (folder,))
            self.conn.executemany(
                "UPDATE search_files SET recorded = ? WHERE path = ?", [(t, p) for p, t in at.items() if p not in added]
            )

    def _save_dirs(self, look: _Look) -> None:
        conn = self.conn
        conn.executemany("DELETE FROM search_dirs WHERE path = ?", [(p,) for p in look.gone])
        rows = [(p, *look.dirs[p]) for p in look.dirty]
        conn.executemany("INSERT OR REPLACE INTO search_dirs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def _catalog_key(self) -> str:
        try:
            return _key(os.stat(layout.task_catalog_path(self.root)), time.time_ns())
        except OSError:
            return "missing"

    def _catalog_changed(self, key: str) -> bool:
        row = self.conn.execute("SELECT value FROM search_meta WHERE key = 'catalog'").fetchone()
        return row is None or row[0] != key or key == _UNSETTLED

    def _save_tasks(self, key: str) -> None:
        from ..store import Project

        listing = Project(self.root).catalog_listing()
        conn = self.conn
        conn.execute("DELETE FROM search_tasks")
        if isinstance(listing, list):
            tasks_prefix = layout.rel(layout.tasks_dir(self.root), self.root) + "/"
            rows = {
                layout.task_root_rel(e.task_group, e.task_id).removeprefix(tasks_prefix): (e.task_key, e.task_type)
                for e in listing
            }
            conn.executemany("INSERT INTO search_tasks VALUES (?, ?, ?)", [(rel, *v) for rel, v in rows.items()])
        conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('catalog', ?)", (key,))

    # ------------------------------------------------------------- querying

    def search(self, query: Query, *, limit: int = 50, logs: bool | None = None) -> Results:
        """The sections matching *query*, best first (bm25; newest first on ties), at most *limit* of them.

        Transcripts (``kind:log``) are among them when *logs* is true (default: when the index was opened to
        include them) or when the query asks for that kind.
        """
        for attempt in (0, 1):
            try:
                with self._guarded():
                    return self._search(query, limit, self.include_logs if logs is None else logs)
            except _Retry:
                if attempt:
                    raise SearchError(f"{self.path}: the index could not be rebuilt") from None
                self.update()
        raise AssertionError("unreachable")  # pragma: no cover

    def _where(self, query: Query, logs: bool) -> tuple[list[str], list[Any]]:
        where: list[str] = []
        args: list[Any] = []
        match = query.fts()
        if match is not None:
            where.append("search_body MATCH ?")
            args.append(match)
        if query.kinds:
            where.append(f"s.kind IN ({','.join('?' * len(query.kinds))})")
            args.extend(sorted(query.kinds))
        elif not logs:
            where.append("s.kind != 'log'")
        if query.tasks:
            one = "(t.key GLOB ? OR f.task GLOB ? OR substr(f.task, instr(f.task, '/') + 1) GLOB ?)"
            where.append("(" + " OR ".join([one] * len(query.tasks)) + ")")
            for pattern in query.tasks:
                args.extend([pattern] * 3)
        if query.types:
            where.append(f"coalesce(f.run_type, t.type) IN ({','.join('?' * len(query.types))})")
            args.extend(sorted(query.types))
        if query.since_ns is not None:
            where.append("coalesce(f.recorded, f.mtime) >= ?")
            args.append(query.since_ns)
        return where, args

    def _search(self, query: Query, limit: int, logs: bool) -> Results:
        where, args = self._where(query, logs)
        joins = (
            "FROM search_body JOIN search_sections s ON s.id = search_body.rowid JOIN search_files f ON f.id = s.file "
            "LEFT JOIN search_tasks t ON t.rel = f.task"
        )
        cond = " WHERE " + " AND ".join(where) if where else ""
        if query.node is not None:
            snippet = f"snippet(search_body, 0, char(2), char(3), '…', {SNIPPET_TOKENS})"
            order = "ORDER BY rank, f.mtime DESC, f.path, s.id"
            score = "rank"
        else:
            snippet = "substr(search_body.text, 1, 200)"
            order = "ORDER BY f.mtime DESC, f.path, s.id"
            score = "0.0"
        sql = (
            f"SELECT coalesce(t.key, f.task), f.task, coalesce(f.run_type, t.type), s.kind, s.label, f.path, "
            f"{snippet}, f.capped, f.mtime, {score} {joins}{cond} {order} LIMIT ?"
        )
        try:
            rows = self.conn.execute(sql, [*args, limit]).fetchall()
        except sqlite3.OperationalError as exc:
            if _unparsable(exc):
                raise QueryError(f"the index cannot run this query ({exc}): use fewer words or groups") from None
            raise
        hits = [Hit(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), r[8], float(r[9])) for r in rows]
        total = len(hits)
        if total >= limit:
            total = self.conn.execute(f"SELECT count(*) {joins}{cond}", args).fetchone()[0]
        return Results(hits, total)

    def stats(self) -> dict[str, int]:
        """Files, sections and characters indexed, and the index's size on disk (with its WAL) in bytes."""
        conn = self.conn
        files, chars = conn.execute("SELECT count(*), coalesce(sum(chars), 0) FROM search_files").fetchone()
        sections = conn.execute("SELECT count(*) FROM search_sections").fetchone()[0]
        size = 0
        for suffix in ("", "-wal"):
            with suppress(OSError):
                size += os.stat(f"{self.path}{suffix}").st_size
        return {"files": files, "sections": sections, "chars": chars, "bytes": size}


def _can_fork() -> bool:
    import multiprocessing  # here: a search that walks nothing does without it

    return "fork" in multiprocessing.get_all_start_methods()


class _Retry(Exception):
    """The index was rebuilt under a running operation: run it once more."""


def _listing(folder: str, role: str) -> tuple[str, str, str, str, bool]:
    """What the walk uses of *folder*: its sub-folders (``role\tname`` lines), its files (``kind\tname``), the
    names of its files other than transcripts and of its transcripts (newline-separated), and whether one of
    those files is a symlink."""
    subdirs: list[str] = []
    files: list[tuple[str, str]] = []
    linked = False
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if _SURROGATE.search(entry.name):
                    continue  # a name that is not UTF-8 cannot be recorded (nor shown as itself): left out
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    role_of = child_role(role, entry.name, True)
                    if role_of is not None:
                        subdirs.append(f"{role_of}\t{entry.name}")
                elif (kind := file_kind(role, entry.name)) is not None:
                    files.append((entry.name, kind))
                    linked = linked or entry.is_symlink()
    except OSError:
        pass
    files.sort()
    lines = "\n".join(f"{kind}\t{name}" for name, kind in files)
    plain = "\n".join(name for name, kind in files if kind != "log")
    logged = "\n".join(name for name, kind in files if kind == "log")
    return "\n".join(sorted(subdirs)), lines, plain, logged, linked


__all__ = ["INDEX_CHARS", "Hit", "Results", "SearchError", "SearchIndex", "Update", "index_path"]
