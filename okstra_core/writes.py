"""The write primitives. Every write the project makes goes through these.

* :func:`create_only`: exclusive create; identical existing bytes are a
  success, different bytes a refusal. The content is written to a private temp
  file and published with ``link()``, so a reader never sees a partial file.
* :func:`append_jsonl`: one whole line per append, under a lock; a torn tail
  left by a crashed writer (never a complete record) is cut before appending.
* :func:`replace_locked`: lock, read, change, write a unique temp file in the
  same folder, flush, fsync, rename, fsync the folder.
* :func:`move_no_overwrite`: publish an existing file under a new name
  without ever replacing what is there.
* :func:`ensure_root` and :func:`ensure_dir`: a root folder, then folders
  inside it (containment checked before and after ``makedirs``).
* :func:`allocate_seq`: the race-free per-category ``<seq>`` claim.
Files outside any store (the check cache, its key, the seen state) are
written by :mod:`okstra_core.writes_outside`, with these helpers.

Every store primitive first consults the process's read-only guard
(:mod:`okstra_core.read_only`: :func:`enable_read_only`, or ``OKSTRA_READ_ONLY=1`` in the environment): under
it each one refuses with :class:`~okstra_core.errors.ReadOnly` before touching
anything, so a read-only workbench cannot change a store whatever its screens do.

No primitive makes a file the reader refuses: a write whose result would be
larger than the loaders' limit (:func:`okstra_core.reading.limit_for`) is
refused before anything is written, an append counting the file it adds to.

Each store primitive resolves its target with symlinks followed and refuses a
path outside its authorised root or reached through a symlink escape
(DECISIONS section 5).
"""

from __future__ import annotations

import contextvars
import enum
import errno
import json
import os
import secrets
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Final

from . import layout, reading
from .digests import pretty_json
from .errors import LayoutError, LockTimeout, OkstraError, PathEscape, WriteFailed, WriteRefused
from .layout import TEMP_PREFIX, lock_path
from .names import format_seq
from .read_only import READ_ONLY_ENV as READ_ONLY_ENV
from .read_only import enable_read_only as enable_read_only
from .read_only import read_only as read_only
from .read_only import refuse_if_read_only as refuse_if_read_only

DEFAULT_LOCK_TIMEOUT = 30.0

#: Bulk generation of throw-away trees (benchmarks) may skip fsync; every
#: other write is durable. Atomicity (temp + link/rename) is kept either way.
_durable: contextvars.ContextVar[bool] = contextvars.ContextVar("okstra_durable", default=True)


@contextmanager
def relaxed_durability() -> Iterator[None]:
    """Skip fsync inside this block (for generating disposable trees quickly)."""
    token = _durable.set(False)
    try:
        yield
    finally:
        _durable.reset(token)


def _fsync(fd: int) -> None:
    if _durable.get():
        os.fsync(fd)


class Outcome(enum.Enum):
    """What a write did."""

    CREATED = "created"
    IDENTICAL = "identical"
    APPENDED = "appended"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"
    MOVED = "moved"


# ------------------------------------------------------------------ containment


def _root_text(root: Path) -> str:
    """The authorised root as a refusal names it: what it is (project root, manager home) and where."""
    return f"{layout.root_name(root)} {root}"


def _real_root(root: Path) -> Path:
    try:
        real = Path(os.path.realpath(root, strict=True))
    except (OSError, RuntimeError) as exc:
        raise WriteRefused(root, f"authorised root is not usable ({exc.__class__.__name__})") from exc
    if not real.is_dir():
        raise WriteRefused(root, "authorised root is not a directory")
    return real


#: Called with each store file this process is about to write: the workbench tells its own writes from others'.
_write_observers: list[Callable[[Path], None]] = []


def observe_writes(callback: Callable[[Path], None]) -> Callable[[], None]:
    """Call *callback* with the real path of every store file a primitive is about to write; returns an undo.

    *callback* runs in the writing thread, before the write; it must be quick and must not raise.
    """
    _write_observers.append(callback)

    def stop() -> None:
        with suppress(ValueError):
            _write_observers.remove(callback)

    return stop


def _writing(final: Path) -> Path:
    for callback in tuple(_write_observers):
        callback(final)
    return final


