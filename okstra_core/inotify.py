"""File events on Linux from inotify itself: one watch per folder, added as folders appear, nothing polled.

:class:`FolderEvents` keeps one inotify instance for a tree of folders. A
folder is watched before it is listed, so a folder made in it after the
listing is told by an event and one made before is in the listing: nothing
falls between the two. A folder made or moved into a watched one is watched
with everything below it as soon as its event is read; a folder moved out
loses its watches (they would follow it elsewhere). Symlinks are never
followed (``IN_DONT_FOLLOW``, and the listing takes entry types without
following them).

A thread reading the events blocks in ``poll`` on the inotify descriptor and on
a pipe :meth:`FolderEvents.wake` writes to: while nothing changes it never
runs. Each watch costs one entry in a table of descriptors to paths; the
kernel's own share is counted against the user's ``fs.inotify.max_user_watches``,
and a watch refused for that reason is an :class:`OSError` with ``ENOSPC``
(the caller polls instead). A folder that is gone or unreadable by the time it is
watched is skipped (its parent's event, or the listing, told of it).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import select
import struct
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import ctypes

IN_MODIFY: Final = 0x00000002
IN_ATTRIB: Final = 0x00000004
IN_CLOSE_WRITE: Final = 0x00000008
IN_MOVED_FROM: Final = 0x00000040
IN_MOVED_TO: Final = 0x00000080
IN_CREATE: Final = 0x00000100
IN_DELETE: Final = 0x00000200
IN_DELETE_SELF: Final = 0x00000400
IN_MOVE_SELF: Final = 0x00000800
IN_Q_OVERFLOW: Final = 0x00004000
IN_IGNORED: Final = 0x00008000
IN_ONLYDIR: Final = 0x01000000
IN_DONT_FOLLOW: Final = 0x02000000
IN_EXCL_UNLINK: Final = 0x04000000
IN_ISDIR: Final = 0x40000000

#: What each folder's watch asks to be told: every change of an entry in it, and the folder itself going.
MASK: Final = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
    | IN_EXCL_UNLINK
)

#: ``struct inotify_event`` without its name: watch descriptor, mask, cookie, length of the name.
_HEADER: Final = struct.Struct("iIII")
#: Bytes read from the descriptor at a time (many events each).
_READ_BYTES: Final = 1 << 16
#: The parent of a top folder (one watched without its parent).
_TOP: Final = -1
#: Errors of a folder that cannot be watched because it is gone, no folder, or not readable: skipped.
_SKIPPED: Final = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.ELOOP})


@functools.cache
def _inotify() -> ctypes.CDLL | None:
    """The C library with its three inotify calls typed (None where there are none: not Linux)."""
    from .libc import libc

    loaded = libc()
    if loaded is None:
        return None
    import ctypes

    try:
        loaded.inotify_init1.argtypes = [ctypes.c_int]
        loaded.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        loaded.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    except AttributeError:
        return None
    return loaded


def available() -> bool:
    """Whether inotify can be used here (Linux, with a C library that has it)."""
    return _inotify() is not None


@dataclass
class Batch:
    """What one read of the events told (the folders made are watched already, those moved out no longer)."""

    #: Every path an event named: an entry of a watched folder, or the folder itself.
    paths: set[str] = field(default_factory=set)
    #: Folders made or moved into a watched folder, now watched with what they hold.
    made: list[str] = field(default_factory=list)
    #: Folders moved out of a watched folder, no longer watched (their watches would follow them elsewhere).
    moved_out: list[str] = field(default_factory=list)
    #: The kernel dropped events (its queue overflowed): anything may have changed.
    overflow: bool = False
    #: :meth:`FolderEvents.wake` was called.
    woken: bool = False
    #: A folder made could not be watched (``ENOSPC``: the user's watch limit is reached): what is in it is
    #: not told from now on.
    refused: OSError | None = None


class FolderEvents:
    """One inotify instance watching folders (never through a symlink); see the module doc.

    Each watch is kept as its folder's parent watch and name (a top: no parent, its whole path), the names
    interned: the tree's folders share their parents' paths and their common names, about half the memory of
    a path each. A path is put together when an event names it.
    """

    def __init__(self) -> None:
        import ctypes

        libc = _inotify()
        if libc is None:
            raise OSError(errno.ENOSYS, "inotify is not available here")
        self._libc: Any = libc
        self._errno = ctypes.get_errno
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        self._fd = fd
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        #: Each watch's folder, by watch descriptor: (parent's descriptor, name), or (_TOP, path) for a top.
        self._folders: dict[int, tuple[int, str]] = {}
        #: Guards the descriptors against a :meth:`wake` from another thread once :meth:`close` let them go.
        self._closing = threading.Lock()
        self._closed = False
        self._poller = select.poll()
        self._poller.register(self._fd, select.POLLIN)
        self._poller.register(self._wake_read, select.POLLIN)

    def __len__(self) -> int:
        return len(self._folders)

    def add_tree(self, top: str) -> None:
        """Watch *top* and every folder below it (each watched before it is listed). Raises :class:`OSError`
        when a watch is refused for another reason than the folder being gone or unreadable: ``ENOSPC`` once
        the user's watch limit is reached."""
        self._add_tree(_TOP, top, top)

    def _add_tree(self, parent: int, name: str, path: str) -> None:
        pending = [(parent, name, path)]
        intern = sys.intern
        while pending:
            parent, name, path = pending.pop()
            wd = self._add(path)
            if wd is None:
                continue
            self._folders[wd] = (parent, name)  # a folder watched again keeps its descriptor: placed anew
            try:
                with os.scandir(path) as entries:
                    pending.extend((wd, intern(e.name), e.path) for e in entries if e.is_dir(follow_symlinks=False))
            except OSError:
                continue

    def _add(self, folder: str) -> int | None:
        wd: int = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), MASK)
        if wd < 0:
            code = self._errno()
            if code in _SKIPPED:
                return None
            raise OSError(code, os.strerror(code), folder)
        return wd

    def path_of(self, wd: int) -> str | None:
        """The folder watched by *wd* (None: not watched, or below a folder no longer watched)."""
        parts = []
        folders = self._folders
        while wd != _TOP:
            entry = folders.get(wd)
            if entry is None:
                return None
            wd, name = entry
            parts.append(name)
        return os.sep.join(reversed(parts))

    def _forget(self, top: int) -> None:
        children: dict[int, list[int]] = {}
        for wd, (parent, _name) in self._folders.items():
            children.setdefault(parent, []).append(wd)
        pending = [top]
        while pending:
            wd = pending.pop()
            pending.extend(children.get(wd, ()))
            if self._folders.pop(wd, None) is not None:
                self._libc.inotify_rm_watch(self._fd, wd)

    def read(self, timeout: float | None) -> Batch | None:
        """The events that came within *timeout* seconds (None: for ever), all that are waiting once the first
        came; None when none came."""
        ready = self._poller.poll(None if timeout is None else max(0, int(timeout * 1000)))
        if not ready:
            return None
        batch = Batch()
        if any(fd == self._wake_read for fd, _ in ready):
            with contextlib.suppress(OSError):
                os.read(self._wake_read, 64)
            batch.woken = True
        while True:
            try:
                data = os.read(self._fd, _READ_BYTES)
            except BlockingIOError:
                break
            if not data:
                break
            self._parse(data, batch)
        return batch

    def _parse(self, data: bytes, batch: Batch) -> None:
        offset, size = 0, _HEADER.size
        while offset + size <= len(data):
            wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
            name = os.fsdecode(data[offset + size : offset + size + length].rstrip(b"\0"))
            offset += size + length
            if mask & IN_Q_OVERFLOW:
                batch.overflow = True
                continue
            folder = self.path_of(wd)
            if folder is None:
                continue
            if mask & IN_IGNORED:  # the folder is gone (or its watch was removed): the kernel dropped the watch
                del self._folders[wd]
                batch.paths.add(folder)
                continue
            path = os.path.join(folder, name) if name else folder
            batch.paths.add(path)
            if not mask & IN_ISDIR or not name:
                continue
            if mask & IN_MOVED_FROM:
                self._moved_out(wd, name)
                batch.moved_out.append(path)
            elif mask & (IN_CREATE | IN_MOVED_TO):
                batch.made.append(path)
                try:
                    self._add_tree(wd, sys.intern(name), path)
                except OSError as exc:
                    batch.refused = batch.refused or exc

    def _moved_out(self, parent: int, name: str) -> None:
        for wd, entry in self._folders.items():
            if entry == (parent, name):
                self._forget(wd)
                return

    def wake(self) -> None:
        """Make a :meth:`read` in progress (in another thread) return at once; nothing once closed (the pipe's
        number may belong to another file by then)."""
        with self._closing:
            if self._closed:
                return
            with contextlib.suppress(OSError):
                os.write(self._wake_write, b"\0")

    def close(self) -> None:
        """Drop every watch (call it from the thread that reads, once it has stopped reading)."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
            for fd in (self._fd, self._wake_read, self._wake_write):
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._folders.clear()
