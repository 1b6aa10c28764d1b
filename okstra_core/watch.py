"""Change detection: the one owner of "has anything changed?" for the workbench and ``okstra inbox --watch``.

Two ways of looking:

* :func:`signature` / :func:`changed` compare the metadata (mtime, ctime,
  size, inode) of a list of paths between two looks. The workbench's views poll
  the few files and folders they show this way; it is exact for a handful of
  paths and costs one ``stat`` each.
* :class:`StoreWatcher` says when anything under a store folder may have
  changed. It uses the user's watchman daemon where it may, else the
  platform's file events (inotify itself on Linux, :mod:`okstra_core.inotify`;
  FSEvents, … through ``watchfiles`` elsewhere) when they are available and
  the folders to watch fit well within the system's watch limit, and otherwise
  polls a list of paths the caller names with :func:`signature`. Either way a burst of changes wakes the
  caller once (changes are coalesced: nothing but a flag is kept, so memory
  stays bounded whatever the flood), and the caller re-reads what it needs.

Events miss nothing a caller re-reads from scratch: whatever the events were,
the caller looks at the files as they are after the burst. A store folder
removed and made again (a rename away and back, a restore from a backup) is
noticed by its identity (device and inode), looked at once a second, and the
events are watched afresh.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import signal
import stat
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Final, Literal, overload

from . import inotify

#: A path modified this close to the moment it was looked at is looked at again at the next poll: a second
#: write within the same timestamp tick would give it the same mtime (and, same size, go unseen). Kernels
#: stamp files from a clock that moves in ticks of at most 10 ms.
RACY_NS = 50_000_000

#: The same for a file system whose timestamps are whole seconds (ext4 with small inodes, HFS+) or two (FAT),
#: recognised by an mtime that is a whole second.
RACY_WHOLE_SECONDS_NS = 2_000_000_000

#: What a path that cannot be looked at (missing, unreadable) is recorded as.
MISSING = (-1, -1, -1, -1)

#: What a path modified too recently to be trusted is recorded as: it differs from any real state.
UNSETTLED = (-2, -2, -2, -2)

Signature = dict[str, tuple[int, int, int, int]]

Mode = Literal["auto", "watchman", "events", "poll"]

#: Environment variable that forces a way of looking (``watchman``, ``events`` or ``poll``); unset or ``auto``
#: chooses.
MODE_ENV: Final = "OKSTRA_WATCH"

#: File events are used only while the folders to watch take at most this share of the system's watch limit,
#: so that an editor or another watcher of the same user keeps the rest.
WATCH_SHARE: Final = 0.5

#: Polling looks again only after this many times as long as one look took: at most 1 % of a core, shared by
#: every watcher polling in the process (a follower of twenty projects polls them all within it).
POLL_SHARE: Final = 0.01

#: The quick look at the few paths where changes usually show (``hot_paths``) takes at most 5 % of a core,
#: shared the same way.
HOT_SHARE: Final = 0.05


class _Pollers:
    """How many watchers poll in this process now: they share :data:`POLL_SHARE` and :data:`HOT_SHARE`."""

    lock = threading.Lock()
    count = 0


def _shared(share: float) -> float:
    """*share* of a core split between the watchers polling in this process."""
    return share / max(1, _Pollers.count)


#: More changed paths than this between two readings are not listed: the caller re-reads everything.
CHANGED_MAX: Final = 2000

#: Seconds between two looks of the file-event watcher at what it gathered (and whether to stop): a change is
#: reported about two of them after it settles. Each look costs a call into Python, so a process that watches
#: many stores at once (the workbench's follower of other projects) looks less often.
EVENTS_STEP: Final = 0.05

#: Seconds a watcher fed by watchman waits for the daemon's next word before it looks whether to stop.
WATCHMAN_STEP: Final = 1.0

#: Seconds a watcher waits after a failed attempt to subscribe again once the watchman daemon went away (the
#: first attempt is at once, which starts the daemon again); each failed attempt doubles the wait, up to
#: RESUBSCRIBE_MOST_SECONDS.
RESUBSCRIBE_SECONDS: Final = 2.0
RESUBSCRIBE_MOST_SECONDS: Final = 60.0

#: Where Linux says how many folders one user may watch.
INOTIFY_LIMIT_FILE: Final = Path("/proc/sys/fs/inotify/max_user_watches")


def racy(mtime_ns: int, now_ns: int) -> bool:
    """True when a write after a look taken at *now_ns* could leave *mtime_ns* as it is (same timestamp tick).

    An mtime ahead of the clock by more than the window (a file server's clock) is not held as racy forever.
    """
    window = RACY_WHOLE_SECONDS_NS if mtime_ns % 1_000_000_000 == 0 else RACY_NS
    return abs(now_ns - mtime_ns) < window


def signature(paths: Iterable[str | Path], clock: Callable[[], int] = time.time_ns) -> Signature:
    """mtime, ctime, size and inode of each path (folders change mtime when an entry is added, renamed or removed).

    The inode tells a file replaced by a rename from the one it replaced; a path
    modified right before the look (:func:`racy`) is recorded as :data:`UNSETTLED`,
    so that the next poll reloads once more, when a new write would show.
    """
    return {str(path): look_one(path, clock) for path in paths}


def look_one(path: str | Path, clock: Callable[[], int] = time.time_ns) -> tuple[int, int, int, int]:
    """One path's entry of :func:`signature`."""
    looked = clock()  # before the look: never later than the moment the kernel read the mtime
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return MISSING
    if racy(st.st_mtime_ns, looked):
        return UNSETTLED
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


#: A look at this many paths or more is shared with a forked process on a machine of several cores.
SPLIT_AT: Final = 8192


_INT64_MAX: Final = (1 << 63) - 1
_INT64_MIN: Final = -(1 << 63)
#: How many looks are packed at a time (:meth:`Looks.of`): a long list never exists as tuples all at once.
_PACK_STEP: Final = 4096


def _fitted(sig: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """*sig* within 64-bit signed numbers: an inode above that range as its two's complement (undone when read
    back, :func:`_unfitted`), a time beyond it at its end (the ctime, which no one sets, still tells a change)."""
    mtime, ctime, size, ino = sig
    return (
        min(max(mtime, _INT64_MIN), _INT64_MAX),
        min(max(ctime, _INT64_MIN), _INT64_MAX),
        min(size, _INT64_MAX),
        ino - (1 << 64) if ino > _INT64_MAX else ino,
    )


def _unfitted(mtime: int, ctime: int, size: int, ino: int) -> tuple[int, int, int, int]:
    # A negative inode of a path that was looked at (its size is not negative) was wrapped by _fitted.
    return (mtime, ctime, size, ino + (1 << 64) if ino < 0 <= size else ino)


class Looks(Sequence[tuple[int, int, int, int]]):
    """The metadata of many paths in order (:func:`look_one` each), packed as four 64-bit numbers a path: a warm
    answer holds and compares tens of thousands of looks without a Python object for each (two looks of a whole
    list compare as one ``memcmp``). Reads back as the tuples :func:`look_one` gives."""

    __slots__ = ("numbers",)

    def __init__(self, numbers: array[int] | None = None) -> None:
        self.numbers: array[int] = array("q") if numbers is None else numbers

    @classmethod
    def of(cls, sigs: Iterable[tuple[int, int, int, int]]) -> Looks:
        out = array("q")
        it = iter(sigs)
        while step := list(itertools.islice(it, _PACK_STEP)):
            try:
                part = array("q", itertools.chain.from_iterable(step))
            except OverflowError:
                part = array("q", itertools.chain.from_iterable(map(_fitted, step)))
            out += part
        return cls(out)

    def __len__(self) -> int:
        return len(self.numbers) // 4

    @overload
    def __getitem__(self, i: int) -> tuple[int, int, int, int]: ...

    @overload
    def __getitem__(self, i: slice) -> Looks: ...

    def __getitem__(self, i: int | slice) -> tuple[int, int, int, int] | Looks:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                return Looks.of(self[j] for j in range(start, stop, step))
            return Looks(self.numbers[4 * start : 4 * stop])
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        m, c, s, n = self.numbers[4 * i : 4 * i + 4]
        return _unfitted(m, c, s, n)

    def __iter__(self) -> Iterator[tuple[int, int, int, int]]:
        numbers = iter(self.numbers)
        return map(_unfitted, numbers, numbers, numbers, numbers)

    def __contains__(self, sig: object) -> bool:
        if not (isinstance(sig, tuple) and len(sig) == 4 and all(isinstance(n, int) for n in sig)):
            return False
        wanted = array("q", _fitted(sig))
        numbers = self.numbers
        if wanted[0] not in numbers:  # no path has this mtime: no loop in Python
            return False
        return any(numbers[i : i + 4] == wanted for i in range(0, len(numbers), 4) if numbers[i] == wanted[0])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Looks):
            return self.numbers == other.numbers
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and self.numbers == Looks.of(other).numbers
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Looks) -> Looks:
        return Looks(self.numbers + other.numbers)

    def differing(self, other: Looks) -> Iterator[int]:
        """The places where *other* (as long as this) holds other metadata, found block by block (a look that
        differs in a few paths of tens of thousands compares the rest as whole blocks)."""
        mine, theirs = self.numbers, other.numbers
        block = 4 * 256
        for start in range(0, len(mine), block):
            if mine[start : start + block] != theirs[start : start + block]:
                end = min(start + block, len(mine))
                yield from (i // 4 for i in range(start, end, 4) if mine[i : i + 4] != theirs[i : i + 4])

    def to_bytes(self) -> bytes:
        """The numbers as little-endian bytes, whatever this machine's order (:meth:`from_bytes`)."""
        if sys.byteorder == "little":
            return self.numbers.tobytes()
        swapped = array("q", self.numbers)
        swapped.byteswap()
        return swapped.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> Looks | None:
        """What :meth:`to_bytes` gave (None when *data* is no whole number of looks)."""
        if len(data) % 32:
            return None
        numbers = array("q")
        numbers.frombytes(data)
        if sys.byteorder != "little":
            numbers.byteswap()
        return cls(numbers)


def look_many(paths: list[str]) -> Looks:
    """:func:`look_one` of each of *paths*, in order. A long list is split with a forked process where that is
    safe (a machine of several cores, a process of one thread: forking one that runs others may copy a lock
    held by another thread); the looks are syscalls that one interpreter makes one at a time, so two processes
    take about half as long. Anything that goes wrong in the forked half is looked at here."""
    if len(paths) < SPLIT_AT or not _may_fork():
        return Looks.of(map(look_one, paths))
    half = len(paths) // 2
    theirs = _forked_looks(paths[half:])
    mine = Looks.of(map(look_one, paths[:half]))
    looked = theirs()
    if looked is None or len(looked) != len(paths) - half:
        looked = Looks.of(map(look_one, paths[half:]))
    return mine + (looked if isinstance(looked, Looks) else Looks.of(looked))


def may_fork() -> bool:
    """Whether work may be shared with a forked process here: a machine of several cores, and a process of one
    thread (forking one that runs others may copy a lock held by another thread)."""
    return _may_fork()


def _may_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1 and len(_cores()) > 1


def _cores() -> set[int] | range:
    try:
        return os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return range(os.cpu_count() or 1)


class Forked:
    """*work* run in a forked process, its bytes read back through a pipe: :meth:`answer` waits for them (None
    when the process could not be started or read; what it wrote, maybe nothing, when *work* failed), and
    :meth:`stop` ends the process unheard. The forked process runs *work* only and leaves (``os._exit``): it
    never returns into the caller's code, flushes none of its buffers and closes none of its files."""

    def __init__(self, work: Callable[[], bytes]) -> None:
        self._pid = 0
        self._readable = -1
        try:
            readable, writable = os.pipe()
        except OSError:
            return
        try:
            pid = os.fork()
        except OSError:
            os.close(readable)
            os.close(writable)
            return
        if pid == 0:  # pragma: no cover - the forked process ends here
            try:
                os.close(readable)
                data = memoryview(work())
                while data:
                    data = data[os.write(writable, data) :]
            finally:
                os._exit(0)
        os.close(writable)
        self._pid, self._readable = pid, readable

    def answer(self) -> bytes | None:
        """The bytes *work* gave (None when the process could not be started or read); the process is waited
        for."""
        if not self._pid:
            return None
        chunks: list[bytes] = []
        try:
            while chunk := os.read(self._readable, 1 << 20):
                chunks.append(chunk)
        except OSError:
            return None
        finally:
            self._reap()
        return b"".join(chunks)

    def stop(self) -> None:
        """End the process without waiting for its answer."""
        if self._pid:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
            self._reap()

    def _reap(self) -> None:
        os.close(self._readable)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self._pid, 0)
        self._pid = 0


