"""Safe reads: every loader returns a value or a :class:`LoadError`, never raises, never writes.

A missing, unreadable, oversized, binary, non-UTF-8, non-regular (FIFO,
device), dangling or looping symlink, or root-escaping file becomes a
``LoadError`` naming the file and the reason.
"""

from __future__ import annotations

import errno
import json
import json.decoder
import json.scanner
import os
import re
import stat
import time
from collections.abc import Callable, Generator, Iterator
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from . import layout, watch
from .errors import LoadError as LoadError

if TYPE_CHECKING:
    # pydantic and the models are imported on first validation, not with this module: the raw
    # readers (and the catalog listing in ``store``) stay cheap to import for a fast first look.
    from pydantic import BaseModel, ValidationError

    from .models.report import FinalReportV2, FinalReportV3

M = TypeVar("M", bound="BaseModel")

#: Largest file a loader reads; bigger ones are refused with a clear reason.
MAX_BYTES = 16 * 1024 * 1024

#: The same for ``discovery/task-catalog.json``, the one document that grows with the number of tasks (about
#: 320 bytes an entry: 16 MiB would stop a store near 50,000 tasks; this keeps room for about 400,000).
CATALOG_MAX_BYTES = 128 * 1024 * 1024


def limit_for(path: Path | str) -> int:
    """The size limit of the file at *path*: :data:`CATALOG_MAX_BYTES` for a task catalog, else
    :data:`MAX_BYTES`. The one owner of which limit applies, for the loaders, the writers and the checker."""
    name = os.path.basename(path)
    if name == layout.TASK_CATALOG_FILE and os.path.basename(os.path.dirname(path)) == layout.DISCOVERY_DIR:
        return CATALOG_MAX_BYTES
    return MAX_BYTES


def within_limit(path: str, size: int) -> bool:
    """Whether *size* bytes are within the limit of the file at *path* (:func:`limit_for`).

    No limit is below :data:`MAX_BYTES`, so a file within it is within its own without its name being looked at
    (the checker asks this of every file it reads).
    """
    return size <= MAX_BYTES or size <= limit_for(path)


#: Characters of one file a reader shows or indexes (the workbench's preview, the search index); the rest is
#: not read.
PREVIEW_CHARS = 200_000


class Source(Protocol):
    """Answers a reader already holds for this tree (a checker that read every file once).

    Each method returns None when it does not know, and the loaders then read
    the disk as usual; what it does return must be what that read would give.
    """

    def known_bytes(self, path: str) -> bytes | None:
        """The bytes :func:`read_bytes` would return for *path*, if already read."""

    def known_model(self, path: str, model: type[BaseModel]) -> BaseModel | None:
        """*path*'s document already validated as *model* from those same bytes."""

    def known_names(self, folder: str) -> list[str] | None:
        """Every name in *folder*, sorted, as ``sorted(os.listdir(folder))`` gives them, if already listed."""

    def known_is_dir(self, path: str) -> bool | None:
        """What ``os.path.isdir(path)`` gives, if its folder's listing already told."""

    def known_lexists(self, path: str) -> bool | None:
        """What ``os.path.lexists(path)`` gives, if its folder's listing already told."""


_SOURCE: ContextVar[Source | None] = ContextVar("okstra_reading_source", default=None)


@contextmanager
def use_source(source: Source) -> Iterator[None]:
    """Within the block, loaders take bytes and validated documents from *source* when it has them.

    Owners that read their own inputs (the design-prep resolver, the direction
    chain, the invocation gate) keep their signatures; a caller that has
    already read and validated the files lends them its cache this way.
    """
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def known_model(path: Path, model: type[M]) -> M | None:
    """The active source's validated *model* of *path* (None without a source or when it has none)."""
    source = _SOURCE.get()
    if source is None:
        return None
    found = source.known_model(os.fspath(path), model)
    return found if isinstance(found, model) else None


def known_names(folder: Path) -> list[str] | None:
    """The active source's sorted listing of *folder* (None without a source or when it has none)."""
    source = _SOURCE.get()
    if source is None:
        return None
    names = source.known_names(os.fspath(folder))
    return list(names) if names is not None else None


#: The largest file a :class:`Memo` keeps, and the most it keeps in all (a task's transcripts are read once).
MEMO_FILE_MOST: Final = 1 << 20
MEMO_MOST: Final = 32 << 20


class Memo:
    """What one short computation over a part of the store read, kept for its other readers: each file read
    whole, each folder listed and each document validated is read once in the block (:func:`memo`), whoever
    asks (an index build's text of a task and the recorded times of its files read the same documents).

    What it lends is what the disk gave this block, so a file changed within the block reads as it was the first
    time, as one look at the task would have read it. It keeps only reads kept inside its own root, and lends
    only to reads kept inside that root (or in none): a read kept inside another root reads the disk, and so
    does every read while a recording is active (what it records is what it looked at). The documents it lends
    are the objects it first lent: it is for readers, never around a writer that changes a loaded document.
    """

    __slots__ = ("_prefix", "bytes", "models", "names", "root", "size")

    def __init__(self, root: Path) -> None:
        self.root = os.fspath(root)
        self._prefix = os.path.join(self.root, "")
        self.bytes: dict[str, bytes] = {}
        self.models: dict[tuple[str, type[BaseModel]], BaseModel] = {}
        self.names: dict[str, list[str]] = {}
        #: The bytes kept in all.
        self.size = 0

    def inside(self, path: str) -> bool:
        """Whether *path* lies under the block's root."""
        return path.startswith(self._prefix)


_MEMO: ContextVar[Memo | None] = ContextVar("okstra_reading_memo", default=None)


@contextmanager
def memo(root: Path) -> Iterator[Memo]:
    """Within the block, every file read whole, folder listed and document validated under *root* is kept and
    lent to the block's later readers (:class:`Memo`)."""
    kept = Memo(root)
    token = _MEMO.set(kept)
    try:
        yield kept
    finally:
        _MEMO.reset(token)


def _memo_for(root: Path | None) -> Memo | None:
    """The active :class:`Memo` when it may lend to a read kept inside *root* (None: in no root)."""
    kept = _MEMO.get()
    if kept is None or _RECORDERS.get() or (root is not None and os.fspath(root) != kept.root):
        return None
    return kept


