"""The incremental check's cache: each task's findings, kept outside the store, reused while its inputs stand still.

A task's record is keyed by:

* the *tree key*: every entry of the task folder (relative path, type and mode,
  size, mtime, ctime, inode and device; for a symlink also its target text and
  the target's metadata), walked without following symlinks; the record keeps
  the list of entries (its *shape*, shared between tasks of the same layout)
  so that an unchanged task is confirmed by ``lstat`` calls alone;
* the task's catalog entry (the project part hands it to the task's rules);
* every folder listed and file read outside that plain tree (through a
  symlinked folder, or elsewhere in the project), with the same metadata.

The project part of a check (the rules outside task folders: the store's top
level, the catalog, the latest pointer, the invocations, the manager home) is
kept too, as one signed record (:class:`KeptProject`): every folder it listed,
file it read and path it looked at, with the same metadata, its findings, and
the task folders it found with what the checker keeps of their catalog
entries. While every one of those paths holds, a check takes it instead of
running those rules: a warm check of a large store neither lists its task
groups nor parses its catalog.

The records are the check's *part* of the store index's database
(:mod:`okstra_core.store_index`: one SQLite file per project in the cache
folder, ``<cache>/index/<digest of the root>.sqlite``): tables named
``check_...`` with their own version (:data:`PART_FORMAT`); a part of another
version is dropped and made afresh, the facts and the search's part left as
they are. A database that is not ours, or that SQLite finds damaged, is
removed and built afresh with one warning; a cache folder that cannot hold it
means checking afresh, with one warning. The records file an older okstra
kept (``<cache>/check/<digest>.json``) is removed when found.

Each task's record is one row carrying a MAC (HMAC-SHA256) over its content, its task
folder, its shape and the scope it was kept under (format, checker, project root,
manager home, watchman clock), under a key kept apart from the cache: ``$OKSTRA_CACHE_KEY``,
else a key file of mode 0600 in the user's state folder
(:func:`okstra_core.layout.okstra_state_dir`), made on first use. Whoever can
write the cache folder but not read the key cannot forge a record: a row
whose MAC does not check (edited findings, a record moved to another task,
a cache made under another key) is ignored and its task checked afresh, and a
row deleted is a task checked afresh;
:attr:`CheckCache.rejected` counts them for one warning. When no key can be
had, the cache is not used at all (:attr:`CheckCache.unusable` says why).

The whole cache is keyed by the checker itself (package version, the metadata
of its source files and of pydantic's, Python's version) and by the project and
manager-home folders. Findings are stored before ``--select``/``--ignore`` are
applied (the rules run the same whatever the selection), so a different
selection reuses them and filters them afresh.

Where watchman answers (the store index's freshness source, :mod:`okstra_core.watchman`),
the part also keeps the clock watchman gave before the run read anything; the
next run asks what changed under ``.okstra/`` since that clock and reuses a
task with no change at, below or above its folder (nor at its outside reads)
without a look (:meth:`okstra_core.store_index.ChangedSince.quiet`); every
other task is confirmed by ``lstat`` as above. The clock is part of every
record's MAC: a clock moved later, which would hide the changes before it,
fails the integrity check. While watchman vouches for nearly every task, a run
keeps the records under the clock they were kept with and writes only the rows
that changed (:meth:`CheckCache.update`): a task changed since that clock is
named by every later query, so whichever of its records kept under the clock
stands, it is confirmed by a look before it is reused. A run reads the kept
clock alone before anything else (:meth:`CheckCache.kept_clock`) and the records
once the project's own reading is let go, so that the two are never held
together; records another run kept in between are each confirmed by a look.

Anything whose metadata is within :data:`RACY_SECONDS` of the run's start is
not stored: a file changed in the same clock tick as it was read would keep
the same metadata, and its stale findings would be reused ("racy git"). A
run's records replace those of the same project and home in one transaction
(two runs at once: each set is whole, and the last one stands); a missing,
unreadable or corrupt cache, or one that is a symlink, is the same as an empty
one, never an error.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import hmac
import json
import operator
import os
import secrets
import sqlite3
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache as memoised
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .. import layout, reading, times, writes_outside
from ..errors import OkstraError
from .catalog import RULES_BY_ID
from .findings import SEVERITIES, Finding

if TYPE_CHECKING:
    from ..store_index import Look, LookedOnce, StoreIndex

#: Bumped whenever the file's layout changes; other values are ignored.
CACHE_FORMAT: Final = 4

#: The environment variable holding the key that signs the cache (CI: a secret shared by the runs sharing a cache).
KEY_ENV: Final = "OKSTRA_CACHE_KEY"
#: Random bytes of a key made for the user (written as hex).
KEY_BYTES: Final = 32

#: Inputs changed this close to the run's start are not trusted to show a later change in their metadata.
RACY_SECONDS: float = 2.0


def racy_after(started: int) -> int:
    """The time (nanoseconds since the epoch) after which an input of a check started at *started* is too fresh
    to be trusted to show a later change in its metadata (:data:`RACY_SECONDS` before the start)."""
    return started - int(RACY_SECONDS * 1e9)


#: A task's stored record: ``{"key", "deps", "findings", "files"}``.
Record = dict[str, Any]
#: A record as it was loaded and checked (:meth:`KeptRecords.kept_row`): its text, and its shape with that shape's
#: split and digest. A record reused unchanged is saved again from it, never parsed into a :data:`Record` to be held.
KeptRow = tuple[str, tuple[list[str], Any, bytes]]


@memoised
def checker_fingerprint() -> str:
    """What identifies the checker's behaviour: its version, the metadata of its sources and of pydantic's, and
    Python's version.

    Neither pydantic nor the package metadata is read to learn a version (a warm answer through the store index
    needs neither; the metadata's version is made from ``okstra_core.__version__``): an upgrade rewrites the
    files whose metadata is hashed here.
    """
    import importlib.util

    import okstra_core

    package = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    h.update(f"{okstra_core.__version__}\0{sys.version}\0".encode())
    for name in ("pydantic", "pydantic_core"):
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        h.update(f"{name}\0{stat_text(origin)[0] if origin else 'absent'}\0".encode())
    for path in sorted(package.rglob("*.py")):
        try:
            st = path.stat()
        except OSError:
            continue
        h.update(f"{path.relative_to(package).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def _meta(st: os.stat_result) -> str:
    return f"{st.st_mode:o},{st.st_size},{st.st_mtime_ns},{st.st_ctime_ns},{st.st_ino},{st.st_dev}"


def stat_text(path: str) -> tuple[str, int]:
    """*path*'s metadata (following symlinks) as text, and its newest timestamp (0 when it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"!{exc.errno}", 0
    return _meta(st), max(st.st_mtime_ns, st.st_ctime_ns)


def _entry_meta(path: str, kind: str, st: os.stat_result | None = None) -> tuple[Any, ...]:
    """What the tree key holds of one entry: its own metadata and, for a symlink, its target and theirs."""
    if st is None:
        try:
            st = os.lstat(path)
        except OSError as exc:
            return ("!", exc.errno)
    meta: tuple[Any, ...] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    if kind == "l":
        try:
            target = os.readlink(path)
        except OSError as exc:
            target = f"!{exc.errno}"
        meta += (target, stat_text(path)[0])
    return meta


def _kind(mode: int) -> str:
    return "d" if stat.S_ISDIR(mode) else "l" if stat.S_ISLNK(mode) else "f"


def tree_key(folder: str) -> tuple[str, list[str], int, set[str], bool]:
    """Walk *folder*: its tree key, its shape, its newest timestamp, every path the key covers, and whether
    *folder* itself was a folder (not a symlink) when looked at.

    The shape lists the entries walked (kind letter and relative path), so that
    :func:`tree_holds` can recompute the key by ``lstat`` alone: a folder's
    metadata changes whenever a name in it is added, removed or renamed, so
    while every folder's metadata holds, its names do too. Symlinks are not
    followed: a symlink contributes its own metadata, its target text and its
    target's metadata. Covered are the plain folders and files of the tree,
    symlinks to files, and the names absent from a walked folder (their
    appearance changes the folder's metadata); not covered are symlinked
    folders and what is below them.
    """
    shape: list[str] = ["d"]
    first = _entry_meta(folder, "d")
    plains: list[tuple[Any, ...]] = []
    links: list[tuple[Any, ...]] = []
    newest = max(first[2], first[3]) if first[0] != "!" else 0
    covered: set[str] = {folder}
    present: set[str] = set()
    stack = [folder]
    prefix = len(folder) + 1
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                names = sorted(de.name for de in it)
        except OSError:
            continue  # the folder's own metadata (or its absence) is in the key already
        for name in names:
            path = current + os.sep + name
            present.add(path)
            try:
                st = os.lstat(path)
            except OSError:
                continue  # gone since the listing: the folder's metadata has changed too
            kind = _kind(st.st_mode)
            meta = _entry_meta(path, kind, st)
            shape.append(kind + path[prefix:])
            (links if kind == "l" else plains).append(meta)
            newest = max(newest, meta[2], meta[3])
            if kind == "d":
                stack.append(path)
                covered.add(path)
            elif kind == "l":
                followed = meta[7]
                if not followed.startswith("!") and not stat.S_ISDIR(int(followed.split(",", 1)[0], 8)):
                    covered.add(path)  # a file symlink: its target's metadata is in the key
                try:
                    target = os.stat(path)
                    newest = max(newest, target.st_mtime_ns, target.st_ctime_ns)
                except OSError:
                    pass
            else:
                covered.add(path)
    plain = first[0] != "!" and stat.S_ISDIR(first[0])
    return _digest(first, plains, links), shape, newest, _Covered(covered, present), plain


#: An entry's metadata as the tree key holds it, read off an ``lstat`` result.
_PLAIN_META = operator.attrgetter("st_mode", "st_size", "st_mtime_ns", "st_ctime_ns", "st_ino", "st_dev")


def split_shape(shape: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A shape's relative paths without their kind letters: (folders and files, symlinks)."""
    return tuple(item[1:] for item in shape[1:] if item[0] != "l"), tuple(item[1:] for item in shape if item[0] == "l")


def tree_holds(
    folder: str, shape: list[str], key: str, split: tuple[tuple[str, ...], tuple[str, ...]] | None = None
) -> bool:
    """Whether the entries of *shape* under *folder* still give *key* (``lstat`` only, no listing).

    *split* is :func:`split_shape` of *shape*, computed once for every task sharing it.
    """
    plain_rels, link_rels = split if split is not None else split_shape(shape)
    base = folder + os.sep
    try:
        # Once per file of the store: the loop runs in C (map), not in Python bytecode.
        plains = list(map(_PLAIN_META, map(os.lstat, map(base.__add__, plain_rels))))
    except OSError:
        return False  # an entry of the shape is gone: the folder holding it has changed too
    links = [_entry_meta(base + rel, "l") for rel in link_rels]
    return _digest(_entry_meta(folder, "d"), plains, links) == key


def _digest(first: tuple[Any, ...], plains: list[tuple[Any, ...]], links: list[tuple[Any, ...]]) -> str:
    """The key of a tree's metadata: its folder's, its plain entries' and its symlinks', each in shape order."""
    if len(first) == 6 and not links:
        # Numbers only: Python's tuple hash of ints is the same in every process of one Python build (the
        # cache is keyed by the build), and much cheaper than rendering them.
        return f"h{hash((first, tuple(plains))):x}"
    return hashlib.sha256(repr((first, plains, links)).encode(errors="surrogateescape")).hexdigest()


class _Covered(set[str]):
    """The paths a tree key covers: those walked, and those absent from a walked folder."""

    def __init__(self, walked: set[str], present: set[str]) -> None:
        super().__init__(walked)
        self.present = present

    def __contains__(self, path: object) -> bool:
        if set.__contains__(self, path):
            return True
        if not isinstance(path, str):
            return False
        return set.__contains__(self, os.path.dirname(path)) and path not in self.present


def deps_of(
    paths: Iterable[str], covered: set[str], looked: LookedOnce[tuple[str, int]] | None = None
) -> tuple[list[list[str]], int]:
    """Metadata of the paths a task's rules touched outside its plain tree, and their newest timestamp.

    *looked* (of :func:`stat_text`) keeps what was looked at for the tasks checked before in the same run: a path
    many tasks touch (the store's own folders) is looked at once. An earlier look can only make a record older
    than the files, which the next run finds changed and checks again, never one that vouches for what it did not
    see.
    """
    deps: list[list[str]] = []
    newest = 0
    look = stat_text if looked is None else looked
    for path in sorted(p for p in set(paths) if p not in covered):
        text, when = look(path)
        newest = max(newest, when)
        deps.append([path, text])
    return deps, newest


def deps_hold(deps: list[list[str]]) -> bool:
    """Whether every recorded dependency still has the metadata it had."""
    return all(stat_text(path)[0] == text for path, text in deps)


def encode_findings(findings: Iterable[Finding]) -> list[list[Any]]:
    return [[f.rule, f.severity, f.path, f.message, f.line] for f in findings]


def decode_findings(rows: list[list[Any]]) -> list[Finding]:
    return [Finding(rule, severity, path, message, line) for rule, severity, path, message, line in rows]


def _valid_finding(row: Any) -> bool:
    return (
        isinstance(row, list)
        and len(row) == 5
        and row[0] in RULES_BY_ID
        and row[1] in SEVERITIES
        and isinstance(row[2], str)
        and isinstance(row[3], str)
        and (row[4] is None or (isinstance(row[4], int) and not isinstance(row[4], bool)))
    )


def _valid_shape(shape: Any) -> bool:
    return (
        isinstance(shape, list)
        and bool(shape)
        and all(isinstance(item, str) and item[:1] in ("d", "f", "l") for item in shape)
    )


def _valid_part(deps: Any, findings: Any, files: Any) -> bool:
    """Whether these are a kept record's dependencies, findings and file count, as a save writes them."""
    return (
        isinstance(files, int)
        and isinstance(deps, list)
        and all(isinstance(d, list) and len(d) == 2 and all(isinstance(x, str) for x in d) for d in deps)
        and isinstance(findings, list)
        and all(_valid_finding(row) for row in findings)
    )


def _valid_record(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    return (
        isinstance(value.get("key"), str)
        and isinstance(value.get("entry"), str)
        and _valid_part(value.get("deps"), value.get("findings"), value.get("files"))
    )


def _read_json(path: Path) -> Any:
    """The JSON value of the regular file *path*; a symlink, a FIFO or any other file type is an :class:`OSError`."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return json.load(fh)


def cache_key() -> bytes:
    """The key that signs cache records: ``$OKSTRA_CACHE_KEY``, else the user's key file, made on first use.

    Raises :class:`OkstraError` naming the key file and why it cannot serve (another owner, readable by
    others, a symlink, not a key, cannot be made).
    """
    env = os.environ.get(KEY_ENV)
    if env:
        return env.encode("utf-8", "surrogateescape")
    path = layout.okstra_state_dir() / layout.CACHE_KEY_FILE
    key = _read_key(path)
    if key is None:
        try:
            writes_outside.create_private(path, secrets.token_hex(KEY_BYTES).encode("ascii") + b"\n")
        except OkstraError as exc:
            if "concurrently" not in exc.reason and "different content" not in exc.reason:
                raise OkstraError(path, f"cannot make the cache key: {exc.reason}") from exc
        key = _read_key(path)  # ours, or the one a concurrent run made first
        if key is None:
            raise OkstraError(path, "cannot make the cache key: it vanished after it was made")
    return key


def _read_key(path: Path) -> bytes | None:
    """The key held by *path*; None when there is no such file; a refusal when it cannot be trusted."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = "is a symlink" if os.path.islink(path) else f"cannot be read: {exc.strerror or exc}"
        raise OkstraError(path, f"the cache key {why}") from exc
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OkstraError(path, "the cache key is not a regular file")
        if st.st_uid != os.getuid():
            raise OkstraError(path, "the cache key belongs to another user")
        if st.st_mode & 0o077:
            raise OkstraError(path, "the cache key is open to other users (chmod 600 it)")
        text = fh.read(4096).strip()
    if len(text) < KEY_BYTES:
        raise OkstraError(path, "does not hold a cache key (remove it and a new one is made)")
    return text


def _scope(root: str, home: str | None, clock: str | None) -> bytes:
    """What every record of one cache file is bound to besides itself: the format, the checker, the folders,
    and the watchman clock the records hold as of (a clock moved later would hide the changes before it)."""
    return json.dumps([CACHE_FORMAT, checker_fingerprint(), root, home, clock]).encode("ascii") + b"\n"


def _shape_digest(shape: list[str]) -> bytes:
    return hashlib.sha256("\0".join(shape).encode("utf-8", "surrogateescape")).digest()


#: The fields of a task's record as its kept JSON text lists them.
RECORD_FIELDS: Final = ("key", "entry", "files", "deps", "findings")


def record_text(rec: Record) -> str:
    """The JSON text a task's record is kept (and signed) as: its :data:`RECORD_FIELDS` in order."""
    return json.dumps([rec[k] for k in RECORD_FIELDS], separators=(",", ":"))


def record_mac(key: bytes, scope: bytes, task: str, record: str, shape_digest: bytes) -> str:
    """The MAC of one task's record: its task folder (*task*, JSON text), content (*record*, :func:`record_text`)
    and shape, within the *scope* it is kept under. Computed over the texts as kept, so a load checks it before
    parsing anything."""
    body = shape_digest + task.encode("utf-8", "surrogatepass") + b"\0" + record.encode("utf-8", "surrogatepass")
    return hmac.digest(key, scope + body, "sha256").hex()


def project_mac(key: bytes, scope: bytes, head: str, tasks: str) -> str:
    """The MAC of the project part's record (:class:`KeptProject`) within the *scope* it is kept under."""
    body = b"project\0" + head.encode("utf-8", "surrogatepass") + b"\0" + tasks.encode("utf-8", "surrogatepass")
    return hmac.digest(key, scope + body, "sha256").hex()


@dataclass(frozen=True, slots=True)
class KeptProject:
    """The project part of a check (the rules outside task folders), as kept: every path it rests on (folders
    listed, files read, paths looked at) with its metadata, its findings and file count, and the task folders it
    found with what the checker keeps of their catalog entries (a text only the project's rules read and write).

    Reused while every path holds the metadata it had, as a task's outside reads are: a warm check of a large
    store then neither lists its task groups nor parses its catalog."""

    deps: list[list[str]]
    findings: list[list[Any]]
    files: int
    tasks: str

    def head(self) -> str:
        """The JSON text of everything but the tasks, as it is kept and signed."""
        return json.dumps([self.deps, self.findings, self.files], separators=(",", ":"))

    @classmethod
    def parsed(cls, head: str, tasks: str) -> KeptProject | None:
        """The record kept as *head* and *tasks*; None when they are not what :meth:`head` writes."""
        try:
            value = json.loads(head)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, list) or len(value) != 3:
            return None
        deps, findings, files = value
        if not _valid_part(deps, findings, files):
            return None
        return cls(deps, findings, files, tasks)


def _mac_holds(stored: Any, expected: str) -> bool:
    # compare_digest takes ASCII text only: anything else in the file is simply a mismatch.
    return isinstance(stored, str) and stored.isascii() and hmac.compare_digest(stored, expected)


#: The check's part of the store index's database (:func:`okstra_core.store_index.part_made`): its name, which
#: every one of its tables starts with, and its version, bumped whenever its tables or what they hold change.
PART: Final = "check"
PART_FORMAT: Final = 2

#: ``check_runs``: per project root and manager home (*scope*, JSON), the checker that kept the records and the
#: watchman clock they hold as of; ``check_shapes``: each task shape (JSON) by its digest; ``check_tasks``: one
#: signed record per task (*task*: its folder as JSON; *record*: key, catalog entry, files, dependencies and
#: findings as JSON; *mac*: :func:`record_mac`); ``check_project``: the project part's signed record
#: (:class:`KeptProject`: *head*, its dependencies, findings and files as JSON; *tasks*, the task folders and what
#: the checker keeps of their catalog entries, as :func:`~okstra_core.check.rules.project_rules.kept_tasks_text`
#: writes them; *mac*: :func:`project_mac`).
_SCHEMA: Final = (
    "CREATE TABLE check_runs(scope TEXT PRIMARY KEY, checker TEXT NOT NULL, clock TEXT)",
    "CREATE TABLE check_shapes(digest TEXT PRIMARY KEY, shape TEXT NOT NULL)",
    "CREATE TABLE check_tasks(scope TEXT NOT NULL, task TEXT NOT NULL, shape TEXT NOT NULL, "
    "record TEXT NOT NULL, mac TEXT NOT NULL, PRIMARY KEY(scope, task))",
    "CREATE TABLE check_project(scope TEXT PRIMARY KEY, checker TEXT NOT NULL, head TEXT NOT NULL, "
    "tasks TEXT NOT NULL, mac TEXT NOT NULL)",
)

#: The suffix of the records file an okstra that kept the check's records in a file of their own left beside the
#: verdict: removed when found.
_OLD_SUFFIX: Final = ".json"


class CheckCache:
    """The check's records in the store index's database of each project in one cache folder; :func:`run_check`
    reads them with :meth:`load` and writes them with :meth:`save`.

    After a run, :attr:`hits` and :attr:`misses` count the tasks whose findings
    were reused and those checked afresh; :attr:`rejected` the records ignored
    because their MAC did not check; :attr:`unusable` says why no key could be
    had, or the database could not be used (the cache was then neither read nor written).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(os.path.abspath(directory))
        self.hits = 0
        self.misses = 0
        self.rejected = 0
        #: Why the last :meth:`save` wrote nothing (one line naming the file), or None.
        self.unsaved: str | None = None
        #: Why the cache could not be used at all (one line naming the key file or the folder), or None.
        self.unusable: str | None = None
        #: One line per database found unusable and rebuilt.
        self.notices: list[str] = []
        #: The watchman clock the records :meth:`load` gave hold as of (None: none was kept with them).
        self.clock: str | None = None
        #: The watchman clock to keep with the records of this run (None: watchman was not asked, or could not be).
        self.watchman_token: str | None = None
        #: Why watchman could not be asked (None: it was, or it was not asked for).
        self.watchman_problem: str | None = None
        #: Whether the last run reused the project part's record (:class:`KeptProject`) instead of its rules.
        self.project_reused = False
        self._key: bytes | None = None

    def key(self) -> bytes | None:
        """The signing key (read or made once per cache object); None, with :attr:`unusable` set, when there is none."""
        if self._key is None and self.unusable is None:
            try:
                self._key = cache_key()
            except OkstraError as exc:
                self.unusable = str(exc)
            except OSError as exc:
                self.unusable = f"{exc.filename or KEY_ENV}: {exc.strerror or exc}"
        return self._key

    def problems(self) -> list[str]:
        """What went wrong with the cache in this run, one line each (never one per task); [] when nothing did.

        The report is the same either way: these only say why the run was slower than a cached one.
        """
        out = list(self.notices)
        if self.unusable:
            out.append(f"cache not used: {self.unusable}")
        if self.rejected:
            n = self.rejected
            entries, were = ("entry", "was") if n == 1 else ("entries", "were")
            out.append(
                f"{n} cache {entries} failed the integrity check (changed, or made under another {KEY_ENV}) "
                f"and {were} checked afresh"
            )
        if self.unsaved:
            out.append(f"cache not saved: {self.unsaved}")
        return out

    def stem_for(self, root: str, home: str | None) -> Path:
        """The folder and name stem of the files kept of one project root and manager home (the verdict's)."""
        ident = hashlib.sha256(f"{root}\0{home or ''}".encode(errors="surrogateescape")).hexdigest()[:32]
        return self.directory / layout.CHECK_CACHE_DIR / ident

    def database(self, root: str) -> Path:
        """The database holding the check's records of the project *root*: its store index's."""
        from .. import store_index

        return store_index.index_path(self.directory, Path(root))

    def _open(self, root: str, home: str | None) -> sqlite3.Connection | None:
        """The store index's database of *root* with the check's part made in it; None (with :attr:`unusable`
        set) when the cache folder cannot hold it. The records file an older okstra kept is removed."""
        from .. import store_index

        path = self.database(root)
        with contextlib.suppress(OSError):
            os.unlink(str(self.stem_for(root, home)) + _OLD_SUFFIX)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if path.is_symlink() or (path.exists() and not path.is_file()):
                self._rebuilt(path, "is not a regular file")
            for attempt in (0, 1):
                try:
                    return _adopted(path, Path(root), self.notices)
                except sqlite3.DatabaseError as exc:
                    if attempt or not store_index.damaged(exc):
                        raise
                    self._rebuilt(path, f"is damaged ({exc})")
        except (OSError, sqlite3.Error) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.unusable = f"{path.parent}: cannot keep the store index there: {reason}"
        return None

    def _unreadable(self, root: str, exc: sqlite3.Error) -> None:
        """A database found damaged while its records were read is removed (the save makes it afresh); one that
        cannot be read for another reason is left for this run."""
        from .. import store_index

        path = self.database(root)
        if isinstance(exc, sqlite3.DatabaseError) and store_index.damaged(exc):
            with contextlib.suppress(OSError):
                self._rebuilt(path, f"is damaged ({exc})")
            return
        self.unusable = f"{path}: cannot read the check's records: {exc}"

    def _rebuilt(self, path: Path, reason: str) -> None:
        from .. import store_index

        self.notices.append(f"store index {path} {reason}: rebuilt")
        store_index.discard(path)

    def load(self, root: str, home: str | None) -> KeptRecords:
        """The task records stored for *root* and *home* by this same checker under this key; none when none are.

        A record whose MAC does not check is left out and counted in :attr:`rejected`.
        """
        key = self.key()
        conn = None if key is None else self._open(root, home)
        if key is None or conn is None:
            return KeptRecords({})
        try:
            found = _read_records(conn, root, home)
            if found is None:
                return KeptRecords({})
            clock, parts, shapes = found
            out, rejected = _verified(key, _scope(root, home, clock), parts, shapes)
        except sqlite3.Error as exc:
            conn.close()
            self._unreadable(root, exc)
            return KeptRecords({})
        finally:
            conn.close()
        self.rejected += rejected
        self.clock = clock if out else None
        return out

    def kept_clock(self, root: str, home: str | None) -> str | None:
        """The watchman clock the records of *root* and *home* are kept as of, read without them; None when none
        is (or the records cannot be read: :meth:`load` then says why). :meth:`load` sets :attr:`clock` to that
        of the records it gives."""
        run = self._run_kept(root, home)
        return run[1] if run is not None else None

    def kept(self, root: str, home: str | None) -> bool:
        """Whether this checker's records of *root* and *home* are kept (a check now reuses those whose task did
        not change), read without them."""
        return self._run_kept(root, home) is not None

    def _run_kept(self, root: str, home: str | None) -> tuple[str, str | None] | None:
        conn = None if self.key() is None else self._open(root, home)
        if conn is None:
            return None
        try:
            return _kept_run(conn, _scope_name(root, home))
        except sqlite3.Error:
            return None
        finally:
            conn.close()

    def load_project(self, root: str, home: str | None) -> KeptProject | None:
        """The project part's record kept for *root* and *home* by this same checker under this key; None when
        none is (one whose MAC does not check is counted in :attr:`rejected`)."""
        key = self.key()
        conn = None if key is None or self.unusable else self._open(root, home)
        if key is None or conn is None:
            return None
        name = _scope_name(root, home)
        try:
            row = conn.execute(
                "SELECT checker, head, tasks, mac FROM check_project WHERE scope = ?", (name,)
            ).fetchone()
        except sqlite3.Error as exc:
            self._unreadable(root, exc)
            return None
        finally:
            conn.close()
        if row is None or row[0] != checker_fingerprint():
            return None
        _, head, tasks, mac = row
        if not isinstance(head, str) or not isinstance(tasks, str):
            self.rejected += 1
            return None
        if not _mac_holds(mac, project_mac(key, _scope(root, home, None), head, tasks)):
            self.rejected += 1
            return None
        return KeptProject.parsed(head, tasks)

    def save_project(self, root: str, home: str | None, record: KeptProject | None) -> None:
        """Keep the project part's *record* for *root* and *home* (None: remove the one kept, which no longer
        holds); failures are said once, never raised."""
        key = self.key()
        conn = None if key is None or self.unusable else self._open(root, home)
        if key is None or conn is None:
            return
        name = _scope_name(root, home)
        try:
            with conn:
                if record is None:
                    conn.execute("DELETE FROM check_project WHERE scope = ?", (name,))
                else:
                    head = record.head()
                    mac = project_mac(key, _scope(root, home, None), head, record.tasks)
                    conn.execute(
                        "INSERT OR REPLACE INTO check_project VALUES (?, ?, ?, ?, ?)",
                        (name, checker_fingerprint(), head, record.tasks, mac),
                    )
        except sqlite3.Error as exc:
            self.unsaved = f"{self.database(root)}: {exc}"
        finally:
            conn.close()

    def save(
        self, root: str, home: str | None, records: Mapping[str, Record | KeptRow], clock: str | None = None
    ) -> None:
        """Replace the stored records of *root* and *home* (one transaction); failures are said once, never raised.

        *clock* is the watchman clock every record holds as of (taken before any of them was confirmed or read).
        A :data:`KeptRow` is a record reused as it was loaded.
        """
        key = self.key()
        conn = None if key is None or self.unusable else self._open(root, home)
        if key is None or conn is None:
            return
        scope = _scope(root, home, clock)
        shapes: dict[str, str] = {}
        digests: dict[int, bytes] = {}  # by shape object: records loaded together share theirs
        rows = []
        for rel, rec in records.items():
            if isinstance(rec, tuple):
                record, (shape, _, digest) = rec
            else:
                shape, record = rec["shape"], record_text(rec)
                digest = digests.get(id(shape)) or _shape_digest(shape)
            if id(shape) not in digests:
                digests[id(shape)] = digest
                shapes.setdefault(digest.hex(), json.dumps(shape, separators=(",", ":")))
            task = json.dumps(rel)
            rows.append((task, digest.hex(), record, record_mac(key, scope, task, record, digest)))
        try:
            _write_records(conn, _scope_name(root, home), clock, rows, shapes)
        except sqlite3.Error as exc:
            self.unsaved = f"{self.database(root)}: {exc}"
        finally:
            conn.close()

    def update(
        self, root: str, home: str | None, records: Mapping[str, Record | KeptRow], previous: KeptRecords
    ) -> bool:
        """Keep this run's records under the watchman clock those :meth:`load` gave hold as of (:attr:`clock`),
        writing only the rows that differ from *previous* (one transaction); False, with nothing written, when
        the kept records are no longer those (another run replaced them since): then :meth:`save` them all.

        Sound because every task that changed since that clock is named by the next since-query, so its record
        is confirmed by ``lstat`` before it is reused, whichever of its versions kept under the clock it is;
        and a task that did not change has one record only.
        """
        key = self.key()
        clock = self.clock
        if key is None or clock is None or self.unusable:
            return False
        conn = self._open(root, home)
        if conn is None:
            return True  # the cache cannot be used: nothing to save either way
        scope = _scope(root, home, clock)
        shapes: dict[str, str] = {}
        rows = []
        for rel, rec in records.items():
            if isinstance(rec, tuple):
                continue  # reused as kept
            digest = _shape_digest(rec["shape"])
            shapes.setdefault(digest.hex(), json.dumps(rec["shape"], separators=(",", ":")))
            task, record = json.dumps(rel), record_text(rec)
            rows.append((task, digest.hex(), record, record_mac(key, scope, task, record, digest)))
        gone = [json.dumps(rel) for rel in previous.keys() - records.keys()]
        try:
            return _update_records(conn, _scope_name(root, home), clock, rows, shapes, gone)
        except sqlite3.Error as exc:
            self.unsaved = f"{self.database(root)}: {exc}"
            return True
        finally:
            conn.close()


def _adopted(path: Path, root: Path, notices: list[str]) -> sqlite3.Connection:
    """A connection to the store index's database at *path*, ours (a foreign one is rebuilt, with a line in
    *notices*), with the check's part of this version made in it."""
    from .. import store_index

    conn = store_index.connect(path, store_index.BUSY_SECONDS)
    try:
        problem = store_index.adopt(conn, root)
        if problem is not None:
            conn.close()
            notices.append(f"store index {path} {problem}: rebuilt")
            store_index.discard(path)
            conn = store_index.connect(path, store_index.BUSY_SECONDS)
            store_index.create(conn, root)
        store_index.part_made(conn, PART, PART_FORMAT, _SCHEMA)
    except BaseException:
        conn.close()
        raise
    return conn


def _scope_name(root: str, home: str | None) -> str:
    """The ``scope`` column of one project root and manager home's records."""
    return json.dumps([root, home])


def _read_records(
    conn: sqlite3.Connection, root: str, home: str | None
) -> tuple[str | None, Iterator[list[tuple[Any, ...]]], dict[str, Any]] | None:
    """The clock, the task rows (task, shape, record, mac) :data:`PARSED_AT_ONCE` at a time as they are read
    from *conn* (never all at once: the rows of 100,000 tasks are about 50 megabytes, which would stay with the
    process beside the records kept from them), and the shapes they name, of *root* and *home*, as kept by this
    checker; None when none are."""
    name = _scope_name(root, home)
    run = _kept_run(conn, name)
    if run is None:
        return None
    shapes = conn.execute(
        "SELECT digest, shape FROM check_shapes WHERE digest IN (SELECT shape FROM check_tasks WHERE scope = ?)",
        (name,),
    ).fetchall()
    rows = conn.execute("SELECT task, shape, record, mac FROM check_tasks WHERE scope = ?", (name,))
    return run[1], iter(partial(rows.fetchmany, PARSED_AT_ONCE), []), dict(shapes)


def _kept_run(conn: sqlite3.Connection, name: str) -> tuple[str, str | None] | None:
    """The checker and clock of the records of the scope *name*, when this checker kept them; None otherwise."""
    run = conn.execute("SELECT checker, clock FROM check_runs WHERE scope = ?", (name,)).fetchone()
    if run is None or run[0] != checker_fingerprint() or not isinstance(run[1], str | None):
        return None
    return run[0], run[1]


def _write_records(
    conn: sqlite3.Connection,
    name: str,
    clock: str | None,
    rows: list[tuple[str, str, str, str]],
    shapes: dict[str, str],
) -> None:
    """Replace the records of the scope *name* by *rows*, in one transaction (a process writing at the same
    moment waits; the last one's records stand, each whole and signed as of its own clock)."""
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT OR REPLACE INTO check_runs VALUES (?, ?, ?)", (name, checker_fingerprint(), clock))
        conn.execute("DELETE FROM check_tasks WHERE scope = ?", (name,))
        conn.executemany("INSERT OR REPLACE INTO check_shapes VALUES (?, ?)", shapes.items())
        conn.executemany("INSERT INTO check_tasks VALUES (?, ?, ?, ?, ?)", [(name, *row) for row in rows])
        conn.execute("DELETE FROM check_shapes WHERE digest NOT IN (SELECT shape FROM check_tasks)")


def _update_records(
    conn: sqlite3.Connection,
    name: str,
    clock: str,
    rows: list[tuple[str, str, str, str]],
    shapes: dict[str, str],
    gone: list[str],
) -> bool:
    """Replace the rows of the tasks in *rows* and remove those of the tasks in *gone*, in the records of the
    scope *name* still kept by this checker as of *clock*; False, with nothing written, when they are not."""
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        run = conn.execute("SELECT checker, clock FROM check_runs WHERE scope = ?", (name,)).fetchone()
        if run is None or run[0] != checker_fingerprint() or run[1] != clock:
            return False
        if not rows and not gone:
            return True
        conn.executemany("INSERT OR REPLACE INTO check_shapes VALUES (?, ?)", shapes.items())
        conn.executemany("INSERT OR REPLACE INTO check_tasks VALUES (?, ?, ?, ?, ?)", [(name, *row) for row in rows])
        conn.executemany("DELETE FROM check_tasks WHERE scope = ? AND task = ?", [(name, task) for task in gone])
        conn.execute("DELETE FROM check_shapes WHERE digest NOT IN (SELECT shape FROM check_tasks)")
    return True


def _parsed_shape(text: Any) -> tuple[list[str], tuple[tuple[str, ...], tuple[str, ...]], bytes] | None:
    """A kept shape, its split and its digest (computed from what is kept, never taken from the row)."""
    if not isinstance(text, str):
        return None
    try:
        shape: Any = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not _valid_shape(shape):
        return None
    return shape, split_shape(shape), _shape_digest(shape)


def _parsed_row(task: str, text: str) -> tuple[str, Record] | None:
    """A task row's folder and record (without its shape); None when it is not of the form :meth:`save` writes."""
    try:
        rel = json.loads(task)
        body = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return _row_of(rel, body)


#: Kept records read and checked at once when they are loaded (parsed in one call): those kept are held as their
#: texts.
PARSED_AT_ONCE: Final = 4096


class KeptRecords(Mapping[str, Record]):
    """The records loaded, by task folder, held as the texts they were kept and signed as: a record is parsed each
    time it is asked for (a parsed record is about ten times its text, and a check asks for each one or three
    times; held parsed, the records of 100,000 tasks were the largest part of a warm check's peak)."""

    def __init__(self, rows: dict[str, tuple[str, tuple[list[str], Any, bytes]]]) -> None:
        self._rows = rows

    def __getitem__(self, rel: str) -> Record:
        text, shape = self._rows[rel]
        try:
            found = _row_of(rel, json.loads(text))
        except (ValueError, RecursionError):
            found = None
        if found is None:
            # Checked when loaded, in one parse with its neighbours: a text that is a record only joined to
            # another's is no record of its own, and its task is checked afresh.
            raise KeyError(rel)
        rec = found[1]
        rec["shape"], rec["split"] = shape[0], shape[1]  # shared by every task of the same shape
        return rec

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def kept_row(self, rel: str) -> KeptRow:
        """*rel*'s record as it was loaded and checked: saved again from it when it is reused unchanged."""
        return self._rows[rel]


def _verified(
    key: bytes, scope: bytes, parts: Iterable[list[tuple[Any, ...]]], shapes: dict[str, Any]
) -> tuple[KeptRecords, int]:
    """The records of the rows of *parts* whose MAC holds (checked before anything of a row is parsed) and that
    parse as records, and how many did not; each part is let go once checked."""
    parsed = {digest: _parsed_shape(text) for digest, text in shapes.items()}
    rejected = 0
    out: dict[str, tuple[str, tuple[list[str], Any, bytes]]] = {}
    for rows in parts:
        held: list[tuple[str, str, Any]] = []
        for task, shape_key, text, mac in rows:
            shape = parsed.get(shape_key)
            if (
                shape is None
                or not isinstance(task, str)
                or not isinstance(text, str)
                or not _mac_holds(mac, record_mac(key, scope, task, text, shape[2]))
            ):
                rejected += 1
                continue
            held.append((task, text, shape))
        for (_, text, shape), found in zip(held, _parsed_rows(held), strict=True):
            if found is None:
                rejected += 1
                continue
            out[found[0]] = (text, shape)
    return KeptRecords(out), rejected


def _parsed_rows(rows: list[tuple[str, str, Any]]) -> list[tuple[str, Record] | None]:
    """Each row's folder and record, as :func:`_parsed_row` gives them: every row's texts in one parse where
    they all are one JSON value each (the usual case: one call into the parser, not two per task)."""
    try:
        folders = json.loads("[" + ",".join(task for task, _, _ in rows) + "]")
        bodies = json.loads("[" + ",".join(text for _, text, _ in rows) + "]")
    except (ValueError, RecursionError):
        folders = bodies = None
    if not isinstance(folders, list) or not isinstance(bodies, list) or not len(folders) == len(bodies) == len(rows):
        return [_parsed_row(task, text) for task, text, _ in rows]
    return list(map(_row_of, folders, bodies))


def _row_of(rel: Any, body: Any) -> tuple[str, Record] | None:
    if not isinstance(rel, str) or not isinstance(body, list) or len(body) != len(RECORD_FIELDS):
        return None
    rec = dict(zip(RECORD_FIELDS, body, strict=True))
    return (rel, rec) if _valid_record(rec) else None


#: A verdict file larger than this is no verdict this code wrote (one is about 300 bytes): not read.
VERDICT_MAX_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the last full check of a project said: when it ran, its counts (after the project's settings) and
    whether warnings failed it (``--strict``)."""

    at: dt.datetime
    errors: int
    warnings: int
    infos: int
    files: int
    strict: bool

    @property
    def failed(self) -> bool:
        return bool(self.errors or (self.strict and self.warnings))

    def to_json(self) -> dict[str, Any]:
        return {
            "at": times.iso_micro(self.at),
            "errors": self.errors,
            "warnings": self.warnings,
            "infos": self.infos,
            "files": self.files,
            "strict": self.strict,
        }

    @classmethod
    def from_json(cls, value: Any) -> Verdict | None:
        """The verdict *value* holds, or None when it holds none (any other shape)."""
        if not isinstance(value, dict) or not isinstance(value.get("at"), str):
            return None
        counts = [value.get(k) for k in ("errors", "warnings", "infos", "files")]
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
            return None
        at, strict = times.parse_time(value["at"]), value.get("strict")
        if at is None or not isinstance(strict, bool):
            return None
        errors, warnings, infos, files = (int(n) for n in counts if isinstance(n, int))
        return cls(at, errors, warnings, infos, files, strict)


def _verdict_mac(key: bytes, root: str, home: str | None, body: dict[str, Any]) -> str:
    text = json.dumps([CACHE_FORMAT, root, home, body], sort_keys=True)
    return hmac.digest(key, text.encode("utf-8", "surrogateescape"), "sha256").hex()


def verdict_file(check_cache: CheckCache, root: str, home: str | None) -> Path:
    """The file of the last verdict of *root* and *home*, in the check's folder of the cache folder."""
    return Path(str(check_cache.stem_for(root, home)) + layout.CHECK_VERDICT_SUFFIX)


def checked_home(home: Path | None) -> str | None:
    """The manager home a check of *home* (default: the user's) is keyed by: None when it is no folder."""
    path = Path(os.path.abspath(home if home is not None else layout.okstra_home()))
    return str(path) if path.is_dir() else None


def save_verdict(check_cache: CheckCache, root: str, home: Path | None, verdict: Verdict) -> None:
    """Keep *verdict* as the last of *root*'s full checks (signed like the cache; failures are ignored: it only
    lets Home say it without checking)."""
    key = check_cache.key()
    if key is None:
        return
    home_text = checked_home(home)
    body = verdict.to_json()
    data = {"format": CACHE_FORMAT, "root": root, "home": home_text, "verdict": body}
    data["mac"] = _verdict_mac(key, root, home_text, body)
    with contextlib.suppress(OkstraError, OSError):
        writes_outside.replace_file(verdict_file(check_cache, root, home_text), json.dumps(data).encode("utf-8"))


def load_verdict(check_cache: CheckCache, root: str, home: Path | None) -> Verdict | None:
    """The verdict of *root*'s last full check, as :func:`save_verdict` kept it; None when none is kept, or it
    fails its signature (edited, another key), or cannot be read. Never runs a check."""
    key = check_cache.key()
    if key is None:
        return None
    home_text = checked_home(home)
    path = verdict_file(check_cache, root, home_text)
    reading.note_status(path)  # a view that shows it reads it again when a check keeps a new one
    try:
        if os.lstat(path).st_size > VERDICT_MAX_BYTES:
            return None
        data = _read_json(path)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT or data.get("root") != root:
        return None
    body = data.get("verdict")
    if data.get("home") != home_text or not isinstance(body, dict):
        return None
    if not _mac_holds(data.get("mac"), _verdict_mac(key, root, home_text, body)):
        return None
    return Verdict.from_json(body)


def last_verdict(root: Path) -> Verdict | None:
    """The verdict `okstra check` (or the Checks view) kept for *root* in its cache folder: read, never checked."""
    return load_verdict(_project_cache(root), str(root), None)


def check_kept(root: Path) -> bool:
    """Whether `okstra check` of *root* would find this checker's records kept in its cache folder (so it checks
    again only the tasks that changed since)."""
    return _project_cache(root).kept(str(root), checked_home(None))


def _project_cache(root: Path) -> CheckCache:
    """The check cache `okstra check` of *root* uses: the project's settings may name its folder."""
    from .settings import SettingsError, resolve

    try:
        cache_dir = resolve(root).cache_dir
    except (SettingsError, OSError):
        cache_dir = None
    return CheckCache(layout.okstra_cache_dir(cache_dir))


def open_store_index(
    root: Path,
    cache_dir: Path | None = None,
    *,
    look: Look | None = None,
    reindex: bool = False,
    watchman: bool = False,
) -> StoreIndex | str:
    """The store index of the project at *root*, signed with :func:`cache_key` and scoped to this version of
    okstra (:func:`checker_fingerprint`), in *cache_dir* (default: the user's cache folder); or why no index can
    be had (one line naming the key file). With *watchman*, it asks watchman what changed since it was last
    brought up to date (see :class:`~okstra_core.store_index.StoreIndex`)."""
    from ..store_index import StoreIndex

    try:
        key = cache_key()
    except OkstraError as exc:
        return str(exc)
    except OSError as exc:
        return f"{exc.filename or KEY_ENV}: {exc.strerror or exc}"
    return StoreIndex(
        root,
        layout.okstra_cache_dir(cache_dir),
        key=key,
        scope=checker_fingerprint(),
        look=look,
        reindex=reindex,
        watchman=watchman,
    )