def resolve_target(root: Path, target: Path | str) -> Path:
    """Resolve *target* (relative to *root*, or absolute) and check containment.

    The parent folder is resolved with symlinks followed and must lie inside the
    real *root*; the final component must not be a symlink (writes never go
    through one). Returns the real path to write.
    """
    real_root = _real_root(root)
    candidate = Path(target)
    if not candidate.is_absolute():
        candidate = root / candidate
    name = candidate.name
    if name in ("", ".", "..") or candidate.as_posix().endswith("/"):
        raise PathEscape(target, "target does not name a file")
    try:
        real_parent = Path(os.path.realpath(candidate.parent))
    except (OSError, RuntimeError) as exc:
        raise PathEscape(target, f"cannot resolve folder ({exc.__class__.__name__})") from exc
    if not real_parent.is_relative_to(real_root):
        raise PathEscape(target, f"resolves outside {_root_text(root)}")
    final = real_parent / name
    try:
        st = os.lstat(final)
    except FileNotFoundError:
        return final
    except OSError as exc:
        raise WriteRefused(target, f"cannot inspect target: {exc.strerror}") from exc
    if stat.S_ISLNK(st.st_mode):
        raise PathEscape(target, "target is a symlink; writes never follow one")
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(target, "target exists and is not a regular file")
    return final


_CLAIM_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW


def allocate_seq(root: Path, run_directory: Path, category: str) -> int:
    """Take the next seq of *category* under *run_directory* (inside *root*), race-free.

    The next number is the highest in use there (an artifact or a claim,
    :func:`okstra_core.layout.seqs_in_use`) plus one; an exclusive create of the
    claim ``<category>/.seq/<seq>`` takes it, so two writers never get the same
    number. Gaps are allowed. The claim folder is made with containment
    checked: nothing is made through a folder symlinked outside *root*.
    """
    refuse_if_read_only(run_directory)
    if category not in layout.SEQ_CATEGORIES:
        raise LayoutError(None, f"{category!r} does not allocate seqs")
    folder = layout.category_dir(run_directory, category)
    claims = folder / layout.SEQ_CLAIMS_DIR
    ensure_dir(root, claims)
    candidate = layout.seqs_in_use(folder) + 1
    with _io_failure(claims, "seq claim"):
        while True:
            try:
                # O_EXCL fails on any existing name, a planted symlink included: it is never followed.
                fd = os.open(claims / format_seq(candidate), _CLAIM_FLAGS, CREATE_MODE)
            except FileExistsError:
                candidate += 1
                continue
            os.close(fd)
            return candidate


def ensure_root(root: Path) -> None:
    """Create the folder *root* (and its parents) that is to become an authorised root (a project, the manager home).

    It is the root itself, so nothing contains it; an existing folder (or a
    symlink to one) is fine, a file standing there is refused.
    """
    refuse_if_read_only(root)
    with _io_failure(root, "create folder"):
        try:
            os.makedirs(root, exist_ok=True)
        except FileExistsError:
            raise WriteRefused(root, "a file stands where a folder is needed") from None


def ensure_dir(root: Path, folder: Path) -> None:
    """Create *folder* (inside *root*) and its parents, checking containment before and after.

    The check before matters: ``makedirs`` through a symlinked parent would
    otherwise create folders outside the root before the refusal.
    """
    refuse_if_read_only(folder)
    real_root = _real_root(root)
    candidate = folder if folder.is_absolute() else root / folder
    if not Path(os.path.realpath(candidate)).is_relative_to(real_root):
        raise PathEscape(folder, f"folder resolves outside {_root_text(root)}")
    try:
        os.makedirs(candidate, exist_ok=True)
    except FileExistsError:
        raise WriteRefused(folder, "a file stands where a folder is needed") from None
    except OSError as exc:
        raise WriteFailed(folder, f"cannot create folder: {exc.strerror or exc}") from None
    folder = candidate
    real = Path(os.path.realpath(folder))
    if not real.is_relative_to(real_root):
        raise PathEscape(folder, f"folder resolves outside {_root_text(root)}")


def _fsync_dir(folder: Path) -> None:
    if not _durable.get():
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _regular_size(path: Path) -> int | None:
    """The size of *path* when it is a regular file (a symlink is not followed), else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _read_regular(path: Path) -> bytes | None:
    """Bytes of an existing regular file (never following a symlink), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteRefused(path, f"cannot read existing file: {exc.strerror}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise WriteRefused(path, "existing target is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


#: Mode asked of every created file: the kernel applies the caller's umask, as for an ordinary ``open()``.
CREATE_MODE = 0o666


def _create_temp(final: Path) -> tuple[int, str]:
    """A new private temp file beside *final* (exclusive create, mode :data:`CREATE_MODE` under the umask).

    Unlike ``mkstemp`` (always 0600), the file gets the mode the published
    artifact should have, so a store shared with a team stays readable.
    """
    for _ in range(100):
        name = os.path.join(final.parent, f"{TEMP_PREFIX}{final.name}.{secrets.token_hex(6)}")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, CREATE_MODE), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temp file name", str(final.parent))