def _keeping(path: Path, root: Path | None) -> tuple[Memo, str] | None:
    """The active :class:`Memo` and *path*'s text when a read of *path* kept inside *root* is for it to keep."""
    kept = _MEMO.get()
    if kept is None or root is None or os.fspath(root) != kept.root:
        return None
    text = os.fspath(path)
    return (kept, text) if kept.inside(text) else None


def _keep(path: Path, root: Path | None, data: bytes) -> None:
    """Keep *data*, read whole from *path* inside *root*, in the active :class:`Memo` (within its bounds)."""
    found = _keeping(path, root)
    if found is not None and len(data) <= MEMO_FILE_MOST and found[0].size + len(data) <= MEMO_MOST:
        kept, text = found
        kept.bytes[text] = data
        kept.size += len(data)


def _keep_names(folder: Path, names: list[str]) -> None:
    kept = _MEMO.get()
    if kept is not None and kept.inside(text := os.fspath(folder)):
        kept.names[text] = names


def _keep_model(path: Path, root: Path | None, doc: BaseModel) -> None:
    found = _keeping(path, root)
    if found is not None:
        kept, text = found
        kept.models[(text, type(doc))] = doc


def _memo_names(folder: Path) -> list[str] | None:
    kept = _memo_for(None)
    names = kept.names.get(os.fspath(folder)) if kept is not None else None
    return list(names) if names is not None else None


def _memo_model(path: Path, root: Path | None, model: type[M]) -> M | None:
    kept = _memo_for(root)
    found = kept.models.get((os.fspath(path), model)) if kept is not None else None
    return found if isinstance(found, model) else None


#: The real path of each project root, resolved once in a :func:`roots_resolved_once` block.
_REAL_ROOTS: ContextVar[dict[str, str] | None] = ContextVar("okstra_reading_real_roots", default=None)


@contextmanager
def roots_resolved_once() -> Iterator[None]:
    """Within the block, the real path of a root that reads are kept inside is resolved once, not at every read.

    For a batch of reads over a store (an index build's worker): every read of the block is kept inside the root
    as it was when first resolved in the block (a root moved meanwhile makes its reads refused, not let through).
    """
    token = _REAL_ROOTS.set({})
    try:
        yield
    finally:
        _REAL_ROOTS.reset(token)


def _real_root(root: Path) -> str:
    known = _REAL_ROOTS.get()
    if known is None:
        return os.path.realpath(root)
    key = os.fspath(root)
    real = known.get(key)
    if real is None:
        real = known[key] = os.path.realpath(root)
    return real


class Reads:
    """What a computation looked at through this module: each path with its metadata at the look.

    A file read is recorded with the status of the descriptor it was read from,
    a folder listed with its status taken before the listing, a path probed
    (:func:`lexists`, :func:`is_dir`, :func:`mtime_of`) with its status. Each
    value is :func:`okstra_core.watch.signature`'s (``MISSING`` when it could
    not be looked at, ``UNSETTLED`` when it changed too recently to be trusted),
    so that a look later that finds every path as recorded proves the
    computation would read the same again (:class:`okstra_core.store_index.StoreIndex`).

    A path inside a store reached through a symlink below the store's folder
    is also in :attr:`linked`: a freshness source that names changed paths
    (watchman) names the symlink's target, never the path read, so such a path
    is always looked at.

    A store index's fact is recorded with the *prefix* of its store: the facts
    computed or reused within it hand it what they read already packed, as the
    index keeps it (:attr:`nested`), rather than path by path; the fact's own
    reads stay in :attr:`paths`. A pass over 100,000 tasks so never holds the
    hundreds of thousands of paths they read in one table.
    """

    __slots__ = ("linked", "nested", "paths", "prefix")

    def __init__(self, prefix: str | None = None) -> None:
        self.paths: watch.Signature = {}
        #: The paths recorded that were reached through a symlink inside their store (:func:`through_link`).
        self.linked: set[str] = set()
        #: The store's folder (with a trailing separator) of a fact's recording; None for any other.
        self.prefix = prefix
        #: What the facts nested in a fact's recording read, each packed as its index keeps it (the segments).
        self.nested: list[str] = []

    def note(self, path: str, st: os.stat_result | None, looked_ns: int) -> None:
        """Record *path* as seen with status *st* (None: it could not be looked at) at *looked_ns*."""
        if st is None:
            value = watch.MISSING
        elif watch.racy(st.st_mtime_ns, looked_ns):
            value = watch.UNSETTLED
        else:
            value = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
        # The first look wins: a later look in the same computation came after its first answer was used.
        self.paths.setdefault(path, value)


#: Each store folder's real path, by the path it was named by (resolved again when a path does not match it).
_REAL_STORES: dict[str, str] = {}


def _real_of(path: str, fd: int | None = None) -> str | None:
    """The real path of *path* (of the file open on *fd* when given), following symlinks; for a path not
    there, its folder's real path and its name; None when no folder on its way can be looked at."""
    if fd is not None:
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    try:
        opened = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        folder, name = os.path.split(path)
        if not name or folder == path:
            return None
        above = _real_of(folder)
        return None if above is None else os.path.join(above, name)
    except (OSError, ValueError):
        return None
    try:
        return os.readlink(f"/proc/self/fd/{opened}")
    except OSError:
        return os.path.realpath(path)
    finally:
        os.close(opened)


def through_link(path: str, fd: int | None = None) -> bool:
    """Whether *path*, under a store (``.okstra/``), was reached through a symlink below the store's folder (to
    a file or a folder, inside the store or out): its real path is not the store's real path followed by the
    rest of *path*. False for a path under no store; True when its real path cannot be had."""
    found = layout.store_of(path)
    if found is None:
        return False
    store = found[:-1]
    real_store = _REAL_STORES.get(store)
    if real_store is None:
        real_store = _real_of(store)
        if real_store is None:
            return True
        _REAL_STORES[store] = real_store
    real = _real_of(path, fd)
    if real is None:
        return True
    if real == real_store + path[len(store) :]:
        return False
    # Not where the store's real path says: the store may have moved since it was resolved (a folder above it
    # renamed, a symlink above it pointed elsewhere); resolved again, the answer is what a fresh look gives.
    fresh = _real_of(store)
    if fresh is None or fresh == real_store:
        return True
    _REAL_STORES[store] = fresh
    return real != fresh + path[len(store) :]


