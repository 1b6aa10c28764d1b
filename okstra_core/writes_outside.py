"""Writes outside any store: the check cache, its key, the seen state, a report written with ``-o``.

These files are not the store's, so there is no authorised root and no read-only
guard (a read-only workbench still keeps its own caches); each is still whole or
absent, and a final symlink is never followed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from . import writes
from .errors import PathEscape, WriteRefused
from .layout import TEMP_PREFIX


def replace_file(target: Path, data: bytes, *, max_bytes: int | None = None) -> writes.Outcome:
    """Publish *data* at *target*, a file outside any store (a cache), whole or not at all.

    There is no authorised root: the folders above *target* are created and
    may be symlinks (a cache folder moved elsewhere), but the final component
    must be absent or a regular file; a symlink there is refused, never
    followed nor replaced. The content goes to a temp file beside the target
    (:data:`~okstra_core.layout.TEMP_PREFIX`), is fsynced and renamed over the
    target, so a reader sees the old file or the new one. There is no lock:
    concurrent writers each publish a whole file and the last one wins.
    No store loader reads such a file, so there is no size limit unless the
    caller's own reader has one (*max_bytes*).
    """
    writes._refuse_over_limit(target, len(data), max_bytes)
    final = Path(os.path.abspath(target))
    if final.name in ("", ".", ".."):
        raise WriteRefused(target, "target does not name a file")
    with writes._io_failure(target, "replace"):
        try:
            os.makedirs(final.parent, exist_ok=True)
        except FileExistsError:
            raise WriteRefused(final.parent, "a file stands where a folder is needed") from None
        final = Path(os.path.realpath(final.parent)) / final.name
        try:
            st = os.lstat(final)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise PathEscape(target, "target is a symlink; writes never follow one")
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise WriteRefused(target, "target exists and is not a regular file")
        writes._publish(final, data)
    return writes.Outcome.REPLACED if st is not None else writes.Outcome.CREATED


#: Mode of a private file (a secret key): its owner's only, whatever the umask.
PRIVATE_MODE = 0o600
#: Mode of the folders made above a private file.
PRIVATE_DIR_MODE = 0o700


def create_private(target: Path, data: bytes) -> writes.Outcome:
    """Create *target*, outside any store, readable and writable by its owner only (the check cache's key).

    Missing folders above it are made with mode 0700 (existing ones are left
    as they are). The content goes to a temp file of mode 0600 beside the
    target and is published with ``link()``: a reader never sees a partial
    file, and of two concurrent creators the first wins (the other gets a
    refusal and reads the winner's file). Identical existing bytes are a
    success; a symlink in the final component is never followed.
    """
    final = Path(os.path.abspath(target))
    if final.name in ("", ".", ".."):
        raise WriteRefused(target, "target does not name a file")
    with writes._io_failure(target, "create"):
        try:
            os.makedirs(final.parent, mode=PRIVATE_DIR_MODE, exist_ok=True)
        except FileExistsError:
            raise WriteRefused(final.parent, "a file stands where a folder is needed") from None
        final = Path(os.path.realpath(final.parent)) / final.name
        existing = writes._read_regular(final)
        if existing is not None:
            if existing == data:
                return writes.Outcome.IDENTICAL
            raise WriteRefused(target, "exists with different content")
        name = Path(final.parent, f"{TEMP_PREFIX}{final.name}.{secrets.token_hex(6)}")
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, PRIVATE_MODE)
        try:
            try:
                writes._write_all(fd, data)
            finally:
                os.close(fd)
        except BaseException:
            writes._unlink_quiet(name)
            raise
        if not link_in_place(name, final):
            raise WriteRefused(target, "was created concurrently")
    return writes.Outcome.CREATED


def link_in_place(built: Path, target: Path) -> bool:
    """Put *built*, a whole file made beside *target* (outside any store), in place at *target*: synced, then
    linked, so that a reader sees no file or the whole one. False, and nothing put in place, when a file is at
    *target* already (another writer was first: it is never replaced). *built* is removed either way; a symlink
    at *target* is never followed.

    On a file system without hard links the file is renamed into place when nothing is there, which leaves a
    moment in which a file made by another writer could be replaced."""
    try:
        fd = os.open(built, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            writes._fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(built, target, follow_symlinks=False)
        except FileExistsError:
            return False
        except OSError:  # no hard links here
            if os.path.lexists(target):
                return False
            os.replace(built, target)
        writes._fsync_dir(target.parent)
        return True
    finally:
        writes._unlink_quiet(built)


def append_lines(target: Path, data: bytes, *, max_bytes: int | None = None, mode: int = 0o644) -> writes.Outcome:
    """Append *data* (whole newline-terminated lines) to *target*, a file outside any store; the caller holds
    the file's lock.

    As :func:`okstra_core.writes.append_jsonl` does in a store: a trailing fragment without a newline (a
    crashed append) is cut first, the lines land whole or not at all, a symlink or a hard-linked file is never
    written through, and an append that would pass *max_bytes* is refused with the file left as it was.
    """
    if not data.endswith(b"\n"):
        raise WriteRefused(target, "an append must end with a newline")
    final = Path(os.path.abspath(target))
    with writes._io_failure(target, "append"):
        try:
            os.makedirs(final.parent, exist_ok=True)
        except FileExistsError:
            raise WriteRefused(final.parent, "a file stands where a folder is needed") from None
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            fd = os.open(final, flags, mode)
        except OSError:
            if os.path.islink(final):
                raise PathEscape(target, "target is a symlink; writes never follow one") from None
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise WriteRefused(target, "target exists and is not a regular file")
            if st.st_nlink > 1:
                raise WriteRefused(target, f"target has {st.st_nlink} hard links; an append never writes through one")
            size = keep = st.st_size
            if size:
                keep = writes._torn_tail_end(fd, size)
            writes._refuse_over_limit(target, keep + len(data), max_bytes)
            if keep != size:
                os.ftruncate(fd, keep)
                size = keep
            try:
                writes._write_all(fd, data)
                writes._fsync(fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
        finally:
            os.close(fd)
    return writes.Outcome.APPENDED