#: A temp file of the same target older than this is the leftover of a killed writer: writers publish in seconds.
STALE_TEMP_SECONDS = 3600.0


def _sweep_stale_temps(final: Path) -> None:
    """Remove this target's own temp files left by killed writers (older than :data:`STALE_TEMP_SECONDS`).

    Only temp files of *final* (``.okstra-tmp-<name>.<random>``) and only old
    ones: a concurrent writer's fresh temp file is never touched.
    """
    prefix = f"{TEMP_PREFIX}{final.name}."
    horizon = time.time() - STALE_TEMP_SECONDS
    try:
        with os.scandir(final.parent) as entries:
            stale = [
                e.path
                for e in entries
                if e.name.startswith(prefix)
                and e.is_file(follow_symlinks=False)
                and e.stat(follow_symlinks=False).st_mtime < horizon
            ]
    except OSError:
        return
    for path in stale:
        with suppress(OSError):
            os.unlink(path)


def _temp_beside(final: Path, data: bytes) -> Path:
    _sweep_stale_temps(final)
    fd, name = _create_temp(final)
    try:
        _write_all(fd, data)
        _fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quiet(Path(name))
        raise
    os.close(fd)
    return Path(name)


def _publish(final: Path, data: bytes) -> None:
    """Replace *final* with *data* in one rename: a reader sees the old file or the new one, never a part."""
    tmp = _temp_beside(final, data)
    try:
        os.replace(tmp, final)
    except BaseException:
        _unlink_quiet(tmp)
        raise
    _fsync_dir(final.parent)


def _unlink_quiet(path: Path) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)


@contextmanager
def _io_failure(target: Path | str, what: str) -> Iterator[None]:
    """Turn an operating-system failure into one clear :class:`WriteFailed` naming the target."""
    try:
        yield
    except OkstraError:
        raise
    except OSError as exc:
        raise WriteFailed(target, f"{what} failed: {exc.strerror or exc}") from exc


# ------------------------------------------------------------------- size limit

#: The size limit a store write keeps to by default: the loaders' own for the file written
#: (:func:`okstra_core.reading.limit_for`; a file over it is one they refuse).
STORE_LIMIT: Final = -1


def _refuse_over_limit(target: Path | str, size: int, max_bytes: int | None) -> None:
    """Refuse a write whose resulting file (*size* bytes) the reader would refuse as too large.

    Called before the first byte is written; *max_bytes* None is no limit
    (a file no loader with a limit reads: the check cache, a check report).
    """
    if max_bytes == STORE_LIMIT:
        max_bytes = reading.limit_for(target)
    if max_bytes is None or reading.over_limit(Path(target), size, max_bytes=max_bytes) is None:
        return
    raise WriteRefused(
        target, f"would be {size} bytes, over the reader's limit of {max_bytes} bytes; nothing was written"
    )


# ------------------------------------------------------------------------ locks


def lock_path_for(resource: Path) -> Path:
    """The lock file protecting *resource* (see :func:`okstra_core.layout.lock_path`); its folder is made here.

    The private lock folder must be a real folder inside the resource's folder:
    a symlink planted in its place is refused, so no lock file is made elsewhere.
    """
    refuse_if_read_only(resource)
    path = lock_path(resource)
    folder = path.parent
    try:
        os.mkdir(folder)
    except FileExistsError:
        pass
    except OSError as exc:
        raise WriteFailed(folder, f"cannot create the lock folder: {exc.strerror or exc}") from None
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode):
        raise WriteRefused(folder, "the private lock folder is not a folder (a symlink or a file stands there)")
    return path