_RECORDERS: ContextVar[tuple[Reads, ...]] = ContextVar("okstra_reading_recorders", default=())


@contextmanager
def recording(prefix: str | None = None) -> Iterator[Reads]:
    """Within the block, every file read, folder listed and path probed through this module is recorded in the
    :class:`Reads` yielded (blocks nest: an outer recording sees what an inner one recorded). With *prefix*, the
    recording of a store index's fact: the facts nested in it hand it their reads packed (:func:`note_nested`)."""
    reads = Reads(prefix)
    token = _RECORDERS.set((*_RECORDERS.get(), reads))
    try:
        yield reads
    finally:
        _RECORDERS.reset(token)


def recording_now() -> bool:
    """Whether a :func:`recording` is open here (what is read is being recorded)."""
    return bool(_RECORDERS.get())


def _takers(recorders: tuple[Reads, ...]) -> Iterator[Reads]:
    """The recordings that take a path read here: every plain one, and of the facts' only the innermost (the
    facts around it have its reads handed in packed when it ends)."""
    fact_seen = False
    for reads in reversed(recorders):
        if reads.prefix is not None:
            if fact_seen:
                continue
            fact_seen = True
        yield reads


def note_reads(
    paths: watch.Signature | Callable[[], watch.Signature],
    linked: AbstractSet[str] = frozenset(),
    packed: tuple[str, str] | None = None,
) -> None:
    """Record *paths* as read with the metadata given, those in *linked* as reached through a symlink (what a
    reused result was computed from: a recording around it depends on the same files). *paths* may be a callable
    that makes them, called only when a recording takes them path by path.

    With *packed* (a store's prefix and what the reused fact read, packed as its index keeps it), the innermost
    fact's recording of that store takes the packed text instead."""
    table: watch.Signature | None = None
    for reads in _takers(_RECORDERS.get()):
        if packed is not None and reads.prefix == packed[0]:
            reads.nested.append(packed[1])
            continue
        if table is None:
            table = paths() if callable(paths) else paths
        for path, value in table.items():
            reads.paths.setdefault(path, value)
        reads.linked.update(linked)


def note_nested(prefix: str, packed: str, paths: Callable[[], tuple[watch.Signature, AbstractSet[str]]]) -> None:
    """Hand what a fact computed within this recording read (*packed* as its index keeps it, of the store at
    *prefix*) to the innermost fact's recording around it; one of another store takes it path by path
    (*paths*). Plain recordings already took each path as it was read."""
    for reads in reversed(_RECORDERS.get()):
        if reads.prefix is None:
            continue
        if reads.prefix == prefix:
            reads.nested.append(packed)
        else:
            table, linked = paths()
            for path, value in table.items():
                reads.paths.setdefault(path, value)
            reads.linked.update(linked)
        return


def fact_recording_now() -> bool:
    """Whether a store index's fact is being recorded here (a fact computed now is nested in it)."""
    return any(reads.prefix is not None for reads in _RECORDERS.get())


#: The paths this process recorded as reached through a symlink in their store, at most :data:`LINKED_MOST`.
_LINKED_SEEN: set[str] = set()
#: How many of those are kept; past it, every recorded path counts as linked (looked at, never vouched for).
LINKED_MOST: Final = 65536


def seen_through_link(path: str) -> bool:
    """Whether this process recorded *path* as reached through a symlink in its store (:func:`through_link`),
    whoever recorded it: a freshness source that names changed paths never vouches for it
    (:meth:`okstra_core.store_index.ChangedSince.holds`)."""
    return path in _LINKED_SEEN or len(_LINKED_SEEN) >= LINKED_MOST


def _note(path: Path | str, st: os.stat_result | None, looked_ns: int, fd: int | None = None) -> None:
    recorders = _RECORDERS.get()
    text = os.fspath(path)
    linked = through_link(text, fd)
    if linked and len(_LINKED_SEEN) < LINKED_MOST:
        _LINKED_SEEN.add(text)
    for reads in _takers(recorders):
        reads.note(text, st, looked_ns)
        if linked:
            reads.linked.add(text)


def _note_stat(path: Path | str) -> os.stat_result | None:
    """``os.stat`` of *path* (None when it cannot be had), recorded when a recording is active."""
    looked = time.time_ns()
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        st = None
    if _RECORDERS.get():
        _note(path, st, looked)
    return st


def note_status(path: Path | str) -> None:
    """Record *path*'s status when a recording is active: for a reader that looks at the path with its own call
    (an ``lstat`` for a size), so that what it saw is looked at again."""
    if _RECORDERS.get():
        _note_stat(path)


def _listing_says(path: Path | str, *, folder: bool) -> bool | None:
    """Whether *path* is a folder (*folder*) or names an entry at all, as the active source's listing of its
    folder already told; None when there is no source or it was not listed."""
    source = _SOURCE.get()
    if source is None:
        return None
    text = os.fspath(path)
    return source.known_is_dir(text) if folder else source.known_lexists(text)


def lexists(path: Path | str) -> bool:
    """``os.path.lexists``, recorded (the path's status, following a symlink, is what a later look compares), or
    as the active source's listing already told it."""
    known = _listing_says(path, folder=False)
    if known is not None:
        return known
    if not _RECORDERS.get():
        return os.path.lexists(path)
    try:
        lstat(path)
    except (OSError, ValueError):
        return False
    return True


def lstat(path: Path | str) -> os.stat_result:
    """``os.lstat``, recorded with the status a later look compares (the one a symlink leads to): one look for
    anything but a symlink. Raises what ``os.lstat`` raises."""
    if not _RECORDERS.get():
        return os.lstat(path)
    looked = time.time_ns()
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        _note(path, None, looked)  # no entry there: following a symlink would find none either
        raise
    if stat.S_ISLNK(st.st_mode):
        _note_stat(path)
    else:
        _note(path, st, looked)  # not a symlink: its own status is the one a symlink would lead to
    return st