def _forked_looks(paths: list[str]) -> Callable[[], Looks | None]:
    """Start looking at *paths* in a forked process; the callable returned waits for its answer (None when
    there is none: the fork failed, the process died)."""
    forked = Forked(lambda: Looks.of(map(look_one, paths)).to_bytes())

    def answer() -> Looks | None:
        data = forked.answer()
        return None if data is None else Looks.from_bytes(data)

    return answer


def changed(old: Signature, new: Signature) -> bool:
    """True when a path seen before has changed or was unsettled; paths newly in view are only remembered."""
    return any(key in old and (old[key] != value or value == UNSETTLED) for key, value in new.items())


def differs(old: Signature, new: Signature) -> bool:
    """True when the two looks disagree in any path, including paths that appeared or went away."""
    return old.keys() != new.keys() or changed(old, new)


def folders(root: Path, stop_at: int) -> list[str]:
    """The folders *root* holds, itself included, listing no more than *stop_at* of them (see :func:`_walk`)."""
    return list(itertools.islice(_walk(root), stop_at))


def folder_count(root: Path, stop_at: int) -> int:
    """How many folders *root* holds, itself included, counting no further than *stop_at* (see :func:`_walk`);
    none of them is kept (a large store has hundreds of thousands)."""
    return sum(1 for _ in itertools.islice(_walk(root), stop_at))