@contextmanager
def locked(resource: Path, timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the lock of *resource*; a clear :class:`LockTimeout` when it expires."""
    import filelock  # here, not at import: reading the store (the workbench's first paint) takes no lock

    lock = filelock.FileLock(str(lock_path_for(resource)), timeout=timeout)
    try:
        lock.acquire()
    except filelock.Timeout as exc:
        raise LockTimeout(resource, f"lock not acquired within {timeout:g}s (held by another writer?)") from exc
    try:
        yield
    finally:
        lock.release()


# ------------------------------------------------------------------- primitives


def create_only(root: Path, target: Path | str, data: bytes, *, max_bytes: int | None = STORE_LIMIT) -> Outcome:
    """Create *target* with *data*; identical existing bytes succeed, different bytes are refused.

    *data* over *max_bytes* (the reader's limit) is refused before anything is written.
    """
    refuse_if_read_only(target)
    _refuse_over_limit(target, len(data), max_bytes)
    final = _writing(resolve_target(root, target))
    ensure_dir(root, final.parent)
    with _io_failure(target, "create"):
        return _create_only(final, target, data)


def _create_only(final: Path, target: Path | str, data: bytes) -> Outcome:
    existing = _read_regular(final)
    if existing is not None:
        if existing == data:
            return Outcome.IDENTICAL
        raise WriteRefused(target, "exists with different content; create-only files are never overwritten")
    tmp = _temp_beside(final, data)
    try:
        try:
            os.link(tmp, final, follow_symlinks=False)
        except FileExistsError:
            existing = _read_regular(final)
            if existing == data:
                return Outcome.IDENTICAL
            raise WriteRefused(target, "was created concurrently with different content") from None
    finally:
        _unlink_quiet(tmp)
    _fsync_dir(final.parent)
    return Outcome.CREATED


def create_only_json(root: Path, target: Path | str, value: Any) -> Outcome:
    """:func:`create_only` of a JSON value in the store's stable pretty form."""
    return create_only(root, target, pretty_json(value))


def jsonl_line(record: Any) -> bytes:
    """One JSONL line: compact JSON, non-ASCII kept, newline-terminated."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def append_jsonl(
    root: Path,
    target: Path | str,
    record: Any,
    *,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    max_bytes: int | None = STORE_LIMIT,
) -> Outcome:
    """Append one record as one whole line, under the file's lock.

    An append that would make the file larger than *max_bytes* (the reader's
    limit; the size after cutting a torn tail, plus the line) is refused and
    the file is left exactly as it was.
    """
    refuse_if_read_only(target)
    line = jsonl_line(record)
    _refuse_over_limit(target, len(line), max_bytes)
    final = _writing(resolve_target(root, target))
    ensure_dir(root, final.parent)
    with locked(final, timeout), _io_failure(target, "append"):
        final = resolve_target(root, target)
        created = not final.exists()
        fd = os.open(final, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, CREATE_MODE)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise WriteRefused(target, "target exists and is not a regular file")
            if st.st_nlink > 1:
                # Appending (or cutting a torn tail) would change the other names' file too, maybe outside the root.
                raise WriteRefused(target, f"target has {st.st_nlink} hard links; an append never writes through one")
            size = keep = st.st_size
            if size:
                keep = _torn_tail_end(fd, size)
            _refuse_over_limit(target, keep + len(line), max_bytes)
            if keep != size:
                os.ftruncate(fd, keep)
                size = keep
            try:
                _write_all(fd, line)
                _fsync(fd)
            except BaseException:
                # All or nothing: a failed append leaves the file as it was (never a torn or unsynced line).
                with suppress(OSError):
                    os.ftruncate(fd, size)
                raise
        finally:
            os.close(fd)
        if created:
            _fsync_dir(final.parent)
    return Outcome.APPENDED


def _torn_tail_end(fd: int, size: int) -> int:
    """Where a trailing fragment without a newline (a crashed append, never a record) starts: the size to keep."""
    last = os.pread(fd, 1, size - 1)
    if last == b"\n":
        return size
    keep = 0
    offset = size
    while offset > 0:
        start = max(0, offset - 65536)
        block = os.pread(fd, offset - start, start)
        idx = block.rfind(b"\n")
        if idx >= 0:
            keep = start + idx + 1
            break
        offset = start
    return keep


def replace_locked(
    root: Path,
    target: Path | str,
    update: Callable[[bytes | None], bytes | None],
    *,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    max_bytes: int | None = STORE_LIMIT,
) -> Outcome:
    """Locked read-modify-replace.

    *update* receives the current bytes (None when the file is missing) and
    returns the new bytes, or None to leave the file as it is. It may raise to
    refuse; nothing is written then. New bytes over *max_bytes* (the reader's
    limit) are refused the same way.
    """
    refuse_if_read_only(target)
    final = _writing(resolve_target(root, target))
    ensure_dir(root, final.parent)
    with locked(final, timeout), _io_failure(target, "replace"):
        final = resolve_target(root, target)
        current = _read_regular(final)
        new = update(current)
        if new is None or new == current:
            return Outcome.UNCHANGED
        _refuse_over_limit(target, len(new), max_bytes)
        _publish(final, new)
    return Outcome.REPLACED


def replace_keeping(
    root: Path,
    target: Path | str,
    data: bytes,
    keep_as: Callable[[], Path | str],
    *,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    max_bytes: int | None = STORE_LIMIT,
) -> tuple[Outcome, Path | None]:
    """Publish *data* at *target*; a different current file keeps its bytes under the name ``keep_as()``.

    Order, under the target's lock: the new content is written completely to a
    temp file and fsynced; the current file gets its second name (a hard link,
    create-only); then the temp file replaces the target in one ``rename``. On
    any failure before that rename the live file is still the old one and the
    second name is removed again, so a failure never loses the live file.
    Identical bytes are :attr:`Outcome.IDENTICAL`. Returns what happened and the
    kept copy's path (None when nothing was kept). *data* over *max_bytes* (the
    reader's limit) is refused before anything is written.
    """
    refuse_if_read_only(target)
    _refuse_over_limit(target, len(data), max_bytes)
    final = _writing(resolve_target(root, target))
    ensure_dir(root, final.parent)
    with locked(final, timeout), _io_failure(target, "replace"):
        final = resolve_target(root, target)
        current = _read_regular(final)
        if current == data:
            return Outcome.IDENTICAL, None
        tmp = _temp_beside(final, data)
        kept: Path | None = None
        linked = False
        try:
            if current is not None:
                keep_target = keep_as()
                kept = resolve_target(root, keep_target)
                linked = _keep_copy(final, kept, current, keep_target)
            os.replace(tmp, final)
        except BaseException:
            _unlink_quiet(tmp)
            if linked and kept is not None:
                _unlink_quiet(kept)
            raise
        _fsync_dir(final.parent)
    return (Outcome.REPLACED if current is not None else Outcome.CREATED), (Path(kept) if kept is not None else None)


def _keep_copy(final: Path, kept: Path, current: bytes, keep_target: Path | str) -> bool:
    """Give *final* its second name *kept*; True when this call made the link.

    A kept copy already holding exactly *current* is the trace of an earlier
    replace that stopped between the link and the rename (a crash or a kill):
    it is the copy this call would make, so it is reused. Any other file under
    that name is refused; a kept copy is never overwritten.
    """
    try:
        os.link(final, kept, follow_symlinks=False)
    except FileExistsError:
        # Only a file of the same size can hold *current*: a larger one (maybe huge) is never read.
        if _regular_size(kept) == len(current) and _read_regular(kept) == current:
            return False
        raise WriteRefused(keep_target, "exists already; a kept copy is never overwritten") from None
    _fsync_dir(kept.parent)
    return True


def move_no_overwrite(root: Path, source: Path, target: Path | str) -> Outcome:
    """Give *source* the name *target* without ever replacing an existing file.

    Identical bytes already at *target* count as done and the source is removed.
    A move makes no new bytes, so the size limit of the other writes does not
    apply: a file the reader refuses stays one under its new name.
    """
    refuse_if_read_only(target)
    src = _writing(resolve_target(root, source))
    final = _writing(resolve_target(root, target))
    ensure_dir(root, final.parent)
    with _io_failure(target, "move"):
        return _move_no_overwrite(src, final, target)


def _move_no_overwrite(src: Path, final: Path, target: Path | str) -> Outcome:
    try:
        os.link(src, final, follow_symlinks=False)
    except FileExistsError:
        if _read_regular(final) == _read_regular(src):
            os.unlink(src)
            _fsync_dir(src.parent)
            return Outcome.IDENTICAL
        raise WriteRefused(target, "exists with different content; a move never overwrites") from None
    _fsync_dir(final.parent)
    os.unlink(src)
    _fsync_dir(src.parent)
    return Outcome.MOVED


def remove_archived(root: Path, target: Path | str, archive: Path | str) -> Outcome:
    """Remove *target* only while *archive* still holds its exact bytes (a byte-for-byte copy).

    This is how replaced state leaves its place: never without a matching archive.
    """
    refuse_if_read_only(target)
    final = _writing(resolve_target(root, target))
    saved = resolve_target(root, archive)
    with locked(final), _io_failure(target, "remove"):
        current = _read_regular(final)
        if current is None:
            return Outcome.UNCHANGED
        if _read_regular(saved) != current:
            raise WriteRefused(archive, "archive does not match the original bytes; refusing to remove the original")
        os.unlink(final)
        _fsync_dir(final.parent)
    return Outcome.REPLACED