def is_dir(path: Path | str) -> bool:
    """``os.path.isdir``, recorded (or as the active source's listing already told it)."""
    known = _listing_says(path, folder=True)
    if known is not None:
        return known
    if not _RECORDERS.get():
        return os.path.isdir(path)
    st = _note_stat(path)
    return st is not None and stat.S_ISDIR(st.st_mode)


def mtime_of(path: Path | str) -> int | None:
    """The modification time of *path* in nanoseconds (None when it cannot be had), recorded."""
    st = _note_stat(path)
    return None if st is None else st.st_mtime_ns


def describe_mode(mode: int) -> str:
    """What a file of *mode* is, for a message: ``a FIFO``, ``a directory``, ``a symlink``, ..."""
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _opened_inside(fd: int, path: Path, root: Path) -> bool:
    """Whether the file open on *fd* lies inside the real *root*, whatever symlinked folders led to it.

    The check is on the file actually opened (``/proc/self/fd``), so a folder
    swapped for a symlink between the check and the read cannot slip past it;
    without ``/proc`` the path is resolved instead.
    """
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        real = os.path.realpath(path)
    real_root = _real_root(root)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


#: The reason of a :class:`LoadError` for a file that is not there.
MISSING: Final = "file is missing"


def missing(value: object) -> bool:
    """Whether *value* (what a reader returned) says its file is not there."""
    return isinstance(value, LoadError) and value.reason == MISSING


def _open_regular(path: Path, root: Path | None) -> tuple[int, os.stat_result] | LoadError:
    """An open descriptor on the regular file *path* and its status; symlinks, of the file or of any folder
    on its path, are followed only while they stay inside *root*. The caller closes the descriptor."""
    if not _RECORDERS.get():
        return _open_regular_unrecorded(path, root)
    looked = time.time_ns()
    opened = _open_regular_unrecorded(path, root)
    if isinstance(opened, LoadError):
        # A missing file's status is known (the lstat found nothing: neither would a stat); any other refusal
        # is looked at as a later look will see it (a symlink's target, say).
        if opened.reason == MISSING:
            _note(path, None, looked)
        else:
            _note_stat(path)
    else:
        _note(path, opened[1], looked, opened[0])
    return opened


def _open_regular_unrecorded(path: Path, root: Path | None) -> tuple[int, os.stat_result] | LoadError:
    # Opened without following a symlink first: a regular file (nearly every file read) is then looked at once,
    # by the fstat of what was opened. A symlink, or anything else the opening refuses, is looked at as before.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return LoadError(path, MISSING)
    except OSError:
        return _open_looked_at(path, root)
    return _checked_open(path, root, fd)


def _open_looked_at(path: Path, root: Path | None) -> tuple[int, os.stat_result] | LoadError:
    """:func:`_open_regular_unrecorded` for a path the plain opening refused: looked at first, a symlink followed
    while it stays inside *root*, and the refusal said as the look finds it."""
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        return LoadError(path, MISSING)
    except OSError as exc:
        return LoadError(path, f"cannot stat: {exc.strerror or exc}")
    if stat.S_ISLNK(lst.st_mode):
        try:
            real = Path(os.path.realpath(path, strict=True))
        except FileNotFoundError:
            return LoadError(path, dangling(path))
        except (OSError, RuntimeError) as exc:
            if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP:
                return LoadError(path, "symlink loop")
            return LoadError(path, f"cannot resolve symlink: {exc}")
        if root is not None:
            real_root = Path(_real_root(root))
            if not real.is_relative_to(real_root):
                return LoadError(path, f"symlink escapes {layout.root_name(root)}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except PermissionError:
        return LoadError(path, "unreadable: permission denied")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return LoadError(path, "symlink loop")
        return LoadError(path, f"cannot open: {exc.strerror or exc}")
    return _checked_open(path, root, fd)


def _checked_open(path: Path, root: Path | None, fd: int) -> tuple[int, os.stat_result] | LoadError:
    """*fd* (opened on *path*) and its status when it is a regular file reached inside *root*; else it is closed
    and the refusal given."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            problem = LoadError(path, f"is {describe_mode(st.st_mode)}, not a regular file")
        elif root is not None and not _opened_inside(fd, path, root):
            problem = LoadError(path, f"a folder on its path is a symlink leading outside {layout.root_name(root)}")
        else:
            return fd, st
    except OSError as exc:
        problem = LoadError(path, f"read failed: {exc.strerror or exc}")
    os.close(fd)
    return problem


def open_own_file(path: Path) -> tuple[int, os.stat_result] | LoadError | None:
    """An open descriptor on *path*, a file of the user's own state outside any store (the seen state, the
    write log), and its status; None when there is none. The caller closes the descriptor.

    A symlink there is never followed, and opening never waits: a FIFO, a folder or a device is refused with
    a :class:`LoadError` saying what it is, as is a file that cannot be opened.
    """
    looked = time.time_ns()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        _note(path, None, looked)
        return None
    except OSError as exc:
        _note_stat(path)
        if exc.errno == errno.ELOOP:
            return LoadError(path, "is a symlink, which is never followed here")
        return LoadError(path, f"cannot be read ({exc.strerror or exc})")
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        _note_stat(path)
        return LoadError(path, f"cannot be read ({exc.strerror or exc})")
    _note(path, st, looked)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return LoadError(path, f"is {describe_mode(st.st_mode)}, not a regular file")
    return fd, st


def read_bytes(
    path: Path, *, root: Path | None = None, max_bytes: int | None = None, tail: bool = False
) -> bytes | LoadError:
    """The bytes of a regular file; symlinks, of the file or of any folder on its path, are followed only
    while they stay inside *root*. With *tail*, a file over *max_bytes* gives its last whole lines within
    *max_bytes* instead of a refusal (a growing transcript is read from its end). *max_bytes* defaults to the
    file's own limit (:func:`limit_for`)."""
    if max_bytes is None:
        max_bytes = limit_for(path)
    source = _SOURCE.get()
    if source is not None:
        known = source.known_bytes(os.fspath(path))
        if known is not None and len(known) <= max_bytes:
            return known
    kept = _memo_for(root)
    if kept is not None and (known := kept.bytes.get(os.fspath(path))) is not None and len(known) <= max_bytes:
        return known
    opened = _open_regular(path, root)
    if isinstance(opened, LoadError):
        return opened
    fd, st = opened
    try:
        if st.st_size > max_bytes and tail:
            data = os.pread(fd, max_bytes, st.st_size - max_bytes)
            cut = data.find(b"\n")
            return data[cut + 1 :] if cut >= 0 else data
        if st.st_size > max_bytes:
            return LoadError(path, f"file is too large ({st.st_size} bytes; limit {max_bytes})")
        data = read_open(fd, st.st_size, max_bytes)
        if len(data) > max_bytes:
            return LoadError(path, f"file is too large (over {max_bytes} bytes)")
        _keep(path, root, data)
        return data
    except OSError as exc:
        return LoadError(path, f"read failed: {exc.strerror or exc}")
    finally:
        os.close(fd)