def _walk(root: Path) -> Iterator[str]:
    """The folders *root* holds, itself included, each listed only once the next is asked for.

    Entry types come from the listing (no ``stat`` per entry); symlinks are never followed, so a link to a
    folder above the store (a loop) or to ``/`` adds nothing.
    """
    pending = [str(root)]
    while pending:
        folder = pending.pop()
        yield folder
        try:
            with os.scandir(folder) as entries:
                pending.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
        except OSError:
            continue


def watch_limit() -> int | None:
    """How many folders this user may watch with file events (None where the system sets no readable limit)."""
    try:
        return int(INOTIFY_LIMIT_FILE.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def events_available() -> bool:
    """True when file events can be had here: inotify (Linux), or ``watchfiles`` imports."""
    if inotify.available():
        return True
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return False
    return True


def choose_mode(
    root: Path, requested: Mode = "auto", *, use_watchman: bool = True
) -> tuple[Literal["watchman", "events", "poll"], str]:
    """The way to look at *root* and why (one short phrase, for ``--watch``'s first line and the docs).

    ``OKSTRA_WATCH`` (``watchman``, ``events`` or ``poll``) overrides *requested* ``auto``. ``auto`` takes the
    user's watchman daemon where the watchman setting allows it and it is installed (the watches are the
    daemon's, shared with every process that asks), else this process's own file events, else polling;
    *use_watchman* False leaves watchman out (it could not be reached).
    """
    from . import watchman

    env = os.environ.get(MODE_ENV, "").strip().lower()
    if requested == "auto" and env in ("watchman", "events", "poll"):
        requested = env  # type: ignore[assignment]
    if requested == "poll":
        return "poll", "polling (asked for)"
    if requested == "watchman" and use_watchman:
        return "watchman", "watchman (asked for)"
    if requested == "auto" and use_watchman and watchman.setting() != "off" and watchman.installed():
        return "watchman", "watchman"
    if not events_available():
        return "poll", "polling (file events unavailable)"
    if requested in ("events", "watchman"):
        return "events", "file events (asked for)" if requested == "events" else "file events"
    limit = watch_limit() if sys.platform.startswith("linux") else None
    if limit is not None:
        budget = int(limit * WATCH_SHARE)
        if folder_count(root, budget + 1) > budget:
            return "poll", (
                f"polling (more folders than half the system's watch limit of {limit}; "
                "raise fs.inotify.max_user_watches for immediate notices)"
            )
    return "events", "file events"


class StoreWatcher:
    """Wakes its caller when something under *root* may have changed.

    *poll_paths* names what to look at when polling (called afresh at every
    poll, so that new folders join); file events watch every folder of *root*
    (never through a symlink).
    :meth:`wait` returns True after a change (a burst of changes counts once,
    once it has been quiet for *settle* seconds or has lasted *poll_seconds*),
    False on timeout or after :meth:`close`; :meth:`take_changed` then says
    which paths changed (at most :data:`CHANGED_MAX`; more, or a store folder
    replaced, is "everything"), so that a caller can re-read only what they touch.

    Polling a large store in full is kept to :data:`POLL_SHARE` of a core (shared
    by every watcher polling in the process), so it comes round rarely (every few
    minutes at 10,000 tasks). *hot_paths*, when
    given, names the few paths where changes usually show first (a task folder,
    in which okstra publishes the task's manifest by a rename): they are looked
    at far more often, within :data:`HOT_SHARE` of a core, and the full look
    still catches everything else. *told*, when given, is asked at each full
    look (and once at the start, when what it names is reported by the first
    :meth:`wait`) which paths changed since it was last asked (None: it cannot
    say which), for what *poll_paths* leaves to it: a store index that knows
    what it read and when (:class:`okstra_core.workflows.inbox.InboxTold`)
    says so without a baseline of every path here.
    """

    def __init__(
        self,
        root: Path,
        poll_paths: Callable[[], Sequence[str | Path]],
        *,
        hot_paths: Callable[[], Sequence[str | Path]] | None = None,
        told: Callable[[], AbstractSet[str] | None] | None = None,
        mode: Mode = "auto",
        poll_seconds: float = 1.0,
        settle: float = 0.2,
        step: float = EVENTS_STEP,
    ) -> None:
        self.root = root
        #: Seconds between two looks at what the file events brought (each wakes the interpreter: a longer step
        #: costs less while nothing happens, and a change shows later by as much).
        self.step = step
        self.poll_paths = poll_paths
        self.hot_paths = hot_paths
        self.told = told
        self.poll_seconds = poll_seconds
        #: Seconds between two polls: *poll_seconds*, longer when one poll costs more than POLL_SHARE of that.
        self.poll_interval = poll_seconds
        #: Seconds between two quick looks at *hot_paths*, longer when one costs more than HOT_SHARE of that.
        self.hot_interval = poll_seconds
        self._hot_baseline: Signature = {}
        #: The paths the quick looks saw change since the last full look, with what they saw: *told* names them
        #: again at the next full look (the store index recorded them before), which reports them only if they
        #: changed once more.
        self._hot_seen: Signature = {}
        self._full_due = self._hot_due = 0.0
        self.settle = settle
        self.mode, self.why = choose_mode(root, mode)
        self._dirty = threading.Event()
        #: Paths changed since the caller last took them; None once more than CHANGED_MAX (or unknown).
        self._changed: set[str] | None = set()
        self._changed_lock = threading.Lock()
        self._stop = threading.Event()
        self._identity = _identity(root)
        self._events_thread: threading.Thread | None = None
        self._events_stop: threading.Event | None = None
        #: Makes the events thread's blocking read return (inotify's): set with the thread.
        self._events_wake: Callable[[], None] | None = None
        #: Counted among the process's polling watchers (:class:`_Pollers`).
        self._polling = False
        self._baseline: Signature = {}
        #: Set once file events are watched (the folders are listed and a watch is on each).
        self._ready = threading.Event()
        #: Set once the looks of the start are done: at once with file events or watchman; polling, after the first
        #: full look (due a poll after the start's own, so that a change made while *told* first answered shows
        #: within a poll), which on a large store asks *told* of hundreds of thousands of paths a second time.
        self.looked = threading.Event()
        if self.mode == "watchman":
            self._start_watchman(mode)
        if self.mode == "events":
            self._start_events()
            # A change made once this returns is seen: the caller reads after it (a large store takes longer).
            self._ready.wait(READY_SECONDS)
        elif self.mode == "poll":
            self._start_polling()
        if self.mode != "poll":
            self.looked.set()

    def _start_polling(self) -> None:
        if not self._polling:
            self._polling = True
            with _Pollers.lock:
                _Pollers.count += 1
        started = time.thread_time()
        self._baseline = signature(self.poll_paths())
        # The first full look is due after what this look cost, not *told*'s first answer: that may make the
        # store index (once, seconds on a large store), and a change made meanwhile would wait a hundred times
        # as long to be seen. The next full looks are spaced by what they cost, *told* included.
        self.poll_interval = max(self.poll_seconds, (time.thread_time() - started) / _shared(POLL_SHARE))
        if self.told is not None:
            # What it names already changed since the store index recorded it (by another reader, before this
            # watcher): a reader that read before then may show the past, so the first wait reports it.
            first = self.told()
            if first is None or first:
                self._note_changed(first)
                self._dirty.set()
        self._full_due = time.monotonic() + self.poll_interval
        if self.hot_paths is not None:
            self._hot_look()

    def _start_watchman(self, requested: Mode) -> None:
        """Subscribe to the daemon's changes of the store; where it cannot be reached, fall back to this process's
        own way of looking (file events or polling) and say why."""
        from . import watchman

        try:
            sub = watchman.Subscription(self.root.parent, WATCHMAN_STEP)
        except watchman.Unusable as exc:
            self.mode, why = choose_mode(self.root, "auto", use_watchman=False)
            self.why = f"{why}; watchman: {exc}"
            return
        stop = threading.Event()
        thread = threading.Thread(target=self._watch_watchman, args=(sub, stop), name="okstra-watchman", daemon=True)
        self._events_stop, self._events_thread = stop, thread
        thread.start()
        self._ready.set()

    def _watch_watchman(self, sub: object, stop: threading.Event) -> None:
        """Hand on what the daemon says changed until the end; when it goes away, everything may have changed:
        subscribe again at once (which starts it again), and while that fails after :data:`RESUBSCRIBE_SECONDS`,
        then less and less often; once subscribed, what changed meanwhile is everything again."""
        from . import watchman

        current: watchman.Subscription | None = sub  # type: ignore[assignment]
        pause = RESUBSCRIBE_SECONDS
        try:
            while not stop.is_set():
                if current is None:
                    try:
                        current = watchman.Subscription(self.root.parent, WATCHMAN_STEP, start=True)
                    except watchman.Unusable:
                        stop.wait(pause)
                        pause = min(pause * 2, RESUBSCRIBE_MOST_SECONDS)  # a root gone for good is not asked for often
                        continue
                    pause = RESUBSCRIBE_SECONDS
                    self._note_changed(None)
                    self._dirty.set()
                try:
                    said, paths = current.take()
                except watchman.Unusable:
                    current.close()
                    current = None
                    said, paths = True, None
                if said and not stop.is_set():
                    self._note_changed(paths)
                    self._dirty.set()
        finally:
            if current is not None:
                current.close()

    def _start_events(self) -> None:
        stop = threading.Event()
        if not inotify.available():
            thread = threading.Thread(target=self._watch_events, args=(stop,), name="okstra-watch", daemon=True)
            self._events_stop, self._events_thread, self._events_wake = stop, thread, None
            thread.start()
            return
        events: inotify.FolderEvents | None = None
        try:
            events = inotify.FolderEvents()
            events.add_tree(os.fspath(self.root))
        except OSError as exc:
            if events is not None:
                events.close()
            self._poll_instead(exc)
            return
        thread = threading.Thread(target=self._follow_inotify, args=(events, stop), name="okstra-watch", daemon=True)
        self._events_stop, self._events_thread, self._events_wake = stop, thread, events.wake
        thread.start()
        self._ready.set()

    def _poll_instead(self, exc: OSError) -> None:
        """File events cannot be had (the user's watch limit or inotify instances used up): poll, and say why."""
        if exc.errno == errno.ENOSPC:
            why = "the system's limit of folders watched is reached; raise fs.inotify.max_user_watches"
        elif exc.errno == errno.EMFILE:
            why = "the system's limit of file-event instances is reached; raise fs.inotify.max_user_instances"
        else:
            why = f"file events failed: {exc.strerror or exc}"
        self.mode, self.why = "poll", f"polling ({why})"
        self._events_stop = self._events_thread = self._events_wake = None
        self._start_polling()
        self._ready.set()

    def _follow_inotify(self, events: inotify.FolderEvents, stop: threading.Event) -> None:
        """Hand on what the file events tell until the end (blocked in the kernel while nothing changes). A watch
        refused on a folder made meanwhile ends the thread: everything may have changed, and :meth:`wait` starts
        watching afresh (or polls, if the watches are still refused)."""
        try:
            while not stop.is_set():
                batch = events.read(None)
                if batch is not None and not stop.is_set():
                    self._gather(events, batch, stop)
        except OSError:
            pass
        finally:
            events.close()
        if not stop.is_set():
            self._note_changed(None)
            self._dirty.set()

    def _gather(self, events: inotify.FolderEvents, batch: inotify.Batch, stop: threading.Event) -> None:
        """Take a burst of events: until it has been quiet for *settle* seconds or has lasted *poll_seconds*; then
        wake the caller once."""
        started = time.monotonic()
        told = False
        while True:
            if batch.overflow:
                self._note_changed(None)
            if batch.paths or batch.overflow:
                # A folder made is watched from its event on: anything written in it before lies under its path.
                self._note_changed(batch.paths)
                told = True
            if batch.refused is not None:
                raise batch.refused
            left = self.poll_seconds - (time.monotonic() - started)
            if left <= 0 or stop.is_set():
                break
            following = events.read(min(self.settle, left))
            if following is None:
                break
            batch = following
        if told and not stop.is_set():
            self._dirty.set()

    def _stop_events(self) -> None:
        if self._events_stop is not None:
            self._events_stop.set()
        if self._events_wake is not None:
            self._events_wake()

    def _watch_events(self, stop: threading.Event) -> None:
        """Watch every folder of the store, each on its own (never following a symlink, which a recursive watch
        does: a link to a folder above the store or to ``/`` would add thousands of watches outside it and
        leave the store unwatched while they are added); a folder made or moved in is watched from then on."""
        try:
            restarted = False
            while not stop.is_set() and self._watch_folders(stop, restarted):
                restarted = True
        except (OSError, RuntimeError):
            pass  # the root went away (or the watch failed): the identity check below starts afresh
        if not stop.is_set():
            self._note_changed(None)
            self._dirty.set()

    def _watch_folders(self, stop: threading.Event, restarted: bool = False) -> bool:
        """Watch the store's folders as they are now until one is added (True: watch afresh) or the end.

        *restarted*: watched afresh after a folder was added; whatever changed between the two watches (a file
        removed elsewhere meanwhile) is seen by no event, so once watching again every path is to be looked at.
        """
        import watchfiles

        if not os.path.isdir(self.root):
            return False
        watched = folders(self.root, _WATCH_MOST)
        started = False
        for batch in watchfiles.watch(
            *watched,
            stop_event=_Watching(stop, self._ready),
            debounce=int(self.settle * 1000),
            step=max(1, int(self.step * 1000)),
            rust_timeout=1000,
            yield_on_timeout=True,
            raise_interrupt=False,
            ignore_permission_denied=True,
            recursive=False,
        ):
            if not started:  # watching now: a folder made since the listing is noted and watched afresh
                started = True
                if restarted:
                    self._note_changed(None)
                    self._dirty.set()
                made = set(folders(self.root, _WATCH_MOST)) - set(watched)
                if made:
                    self._note_changed([*made, *(path for _change, path in batch)])
                    self._dirty.set()
                    return True
            if not batch:
                continue
            self._note_changed(path for _change, path in batch)
            self._dirty.set()
            # Anything written in a new folder before it is watched lies under a path noted here: the
            # caller re-reads what that path lies in.
            if any(change == watchfiles.Change.added and _is_folder(path) for change, path in batch):
                return True
        return False

    def _restart_events_if_replaced(self) -> bool:
        """Watch *root* afresh when it was removed, replaced or made again; True when it was."""
        identity = _identity(self.root)
        if identity == self._identity and (self._events_thread is None or self._events_thread.is_alive()):
            return False
        self._identity = identity
        if self.mode == "watchman":
            self._note_changed(None)  # the daemon's subscription is of the project: it carries on
            return True
        self._stop_events()
        if identity is not None:
            self._start_events()
        else:
            self._events_thread = None
        self._note_changed(None)
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a change (True), *timeout* seconds (False) or :meth:`close` (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stop.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            if self.mode != "poll":
                step = self.poll_seconds if left is None else min(self.poll_seconds, left)
                if self._dirty.wait(step):
                    self._dirty.clear()
                    return not self._stop.is_set()
                if self._restart_events_if_replaced():
                    return True
            elif self._dirty.is_set():  # the first look named changes (see _start_polling)
                self._dirty.clear()
                return True
            elif self._poll_once(left):
                return True
        return False

    def _poll_once(self, left: float | None) -> bool:
        """Wait for the next look that is due (full or quick), take it; True when it saw a change."""
        due = self._full_due if self.hot_paths is None else min(self._full_due, self._hot_due)
        step = max(0.0, due - time.monotonic())
        if self._stop.wait(step if left is None else min(step, left)):
            return False
        now = time.monotonic()
        if now >= self._full_due:
            cost = time.thread_time()
            current = signature(self.poll_paths())
            told = set() if self.told is None else self.told()
            if told and self._hot_seen:
                told = {p for p in told if p not in self._hot_seen or look_one(p) != self._hot_seen[p]}
            self._hot_seen = {}
            # Polling a large store costs: look less often, so that it takes at most POLL_SHARE of a core (the
            # processor time of the look: on a loaded machine its wall time says more of the others' work).
            self.poll_interval = max(self.poll_seconds, (time.thread_time() - cost) / _shared(POLL_SHARE))
            self._full_due = time.monotonic() + self.poll_interval
            self.looked.set()
            old, self._baseline = self._baseline, current
            if self.hot_paths is not None:
                self._hot_look()
            if told is None or told:
                self._note_changed(told)
                self._report(old, current, differs(old, current))
                return True
            return self._report(old, current, differs(old, current))
        if self.hot_paths is not None and now >= self._hot_due:
            old = self._hot_baseline
            current = self._hot_look()
            # What the quick look saw is not reported again by the next full one. Only what it saw: a path whose
            # full-look value differs from the quick look's last (one that joined the quick look after it changed,
            # a task that started waiting) keeps it, and the full look reports that change.
            self._baseline.update(
                (k, v) for k, v in current.items() if k in self._baseline and self._baseline[k] == old.get(k)
            )
            self._hot_seen.update((k, v) for k, v in current.items() if k in old and old[k] != v)
            # Paths that only joined the quick look (a task that started waiting) are remembered, not a change.
            return self._report(old, current, changed(old, current))
        return False

    def _hot_look(self) -> Signature:
        assert self.hot_paths is not None
        started = time.thread_time()
        current = signature(self.hot_paths())
        self.hot_interval = max(self.poll_seconds, (time.thread_time() - started) / _shared(HOT_SHARE))
        self._hot_due = time.monotonic() + self.hot_interval
        self._hot_baseline = current
        return current

    def _report(self, old: Signature, current: Signature, seen_change: bool) -> bool:
        """Note the paths that differ between the two looks when *seen_change*; returns *seen_change*."""
        if seen_change:
            # A path still unsettled is named again (:func:`changed` reports it), so that it is read once more.
            self._note_changed(
                k for k in old.keys() | current.keys() if old.get(k) != current.get(k) or current.get(k) == UNSETTLED
            )
        return seen_change

    def _note_changed(self, paths: Iterable[str] | None) -> None:
        with self._changed_lock:
            if self._changed is None:
                return
            if paths is None:
                self._changed = None
                return
            for path in paths:
                self._changed.add(path)
                if len(self._changed) > CHANGED_MAX:
                    self._changed = None
                    return

    def take_changed(self) -> set[Path] | None:
        """The paths changed since the last call (None: too many to list, or not known: re-read everything)."""
        with self._changed_lock:
            taken, self._changed = self._changed, set()
        return None if taken is None else {Path(p) for p in taken}

    def close(self) -> None:
        """Stop watching; a :meth:`wait` in progress returns False."""
        self._stop.set()
        self._dirty.set()
        self._stop_events()
        if self._polling:
            self._polling = False
            with _Pollers.lock:
                _Pollers.count -= 1


#: How long a new watcher waits for its file events to be set up before it returns all the same.
READY_SECONDS: Final = 10.0


class _Watching:
    """The stop event handed to ``watchfiles``, which asks it only once its watches are set up: the first
    question says the watch is ready."""

    def __init__(self, stop: threading.Event, ready: threading.Event) -> None:
        self.stop = stop
        self.ready = ready

    def is_set(self) -> bool:
        self.ready.set()
        return self.stop.is_set()


#: More folders than this are never watched with file events (choose_mode polls long before).
_WATCH_MOST: Final = 1 << 22


def _is_folder(path: str) -> bool:
    """A folder itself, not a symlink to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