def read_open(fd: int, size: int, max_bytes: int) -> bytes:
    """What the open file *fd* holds from where it stands, at most one byte over *max_bytes* (so that a caller
    sees it is over): in one read when it is still *size* bytes long (its size when opened; one more byte asked to
    see the end), else a megabyte at a time. What it allocates follows what the file holds, never the bound (one
    read of the bound would take the bound's memory first, however small the file)."""
    chunks: list[bytes] = []
    total = 0
    want = min(size, max_bytes) + 1
    while total <= max_bytes:
        asked = min(want, max_bytes + 1 - total)
        chunk = os.read(fd, asked)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        # A read short of what was asked met the end: one byte more confirms it (a megabyte asked would take it).
        want = 1 << 20 if len(chunk) == asked else 1
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_prefix(path: Path, *, root: Path | None = None, max_bytes: int) -> tuple[bytes, int] | LoadError:
    """The first *max_bytes* bytes of a regular file and its size, whatever its size (the same containment
    as :func:`read_bytes`); the rest is not read. Nothing is decoded: the caller decides how."""
    kept = _memo_for(root)
    if kept is not None and (known := kept.bytes.get(os.fspath(path))) is not None:
        return known[:max_bytes], len(known)  # a whole file read in this block
    opened = _open_regular(path, root)
    if isinstance(opened, LoadError):
        return opened
    fd, st = opened
    try:
        chunks: list[bytes] = []
        total = 0
        while total < max_bytes and (chunk := os.read(fd, min(max_bytes - total, 1 << 20))):
            chunks.append(chunk)
            total += len(chunk)
        data = b"".join(chunks)
        if total < max_bytes:  # the whole file: the end was reached before the bound
            _keep(path, root, data)
        return data, max(st.st_size, total)
    except OSError as exc:
        return LoadError(path, f"read failed: {exc.strerror or exc}")
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Head:
    """The start of a text file, as :func:`read_head` read it."""

    #: The first whole lines, at most ``max_chars`` characters (all of the file when ``complete``).
    text: str
    #: True when ``text`` is the whole file.
    complete: bool
    #: The file's size in bytes.
    size: int
    #: Lines in the whole file (a last line without a newline counts), when counting was asked for.
    lines: int | None = None


#: Bytes read at a time by :func:`read_head`.
_HEAD_CHUNK = 1 << 16


def read_head(
    path: Path,
    *,
    root: Path | None = None,
    max_chars: int,
    max_lines: int | None = None,
    count_lines: bool = False,
    max_bytes: int | None = None,
) -> Head | LoadError:
    """The first lines of a text file, reading no more of it than they need (a preview of a large file).

    The same checks as :func:`read_text` (size limit, regular file inside
    *root*, strict UTF-8, no NUL byte), applied to the part read. The text
    stops at *max_chars* characters or *max_lines* lines, whichever comes
    first, and ends at a line end unless the first line alone is longer. With
    *count_lines* the rest of the file is scanned, not decoded, for its line
    count.
    """
    import codecs

    if max_bytes is None:
        max_bytes = limit_for(path)

    opened = _open_regular(path, root)
    if isinstance(opened, LoadError):
        return opened
    fd, st = opened
    try:
        if st.st_size > max_bytes:
            return LoadError(path, f"file is too large ({st.st_size} bytes; limit {max_bytes})")
        decoder = codecs.getincrementaldecoder("utf-8")()
        parts: list[str] = []
        chars = newlines = offset = 0
        ended = False
        while chars <= max_chars and (max_lines is None or newlines < max_lines):
            chunk = os.read(fd, _HEAD_CHUNK)
            ended = not chunk or offset + len(chunk) >= st.st_size  # what it held when looked at
            if b"\x00" in chunk:
                return LoadError(path, "binary file (contains NUL bytes)")
            try:
                part = decoder.decode(chunk, final=ended)
            except UnicodeDecodeError as exc:
                return LoadError(path, f"not UTF-8 (invalid byte at offset {offset + exc.start})")
            offset += len(chunk)
            parts.append(part)
            chars += len(part)
            newlines += part.count("\n")
            if ended:
                break
        text = "".join(parts)
        lines = newlines + (1 if text and not text.endswith("\n") else 0)
        complete = ended and len(text) <= max_chars and (max_lines is None or lines <= max_lines)
        if not complete:
            text = _whole_lines(text, max_chars, max_lines)
        total = None
        if count_lines:
            total = newlines
            while chunk := os.read(fd, 1 << 20):
                total += chunk.count(b"\n")
            if st.st_size and os.pread(fd, 1, st.st_size - 1) != b"\n":
                total += 1
        return Head(text, complete, st.st_size, total)
    except OSError as exc:
        return LoadError(path, f"read failed: {exc.strerror or exc}")
    finally:
        os.close(fd)


def _whole_lines(text: str, max_chars: int, max_lines: int | None) -> str:
    """*text* cut to *max_chars* characters and *max_lines* lines, at a line end when there is one."""
    if max_lines is not None:
        end = -1
        for _ in range(max_lines):
            end = text.find("\n", end + 1)
            if end < 0:
                break
        if end >= 0:
            text = text[: end + 1]
    return cut_at_line_end(text, max_chars)


def cut_at_line_end(text: str, max_chars: int) -> str:
    """*text* when it has at most *max_chars* characters; else its start up to the last line end within them
    (the first *max_chars* characters when the first line alone is longer)."""
    if len(text) <= max_chars:
        return text
    cut = text.rfind("\n", 0, max_chars)
    return text[: cut + 1] if cut >= 0 else text[:max_chars]


def list_folder(folder: Path) -> list[str] | LoadError:
    """Every name in *folder*, sorted; ``[]`` when it is missing or not a folder; a :class:`LoadError`
    (``cannot list folder: reason``) when it exists but cannot be listed (permission denied, an I/O error).

    The one listing of the read side: :mod:`okstra_core.store` lists through it and counts the folders it
    could not list, so that a reader never takes an unlistable folder for an empty one. A checker that
    listed the folder already lends its listing (:func:`known_names`).
    """
    known = known_names(folder)
    if known is None:
        known = _memo_names(folder)
    if known is not None:
        return known
    if _RECORDERS.get():
        _note_stat(folder)  # before the listing: a change after it shows as a later status
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        return LoadError(folder, f"cannot list folder: {exc.strerror or exc}")
    _keep_names(folder, names)
    return names


def list_if_folder(path: Path) -> list[str] | LoadError | None:
    """Every name in *path*, sorted, when it is a folder (a symlink to one too); None when it is not one or is
    missing; a :class:`LoadError` when it is one that cannot be listed. One look, where :func:`is_dir` then
    :func:`list_folder` would take two."""
    known = known_names(path)
    if known is None:
        known = _memo_names(path)
    if known is not None:
        return known
    if not _RECORDERS.get():
        # Unrecorded, the listing is the look: it follows a symlink as the status would, and says what is no
        # folder or not there. Anything else it refuses is looked at, to say it as the recorded way does.
        try:
            names = sorted(os.listdir(path))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError):
            pass
        else:
            _keep_names(path, names)
            return names
    st = _note_stat(path)  # recorded when a recording is active
    if st is None or not stat.S_ISDIR(st.st_mode):
        return None
    try:
        names = sorted(os.listdir(path))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return LoadError(path, f"cannot list folder: {exc.strerror or exc}")
    _keep_names(path, names)
    return names


def unlistable(folder: Path) -> LoadError | None:
    """Why *folder* cannot be listed (permission denied, not a folder), or None when it lists or is missing."""
    if os.path.lexists(folder) and not os.path.isdir(folder):
        return LoadError(folder, "cannot list folder: Not a directory")
    listed = list_folder(folder)
    return listed if isinstance(listed, LoadError) else None


def decode_text(path: Path, data: bytes) -> str | LoadError:
    """Strict UTF-8; a NUL byte marks a binary file."""
    if b"\x00" in data:
        return LoadError(path, "binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return LoadError(path, f"not UTF-8 (invalid byte at offset {exc.start})")


def over_limit(path: Path, size: int, *, max_bytes: int | None = None) -> LoadError | None:
    """The loaders' refusal of a file of *size* bytes at *path*, or None when it is within *max_bytes* (by
    default the file's own limit, :func:`limit_for`).

    The one size rule of the store: the loaders refuse such a file, and the
    write primitives (:mod:`okstra_core.writes`) refuse to make one.
    """
    if max_bytes is None:
        max_bytes = limit_for(path)
    if size > max_bytes:
        return LoadError(path, f"too large ({size} bytes; the reader's limit is {max_bytes})")
    return None


def text_of_bytes(path: Path, data: bytes, *, max_bytes: int | None = None) -> str | LoadError:
    """What :func:`read_text` would make of a file holding *data*: the size limit, then :func:`decode_text`.

    Writers run the bytes they are about to write through this (or
    :func:`sidecar_of_bytes`), so nothing is written that the reader refuses later.
    """
    refused = over_limit(path, len(data), max_bytes=max_bytes)
    return refused if refused is not None else decode_text(path, data)


def read_tail(path: Path, *, root: Path | None = None, max_bytes: int = 1 << 20) -> str | LoadError:
    """The text of the last whole lines of *path* within *max_bytes* (all of it when smaller)."""
    data = read_bytes(path, root=root, max_bytes=max_bytes, tail=True)
    if isinstance(data, LoadError):
        return data
    return decode_text(path, data)


def read_text(path: Path, *, root: Path | None = None, max_bytes: int | None = None) -> str | LoadError:
    data = read_bytes(path, root=root, max_bytes=max_bytes)
    if isinstance(data, LoadError):
        return data
    return decode_text(path, data)


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


#: Where every key of a JSON object ends: its closing quote, optional whitespace, the colon.
_KEY_END = re.compile(r'"[ \t\n\r]*:')
#: The same with whitespace before the colon, which JSON writers rarely put there.
_KEY_END_SPACED = re.compile(r'"[ \t\n\r]+:')


def _key_ends(text: str) -> int:
    """How many times :data:`_KEY_END` matches in *text*: a C count unless a key ends in whitespace."""
    if _KEY_END_SPACED.search(text) is None:
        return text.count('":')
    return len(_KEY_END.findall(text))


def repeated_key(text: str, value: Any) -> str | None:
    """A key that appears twice in one object of the JSON *text* (already parsed as *value*), or None.

    ``json.loads`` keeps the last of two equal keys without a word; another
    reader may keep the first. The common case stays cheap: every key ends in
    a quote and a colon, so when the text holds no more of those than *value*
    holds keys, no pair was dropped (a string holding ``":`` only raises the
    count). Only otherwise is the text parsed again, keeping every pair, to
    name the key.
    """
    return repeated_key_of(text, count_keys(value))


def repeated_key_of(text: str, keys: int) -> str | None:
    """:func:`repeated_key` of a *text* whose parsed value holds *keys* keys (:func:`count_keys`, summed over its
    parts when it was parsed a part at a time: :func:`object_rows`)."""
    if _key_ends(text) <= keys:
        return None
    try:
        json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        return exc.key
    except (ValueError, RecursionError):
        return None
    return None


def count_keys(value: Any) -> int:
    """How many keys the objects of the parsed JSON *value* hold, nested ones included."""
    # ``json.loads`` makes plain dicts and lists only: exact type tests are the cheap ones, and iterating
    # the growing list (instead of popping a stack) visits every value once with the fewest calls.
    count = 0
    items = [value]
    push = items.extend
    for item in items:
        kind = type(item)
        if kind is dict:
            count += len(item)
            push(item.values())
        elif kind is list:
            push(item)
    return count


#: JSON's whitespace, as ``json.loads`` skips it.
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
#: One JSON value at an offset, parsed as ``json.loads`` parses it (its C scanner): ``(value, end)``, or
#: ``StopIteration`` when no value starts there.
_JSON_VALUE: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
#: A JSON string's text from just after its opening quote: ``(text, end)``, as ``json.loads`` reads it.
_json_string: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def object_rows(text: str, field: str, head: dict[str, Any]) -> Generator[Any, None, None]:
    """The items of the list *field* of the JSON object *text*, one at a time, each as ``json.loads`` parses it;
    the object's other members go into *head* as they come (all of them once the items are all given).

    A catalog of 100,000 tasks parsed whole is about 80 megabytes of objects; read this way only one item is ever
    held beside the text. ``ValueError`` (or ``RecursionError``) part-way for any text whose parsed value this does
    not give exactly: one ``json.loads`` refuses, one that is not an object, a key it holds twice, *field* missing
    or not a list. A caller then parses the text whole, which says why.
    """
    at = _skip(text, 0)
    if text[at : at + 1] != "{":
        raise ValueError("not a JSON object")
    at = _skip(text, at + 1)
    listed = False
    while True:
        if text[at : at + 1] != '"':
            raise ValueError("expecting a key")
        key, at = _json_string(text, at + 1, True)
        at = _skip(text, at)
        if text[at : at + 1] != ":" or key in head or (key == field and listed):
            raise ValueError("expecting a colon after a key not seen before")
        at = _skip(text, at + 1)
        if key == field:
            listed = True
            at = yield from _list_items(text, at)
        else:
            head[key], at = _value_at(text, at)
        at = _skip(text, at)
        if text[at : at + 1] == "}":
            break
        if text[at : at + 1] != ",":
            raise ValueError("expecting a comma or the object's end")
        at = _skip(text, at + 1)
    if not listed or _skip(text, at + 1) != len(text):
        raise ValueError(f"no list {field!r}, or more after the object")


def array_items(text: str) -> Generator[Any, None, None]:
    """The items of the JSON list *text*, one at a time, each as ``json.loads`` parses it (:func:`object_rows`
    for a list alone): ``ValueError`` (or ``RecursionError``) part-way for any text that is not one list."""
    end = yield from _list_items(text, _skip(text, 0))
    if _skip(text, end) != len(text):
        raise ValueError("more after the list")


def _list_items(text: str, at: int) -> Generator[Any, None, int]:
    """The items of the JSON list starting at *at*, one at a time; returns the offset after its ``]``."""
    if text[at : at + 1] != "[":
        raise ValueError("not a list")
    at = _skip(text, at + 1)
    if text[at : at + 1] == "]":
        return at + 1
    while True:
        item, at = _value_at(text, at)
        yield item
        at = _skip(text, at)
        if text[at : at + 1] == "]":
            return at + 1
        if text[at : at + 1] != ",":
            raise ValueError("expecting a comma or the list's end")
        at = _skip(text, at + 1)


def _skip(text: str, at: int) -> int:
    """The offset of the first character at or after *at* that is not JSON whitespace."""
    found = _JSON_SPACE.match(text, at)
    return at if found is None else found.end()


def _value_at(text: str, at: int) -> tuple[Any, int]:
    try:
        value, end = _JSON_VALUE(text, at)
    except StopIteration:
        raise ValueError("expecting a value") from None
    return value, end


def parse_json(path: Path, text: str, line_offset: int = 0, *, unique_keys: bool = False) -> Any | LoadError:
    """Parse JSON text; every failure is a :class:`LoadError` (never an exception), carrying the line when known.

    This is the one JSON parser of the read side: an integer longer than
    Python's conversion limit (4,300 digits) or nesting too deep for the parser
    is the file's own error. With *unique_keys* a repeated key is refused
    instead of the last one winning (inputs a person wrote: answers files).
    """
    try:
        if unique_keys:
            return json.loads(text, object_pairs_hook=_no_duplicates)
        return json.loads(text)
    except json.JSONDecodeError as exc:
        return LoadError(
            path,
            f"invalid JSON: {exc.msg} (line {exc.lineno + line_offset}, column {exc.colno})",
            line=exc.lineno + line_offset,
        )
    except _DuplicateKey as exc:
        return LoadError(path, f"invalid JSON: key {exc.key!r} appears more than once")
    except ValueError as exc:
        # int() refuses digit strings past sys.get_int_max_str_digits(): a denial-of-service guard, not a crash.
        if "digits" in str(exc):
            return LoadError(path, "invalid JSON: an integer is too long (over 4300 digits)")
        return LoadError(path, f"invalid JSON: {exc}")
    except RecursionError:
        return LoadError(path, "invalid JSON: nesting too deep")


#: The longest symlink target a dangling-link message shows whole (Linux allows 4,095 bytes).
DANGLING_TARGET_MAX: Final = 1024


def dangling(path: Path) -> str:
    """Expected and found for a symlink whose target is missing: where it points."""
    try:
        target = os.readlink(path)
    except OSError:
        return "dangling symlink (its target does not exist)"
    # Shortened only past any real checkout's path: the message is part of a finding's CI fingerprint, with the
    # project root in it replaced by a mark, so a cut inside the root would tie the fingerprint to the root's length.
    limit = DANGLING_TARGET_MAX
    shown = repr(target) if len(target) <= limit else repr(target[: limit - 3] + "...")
    return f"dangling symlink: points to {shown}, which does not exist"


def describe_error(err: Any) -> str:
    """One pydantic error as ``field.path: expected ... (found ...)``, or ``field.path: missing``."""
    loc = ".".join(str(p) for p in err["loc"]) or "(document)"
    return f"{loc}: {describe_problem(err)}"


def describe_problem(err: Any) -> str:
    """What one pydantic error expected and what it found, without its location."""
    kind = err.get("type", "")
    if kind == "missing":
        return "missing"
    if kind == "string_pattern_mismatch":
        msg = "not in the expected form"
    else:
        msg = str(err["msg"]).removeprefix("Value error, ")
    value = err.get("input")
    if not err["loc"] or (kind.startswith(("value_error", "assertion_error")) and isinstance(value, dict | list)):
        return msg  # a rule over a whole object: its message names what it found
    return f"{msg} (found {_found(value)})"


def _found(value: Any) -> str:
    """A short description of an invalid input for a one-line message."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def format_validation(exc: ValidationError, limit: int = 3) -> str:
    """One line summarising a pydantic error: ``field.path: message; ...``."""
    parts = [describe_error(err) for err in exc.errors()[:limit]]
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def validate(path: Path, value: Any, model: type[M], line: int | None = None) -> M | LoadError:
    """Validate a parsed JSON value against *model*."""
    from pydantic import ValidationError

    try:
        return model.model_validate(value)
    except ValidationError as exc:
        return LoadError(path, f"does not match {model.__name__}: {format_validation(exc)}", line=line)
    except RecursionError:
        return LoadError(path, "nesting too deep", line=line)


def load_json(path: Path, *, root: Path | None = None) -> Any | LoadError:
    text = read_text(path, root=root)
    if isinstance(text, LoadError):
        return text
    return parse_json(path, text)


def load_model(path: Path, model: type[M], *, root: Path | None = None) -> M | LoadError:
    """Read, parse and validate one JSON document."""
    known = known_model(path, model)
    if known is None:
        known = _memo_model(path, root, model)
    if known is not None:
        return known
    value = load_json(path, root=root)
    if isinstance(value, LoadError):
        return value
    doc = validate(path, value, model)
    if not isinstance(doc, LoadError):
        _keep_model(path, root, doc)
    return doc


def load_doc(path: Path, doc_kind: str, *, root: Path | None = None) -> BaseModel | LoadError:
    """Load a JSON document of a registered kind (see :data:`okstra_core.models.DOC_KINDS`)."""
    from .models import DOC_KINDS_BY_NAME

    return load_model(path, DOC_KINDS_BY_NAME[doc_kind].model, root=root)


def report_model_for(value: Any) -> type[FinalReportV3] | type[FinalReportV2] | str:
    """The report model a data value declares, or why it declares none."""
    from .models import FINAL_REPORT_VERSIONS
    from .models.report import FinalReportV2, FinalReportV3

    if not isinstance(value, dict):
        return "report data is not a JSON object"
    version = value.get("schemaVersion")
    kind = FINAL_REPORT_VERSIONS.get(version) if isinstance(version, str) else None
    if kind is None:
        return f"unknown report schemaVersion {version!r} (expected 3.0 or 2.0)"
    # Each model's schemaVersion literal names its version; the registry (which builds every model) is not needed.
    return FinalReportV3 if version == "3.0" else FinalReportV2


def load_report(path: Path, *, root: Path | None = None) -> FinalReportV3 | FinalReportV2 | LoadError:
    """Final report data, validated by the schema version it declares."""
    value = load_json(path, root=root)
    if isinstance(value, LoadError):
        return value
    model = report_model_for(value)
    if isinstance(model, str):
        return LoadError(path, model)
    known = known_model(path, model)
    if known is None:
        known = _memo_model(path, root, model)
    if known is not None:
        return known
    doc = validate(path, value, model)
    if not isinstance(doc, LoadError):
        _keep_model(path, root, doc)
    return doc


@dataclass(slots=True)
class JsonlDoc:
    """A JSONL file: the records that loaded and an error per bad line."""

    path: Path
    records: list[Any] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)


def load_jsonl(path: Path, model: type[M], *, root: Path | None = None) -> JsonlDoc | LoadError:
    """Every line validated on its own; a torn last line (no newline) is reported."""
    text = read_text(path, root=root)
    if isinstance(text, LoadError):
        return text
    return parse_jsonl(path, text, model)


def parse_jsonl(path: Path, text: str, model: type[M]) -> JsonlDoc:
    """Validate every line of JSONL *text* on its own (see :func:`load_jsonl`)."""
    doc = JsonlDoc(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        doc.errors.append(LoadError(path, "last line is not newline-terminated (torn write?)", line=len(lines)))
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            doc.errors.append(LoadError(path, "blank line", line=number))
            continue
        value = parse_json(path, line, line_offset=number - 1)
        if isinstance(value, LoadError):
            doc.errors.append(value)
            continue
        record = validate(path, value, model, line=number)
        if isinstance(record, LoadError):
            doc.errors.append(record)
        else:
            doc.records.append(record)
    return doc


@dataclass(frozen=True, slots=True)
class LoadedSidecar:
    header: BaseModel
    body: str
    text: str


def load_sidecar(path: Path, header_model: type[M], *, root: Path | None = None) -> LoadedSidecar | LoadError:
    """A Markdown sidecar whose header must match *header_model*."""
    text = read_text(path, root=root)
    if isinstance(text, LoadError):
        return text
    return parse_sidecar_text(path, text, header_model)


def sidecar_of_bytes(path: Path, data: bytes, header_model: type[M]) -> LoadedSidecar | LoadError:
    """What :func:`load_sidecar` would make of a file holding *data* (for checking before a write)."""
    text = text_of_bytes(path, data)
    if isinstance(text, LoadError):
        return text
    return parse_sidecar_text(path, text, header_model)


def parse_sidecar_text(path: Path, text: str, header_model: type[M]) -> LoadedSidecar | LoadError:
    from . import sidecar

    try:
        parsed = sidecar.parse(text)
    except sidecar.HeaderError as exc:
        return LoadError(path, f"bad header: {exc.reason}", line=exc.line)
    header = validate(path, parsed.header, header_model)
    if isinstance(header, LoadError):
        return LoadError(path, f"bad header: {header.reason}")
    return LoadedSidecar(header, parsed.body, text)
