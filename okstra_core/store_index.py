"""The store index: facts derived from a project's files, kept in the user's cache folder and recomputed only
when a file they were computed from changed.

A *fact* is the value of a named computation over the store (one task's
pending decisions, the list of tasks). It is computed under
:func:`okstra_core.reading.recording`, so the index knows every file it read,
folder it listed and path it probed, each with its metadata at the look (size,
mtime, ctime, inode; see :class:`okstra_core.reading.Reads`). A fact is reused
only while every one of those paths still has that metadata; otherwise it is
computed again. Nothing has to list what a computation reads: what it read is
what it depends on.

Freshness is asked of a :class:`Look`: by default one ``stat`` per path per
process (:class:`StatPass`), shared by every fact of the process, so a path
that many facts read (the task catalog) is looked at once. Opened with
``watchman=True``, the index asks the user's watchman daemon what changed
under ``.okstra/`` since the clock it kept (:mod:`okstra_core.watchman`) and
looks only at those paths (:class:`ChangedSince`); an answer watchman cannot
vouch for means looking at every path. The clock it keeps is the one watchman
gave before anything was read, and before keeping it the facts this process
did not look up are checked, so every kept fact holds as of that clock. A path modified
too recently to be trusted (:func:`okstra_core.watch.racy`: a second write in
the same clock tick would keep its metadata) is recorded as unsettled and its
fact is computed again at the next look, as git does for racily clean files.

The index is a cache and is untrusted:

* one SQLite file per project (``<cache>/index/<digest of the root>.sqlite``),
  never in the store; it is ours only with our ``application_id``, our
  ``user_version`` (:data:`INDEX_FORMAT`) and the same project root
  (:func:`adopt`); anything else, or a file SQLite finds corrupt or truncated,
  is removed and built afresh, with one line in :attr:`StoreIndex.notices`.
  The facts are kept under a *scope* (the code that computes them: its version
  and sources): facts of another scope are dropped;
* other consumers keep their own tables in the same file, each set a *part*
  (the search's full-text tables, :mod:`okstra_core.search.index`; the check's
  signed records, :mod:`okstra_core.check.cache`) with its
  own version (:func:`part_made`): a part of another version is dropped and
  made afresh without touching the rest;
* each fact carries an HMAC-SHA256 over its name, its value's digest (BLAKE2b,
  kept at the head of the MAC column) and its dependencies under the key that
  signs the check cache (:func:`okstra_core.check.cache.cache_key`, handed in
  by the caller): a fact edited, moved or made under another key is ignored
  and computed afresh, so a tampered index never hides a decision; whether a
  fact holds is said without reading its value (:meth:`StoreIndex.holds`),
  and a value read is checked against its digest;
* two processes may update it at once (WAL, a busy timeout, one
  ``INSERT OR REPLACE`` per fact): a fact written late from older bytes
  carries the older metadata, so it fails the next look and is computed again;
* a cache folder that cannot be used degrades to computing every fact, with
  one line in :attr:`StoreIndex.notices`.

Nothing here writes in the store: reads go through :mod:`okstra_core.reading`.
"""

from __future__ import annotations

import array
import base64
import contextlib
import hashlib
import hmac
import json
import os
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from functools import partial
from pathlib import Path
from typing import Any, Final, Generic, Protocol, TypeVar, cast

from . import collector, layout, reading, watch, watchman, writes_outside

T = TypeVar("T")
_Look = TypeVar("_Look")
#: One path's metadata at a look (:func:`okstra_core.watch.look_one`).
Sig = tuple[int, int, int, int]

#: ``PRAGMA user_version`` of the index; bumped whenever its own tables or what they hold change (each part has
#: its own version, :func:`part_made`).
INDEX_FORMAT: Final = 2
#: ``PRAGMA application_id`` of the index ("oki1"): a database without it is not ours.
APPLICATION_ID: Final = 0x6F6B6931
#: How long a write waits for another process's before the index is given up for this run.
BUSY_SECONDS: float = 15.0
#: How many facts computed are written at once (and let go), and how many kept ones :meth:`StoreIndex.prefetch`
#: reads in one query: a pass over every task of a large store holds at most this many at a time.
BATCH: Final = 512
#: How many times an index is opened while another process holds it in a step that does not wait, and the pause
#: after the first such try (two such pauses after the second, and so on).
OPEN_TRIES: Final = 5
OPEN_PAUSE: float = 0.05
#: Folder of the index files inside the user's cache folder.
INDEX_DIR: Final = "index"
#: The page size of a new index database.
PAGE_BYTES: Final = 16384

#: The first element of a fact's recorded reads (:func:`pack_deps`): their form.
DEPS_FORM: Final = "reads/4"
#: How the packed reads of a fact begin when they hold any, and all they are when they hold none.
_DEPS_HEAD: Final = f'["{DEPS_FORM}",'
_DEPS_NONE: Final = f'["{DEPS_FORM}"]'
#: How hard a record of reads is deflated: the fastest level keeps most of what the slower ones gain on paths.
RECORD_LEVEL: Final = 1
#: How many recorded paths a fact's check looks at in one go when it reads the record a segment at a time
#: (:meth:`StoreIndex._holds_streamed`): twice the looks a forked process shares.
STREAM_PATHS: Final = 2 * watch.SPLIT_AT
_SEGMENT = json.JSONDecoder()

#: Key of the ``meta`` row holding the watchman clock the kept facts hold as of.
WATCHMAN_CLOCK: Final = "watchman-clock"

_SQLITE_CORRUPT: Final = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
_SQLITE_BUSY: Final = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED
#: Files SQLite keeps beside a database.
_SIDE_FILES: Final = ("", "-wal", "-shm", "-journal")
#: How a database built privately (:func:`private_path`) is named after its final name and its builder's pid.
_PRIVATE_SUFFIX: Final = ".new"

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS facts("
    "name TEXT PRIMARY KEY, value TEXT NOT NULL, deps TEXT NOT NULL, mac TEXT NOT NULL)",
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"PRAGMA user_version = {INDEX_FORMAT}",
)


class Look(Protocol):
    """Says whether a path still has the metadata recorded when a fact read it (a freshness source)."""

    def holds(self, path: str, recorded: tuple[int, int, int, int]) -> bool: ...

    def looked(self, path: str, recorded: tuple[int, int, int, int]) -> bool:
        """:meth:`holds`, by a look at *path* whatever the source would say of it (a path reached through a
        symlink, whose changes a source naming changed paths names elsewhere)."""

    def holds_all(self, paths: Sequence[str], recorded: Sequence[Sig], linked: AbstractSet[str]) -> bool:
        """Whether each of *paths* holds with the metadata at the same place in *recorded* (:meth:`holds`;
        :meth:`looked` for those in *linked*)."""


class LookedOnce(Generic[_Look]):
    """Each path looked at once (by *look*) for as long as this lives: every question asked through it shares
    the looks. A long-running caller (a watcher) starts a new one, or :meth:`forget`\\ s the paths its file
    events name, after a change."""

    def __init__(self, look: Callable[[str], _Look]) -> None:
        self._look = look
        self._by_path: dict[str, _Look] = {}
        #: Looks taken in bulk and not yet filed by path, as (paths, looks): a process that asks one question
        #: of tens of thousands of paths (a warm answer) never builds the table.
        self._unfiled: list[tuple[list[str], Sequence[_Look]]] = []
        #: How many paths were looked at.
        self.stats = 0
        #: Counts the calls to :meth:`forget`: what was found to hold before one may no longer.
        self.forgotten = 0

    @property
    def _seen(self) -> dict[str, _Look]:
        """The looks taken so far, by path."""
        if self._unfiled:
            for paths, looks in self._unfiled:
                self._by_path.update(zip(paths, looks, strict=True))
            self._unfiled.clear()
        return self._by_path

    def __call__(self, path: str) -> _Look:
        """*path*'s metadata now (looked at once)."""
        seen = self._seen
        found = seen.get(path)
        if found is None:
            self.stats += 1
            found = seen[path] = self._look(path)
        return found

    def forget(self, paths: set[str] | None = None) -> None:
        """Look at *paths* again at their next use (all paths when None)."""
        self.forgotten += 1
        seen = self._seen
        if paths is None:
            seen.clear()
        else:
            for path in paths:
                seen.pop(path, None)


class StatPass(LookedOnce[tuple[int, int, int, int]]):
    """One ``stat`` per path for as long as it lives (:class:`LookedOnce` of :func:`okstra_core.watch.look_one`):
    every fact checked through it shares the looks."""

    def __init__(
        self, look_many: Callable[[list[str]], watch.Looks] = watch.look_many, *, noting: bool = False
    ) -> None:
        super().__init__(watch.look_one)
        self._look_many = look_many
        #: With *noting*, every path a fact recorded whose look now differs (or was recorded unsettled): what
        #: changed since the facts asked through this were kept. A poll asks the index for it
        #: (:class:`okstra_core.workflows.inbox.InboxTold`) in place of keeping a baseline of every path.
        self.differed: set[str] | None = set() if noting else None

    @property
    def untouched(self) -> bool:
        """Whether nothing was looked at through this yet (no look can be shared with what comes next)."""
        return not self._by_path and not self._unfiled

    def holds(self, path: str, recorded: tuple[int, int, int, int]) -> bool:
        same = self(path) == recorded
        if not same and self.differed is not None:
            self.differed.add(path)
        return same

    looked = holds

    def holds_all(self, paths: Sequence[str], recorded: Sequence[Sig], linked: AbstractSet[str]) -> bool:
        # Every path is looked at here, linked or not, all of them before comparing: no Python call per path but
        # the look (a warm answer checks tens of thousands), and a fact that does not hold is computed again
        # through the same looks.
        if not self._by_path and not self._unfiled:  # the first question: every path is new (a fact's are unique)
            looks = self._look_many(list(paths))
            self.stats += len(looks)
            self._unfiled.append((list(paths), looks))
        else:
            seen = self._seen
            new = [path for path in paths if path not in seen]
            if new:
                self.stats += len(new)
                seen.update(zip(new, self._look_many(new), strict=True))
            looks = watch.Looks.of(map(seen.__getitem__, paths))
        return self._same(paths, looks, recorded)

    def holds_passing(self, paths: list[str], recorded: watch.Looks) -> bool:
        """:meth:`holds_all` of a batch of a record read a segment at a time, keeping none of the looks taken: the
        check of a fact made of 100,000 facts holds a batch of paths, never all (a path looked at before is not
        looked at again)."""
        if self._by_path or self._unfiled:
            seen = self._seen
            new = [path for path in paths if path not in seen]
            now = dict(zip(new, self._look_many(new), strict=True)) if new else {}
            looks = watch.Looks.of(seen[path] if path in seen else now[path] for path in paths)
        else:
            new, looks = paths, self._look_many(paths)
        self.stats += len(new)
        return self._same(paths, looks, recorded)

    def _same(self, paths: Sequence[str], looks: watch.Looks, recorded: Sequence[Sig]) -> bool:
        """Whether *looks* are *recorded*; those that differ are noted when this look notes."""
        then = recorded if isinstance(recorded, watch.Looks) else watch.Looks.of(recorded)
        if looks == then:
            return True
        if self.differed is not None and len(looks) == len(then):
            self.differed.update(paths[i] for i in looks.differing(then))
        return False


def changed_in_all(changes: Iterable[AbstractSet[str] | None]) -> frozenset[str] | None:
    """Every path the *changes* name (each a set of changed paths, or None when it could not say which); None,
    "everything", once one of them could not say."""
    out: set[str] = set()
    for paths in changes:
        if paths is None:
            return None
        out.update(paths)
    return frozenset(out)


class ChangedSince:
    """A freshness source told which paths changed since the index was last brought up to date (file events, a
    watchman since-query): only those are looked at, with the folders holding them (their listings) and
    everything below them (a folder moved in may hold files changed while it was elsewhere); every other path
    holds as recorded. *changed* None means the source cannot say (it started afresh, it overflowed): every path
    is looked at. With *within* (a folder), the source
    speaks only for that folder and what is under it: any other path is looked at. A path this process read
    through a symlink in its store (:func:`okstra_core.reading.seen_through_link`) is always looked at: the
    source names the symlink's target when it changes, never that path."""

    def __init__(self, changed: set[str] | None, looks: StatPass | None = None, within: str | None = None) -> None:
        self.looks = looks if looks is not None else StatPass()
        self.changed = changed
        self._folders = set() if changed is None else {os.path.dirname(p) for p in changed}
        self._within = within
        self._under = None if within is None else within.rstrip(os.sep) + os.sep
        self._beneath: set[str] | None = None
        #: Per folder already asked: whether no changed path is at it or above it (the tasks share their parents).
        self._clear: dict[str, bool] = {}

    def quiet(self, folder: str) -> bool:
        """Whether the source vouches that nothing changed at *folder*, below it or at a folder holding it (a
        folder moved in there): what was read there holds without a look. False when it cannot say, or when
        *folder* lies outside what it speaks for."""
        changed = self.changed
        if changed is None or (self._under is not None and not folder.startswith(self._under)):
            return False
        if not changed:
            return True
        if self._beneath is None:
            # Every changed path and every folder holding one: a folder in this set has a change at or below it.
            beneath: set[str] = set()
            for path in changed:
                while path not in beneath:
                    beneath.add(path)
                    parent = os.path.dirname(path)
                    if parent == path:
                        break
                    path = parent
            self._beneath = beneath
        return folder not in self._beneath and self._clear_from(os.path.dirname(folder))

    def looked(self, path: str, recorded: tuple[int, int, int, int]) -> bool:
        return self.looks(path) == recorded

    def holds_all(self, paths: Sequence[str], recorded: Sequence[Sig], linked: AbstractSet[str]) -> bool:
        holds, looked = self.holds, self.looked
        return all(
            (looked(path, sig) if path in linked else holds(path, sig))
            for path, sig in zip(paths, recorded, strict=True)
        )

    def holds(self, path: str, recorded: tuple[int, int, int, int]) -> bool:
        changed = self.changed
        if changed is None or path in self._folders or reading.seen_through_link(path):
            return self.looks(path) == recorded
        if self._under is not None and path != self._within and not path.startswith(self._under):
            return self.looks(path) == recorded
        if not changed or self._clear_from(path):
            return True
        return self.looks(path) == recorded

    def _clear_from(self, path: str) -> bool:
        """Whether no changed path is *path* or a folder holding it (each folder's answer kept for the next)."""
        clear, changed = self._clear, self.changed
        assert changed is not None
        walked: list[str] = []
        here = path
        found = clear.get(here)
        while found is None:
            if here in changed:
                found = False
                break
            walked.append(here)
            parent = os.path.dirname(here)
            if parent == here:
                found = True
                break
            here = parent
            found = clear.get(here)
        if found:
            clear.update(dict.fromkeys(walked, True))
        else:
            # Only the folders above the changed one are clear of it: those below it hold a change above them.
            clear.update(dict.fromkeys(walked, False))
        return found


def deps_segments(text: str) -> str:
    """The segments of what a fact read, as :func:`pack_deps` packed them (*text*), for a fact it is nested in."""
    return text[len(_DEPS_HEAD) : -1] if text != _DEPS_NONE else ""


def pack_deps(paths: watch.Signature, linked: AbstractSet[str], prefix: str, nested: Iterable[str] = ()) -> str:
    """The JSON of what a fact read: ``[DEPS_FORM, segment, ...]``, a segment being ``[[path, ...], metadata,
    [index, ...]]``: each path relative to the root (*prefix*) when inside it, else absolute with a leading
    ``/``; the four numbers of each path's metadata in turn, in the paths' order, as 64-bit little-endian
    numbers in base64 (:class:`okstra_core.watch.Looks`: read back without a Python object a number); the places
    of the paths reached through a symlink. The first segment is what the fact read itself (*paths*, *linked*);
    then come the segments of what the facts *nested* in it read (:func:`deps_segments`), taken over as they
    are: a fact made of 100,000 facts is written without holding their paths in one table."""
    segments = list(_deps_parts(paths, linked, prefix, nested))
    return _DEPS_HEAD + ",".join(segments) + "]" if segments else _DEPS_NONE


def packed_deps(paths: watch.Signature, linked: AbstractSet[str], prefix: str, nested: Iterable[str] = ()) -> bytes:
    """:func:`packed_record` of :func:`pack_deps`'s text, deflated a segment at a time: the record of a fact made
    of 100,000 facts is never held as one text (joining, closing and encoding it held three copies at once)."""
    deflate = zlib.compressobj(RECORD_LEVEL)
    out: list[bytes] = []
    before = _DEPS_HEAD
    for segment in _deps_parts(paths, linked, prefix, nested):
        for text in (before, segment):
            chunk = deflate.compress(text.encode("ascii"))
            if chunk:  # most are empty; joining a list holds a buffer's worth per item
                out.append(chunk)
        before = ","
    if before == _DEPS_HEAD:
        return packed_record(_DEPS_NONE)
    out.append(deflate.compress(b"]"))
    out.append(deflate.flush())
    return b"".join(out)


def _deps_parts(paths: watch.Signature, linked: AbstractSet[str], prefix: str, nested: Iterable[str]) -> Iterator[str]:
    """The segments of :func:`pack_deps`, one at a time."""
    if paths:
        order = sorted(paths)
        rel = [(p[len(prefix) :] if p.startswith(prefix) else "/" + p) for p in order]
        numbers = base64.b64encode(watch.Looks.of(map(paths.__getitem__, order)).to_bytes()).decode("ascii")
        through = [i for i, p in enumerate(order) if p in linked]
        yield json.dumps([rel, numbers, through], separators=(",", ":"))
    yield from (text for text in nested if text)


def unpack_deps(text: str, prefix: str) -> tuple[list[str], watch.Looks, set[str]] | None:
    """What :func:`pack_deps` wrote: the absolute paths (each once), their metadata and the paths reached through
    a symlink (None for anything else, or for a path recorded twice with different metadata: the fact is
    computed again)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, list) or not doc or doc[0] != DEPS_FORM:
        return None
    segments = doc[1:]
    paths: list[str] = []
    looks = watch.Looks()
    through: list[int] = []
    for segment in segments:
        try:
            part_paths, part, places = _segment(segment, prefix)
        except ValueError:
            return None
        through.extend(len(paths) + i for i in places)
        paths.extend(part_paths)
        looks.numbers.extend(part.numbers)
    linked = {paths[i] for i in through}
    if len(segments) > 1 and len(set(paths)) != len(paths):  # facts nested in one read some paths alike
        table: dict[str, Sig] = {}
        for path, sig in zip(paths, looks, strict=True):
            if table.setdefault(path, sig) != sig:
                return None
        paths, looks = list(table), watch.Looks.of(table.values())
    return paths, looks, linked


def segments_of(text: str, prefix: str) -> Iterator[tuple[list[str], watch.Looks, set[str]]]:
    """The segments :func:`pack_deps` wrote in *text*, one at a time (each as :func:`unpack_deps` gives the
    whole): a record of 100,000 facts is read without holding its paths at once. Raises ``ValueError`` part-way
    for anything else; a path may come in more than one segment."""
    return _segments(iter((text,)), prefix)


def _segments(chunks: Iterator[str], prefix: str) -> Iterator[tuple[list[str], watch.Looks, set[str]]]:
    """:func:`segments_of` of the text *chunks* make in turn (a record inflated a megabyte at a time)."""
    for segment in _raw_segments(chunks):
        paths, looks, places = _segment(segment, prefix)
        yield paths, looks, {paths[i] for i in places}


def _raw_segments(chunks: Iterator[str]) -> Iterator[object]:
    """The segments of the record the text *chunks* make, each as JSON gives it (:func:`_segment` reads one);
    ``ValueError`` part-way for anything that is not a record of reads."""
    text, at = "", 0

    def more() -> bool:
        nonlocal text, at
        chunk = next(chunks, None)
        if chunk is None:
            return False
        text, at = text[at:] + chunk, 0
        return True

    while len(text) < len(_DEPS_HEAD) and more():
        pass
    if text == _DEPS_NONE and not more():
        return
    if not text.startswith(_DEPS_HEAD):
        raise ValueError("not a record of reads")
    at = len(_DEPS_HEAD)
    while True:
        try:
            segment, end = _SEGMENT.raw_decode(text, at)
        except ValueError:
            if more():  # a segment cut where a chunk ends (an array never parses before its "]")
                continue
            raise
        yield segment
        at = end
        while at >= len(text):
            if not more():
                raise ValueError("not a record of reads")
        if text[at] == "]":
            if at == len(text) - 1 and not more():
                return
            raise ValueError("not a record of reads")
        if text[at] != ",":
            raise ValueError("not a record of reads")
        at += 1


def packed_record(text: str) -> bytes:
    """A fact's record of reads (:func:`pack_deps`, ASCII throughout) as the index keeps it: deflated, a tenth of
    its size or less, so that a warm check of a fact made of 100,000 facts never holds its text whole."""
    return zlib.compress(text.encode("ascii"), RECORD_LEVEL)


def record_text(record: bytes) -> str:
    """The text of a kept record of reads (:func:`packed_record`); ``ValueError`` for anything else."""
    try:
        return zlib.decompress(record).decode("ascii")
    except (zlib.error, UnicodeDecodeError) as exc:
        raise ValueError("not a record of reads") from exc


def _inflated(record: bytes) -> Iterator[str]:
    """The text of *record* a megabyte at a time; ``ValueError`` for a record that does not inflate. The record is
    fed in steps too: what one call leaves unconsumed is a copy, of the whole rest of a record fed whole."""
    inflate = zlib.decompressobj()
    view = memoryview(record)
    fed = 0
    data: bytes | memoryview = b""
    try:
        while not inflate.eof:
            if not data:
                if fed >= len(view):
                    break
                data, fed = view[fed : fed + _CHUNK_CHARS], fed + _CHUNK_CHARS
            chunk = inflate.decompress(data, _CHUNK_CHARS)
            data = inflate.unconsumed_tail
            if chunk:
                yield chunk.decode("ascii")
        if not inflate.eof:  # the input is all in, some output may still be held back
            rest = inflate.flush()
            if rest:
                yield rest.decode("ascii")
    except (zlib.error, UnicodeDecodeError) as exc:
        raise ValueError("not a record of reads") from exc
    if not inflate.eof or data or fed < len(view) or inflate.unused_data:  # cut short, or more after its end
        raise ValueError("not a record of reads")


def _segment(segment: object, prefix: str) -> tuple[list[str], watch.Looks, list[int]]:
    """One segment of a record of reads: its absolute paths, their metadata, and the places of those reached
    through a symlink; ``ValueError`` for anything else."""
    if not isinstance(segment, list) or len(segment) != 3:
        raise ValueError("not a segment")
    paths_in, numbers_in, places = segment
    if not isinstance(paths_in, list) or not isinstance(numbers_in, str) or not isinstance(places, list):
        raise ValueError("not a segment")
    part = watch.Looks.from_bytes(base64.b64decode(numbers_in, validate=True))  # binascii.Error is a ValueError
    if part is None or len(part) != len(paths_in):
        raise ValueError("not a segment")
    if places and not all(isinstance(i, int) and 0 <= i < len(paths_in) for i in places):
        raise ValueError("not a segment")
    try:
        "".join(paths_in)  # TypeError unless every path is text (checked in one call: there may be thousands)
        return [path[1:] if path[0] == "/" else prefix + path for path in paths_in], part, places
    except (TypeError, IndexError):
        raise ValueError("not a segment") from None


class _Unheard:
    """:meth:`StoreIndex._holds_shared` had no answer from its forked process."""


_NO_ANSWER: Final = _Unheard()
#: A fact not kept, or no longer fresh (:meth:`StoreIndex._found`).
_MISSING: Final = object()
#: Where looks are shared with a forked process, this process unpacks and looks at SHARE_HERE segments in
#: every SHARE_EVERY, the forked process at the others: this one decodes the kept value meanwhile.
SHARE_HERE: Final = 2
SHARE_EVERY: Final = 5


def _as_is(value: Any) -> Any:
    return value


def _decoded(value: str, decode: Callable[[Any], T]) -> T | object:
    """*decode* of the JSON *value*, or :data:`_MISSING` when it is not JSON or not of the shape *decode* reads."""
    try:
        return decode(json.loads(value))
    except (KeyError, TypeError, ValueError):
        return _MISSING


def _parsed(value: str) -> Any:
    return _decoded(value, _as_is)


def _taken(value: str | None, decode: Callable[[str], T | object] | None) -> T | object:
    """*decode* of a kept *value*; True where the value was not read (only whether it holds was asked)."""
    return True if value is None or decode is None else decode(value)


def _value_digest(value: str) -> bytes:
    """The digest of a kept value that its row's MAC covers, a megabyte of it at a time."""
    digest = hashlib.blake2b(digest_size=_VALUE_DIGEST_CHARS // 2)
    for chunk in _encoded(value):
        digest.update(chunk)
    return digest.digest()


#: A kept value's digest, in hex, at the head of its row's MAC column; then the MAC itself (SHA-256, in hex).
_VALUE_DIGEST_CHARS: Final = 64
_MAC_CHARS: Final = _VALUE_DIGEST_CHARS + 64


def _looked_same(paths: list[str], recorded: watch.Looks) -> bool:
    """Whether *paths* are as *recorded*, each looked at here (never in another process) and none unsettled."""
    return watch.UNSETTLED not in recorded and watch.Looks.of(map(watch.look_one, paths)) == recorded


#: Into how many parts :func:`_distinct` splits the hashes it compares, by their lowest bits.
_DISTINCT_PARTS: Final = 16


def _distinct(*hashes: array.array[int]) -> bool:
    """Whether no value comes twice across *hashes* (the hashes of a record's paths), a part of the values at a
    time: a set of the 700,000 paths of a fact made of 100,000 facts is about 50 megabytes of objects, one part
    of it a sixteenth of that."""
    mask = _DISTINCT_PARTS - 1
    parts = [array.array("q") for _ in range(_DISTINCT_PARTS)]
    appends = [part.append for part in parts]
    for values in hashes:
        for value in values:
            appends[value & mask](value)
    return all(len(set(part)) == len(part) for part in parts)


def _half_answer(holds: bool | None, hashes: array.array[int], looked: int) -> bytes:
    """What a forked half of :meth:`StoreIndex._holds_shared` sends back (:func:`_from_half_answer`)."""
    verdict = b"n" if holds is None else b"y" if holds else b"f"
    return verdict + looked.to_bytes(8, "little") + hashes.tobytes()


def _from_half_answer(data: bytes | None) -> tuple[bool | None, array.array[int], int] | None:
    """What :func:`_half_answer` sent, or None for anything else (no answer, one cut short)."""
    if data is None or len(data) < 9 or (len(data) - 9) % 8 or data[:1] not in (b"n", b"y", b"f"):
        return None
    hashes: array.array[int] = array.array("q")
    hashes.frombytes(data[9:])
    holds = None if data[:1] == b"n" else data[:1] == b"y"
    return holds, hashes, int.from_bytes(data[1:9], "little")


def _encoded(text: str) -> Iterator[bytes]:
    """*text* in UTF-8 (lone surrogates kept, each on its own as a whole encoding keeps it), a megabyte at a
    time: a fact's value or reads may be tens of megabytes, never encoded whole."""
    for start in range(0, len(text), _CHUNK_CHARS):
        yield text[start : start + _CHUNK_CHARS].encode("utf-8", "surrogatepass")


_CHUNK_CHARS: Final = 1 << 20


def index_path(cache_dir: Path, root: Path) -> Path:
    """Where the index of the project at *root* is kept inside *cache_dir*."""
    digest = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:32]
    return cache_dir / INDEX_DIR / f"{digest}.sqlite"


# ---------------------------------------------------------------------- the database file


def connect(path: Path, timeout: float) -> sqlite3.Connection:
    """A connection to the index's database at *path* (WAL: a reader never waits for a writer); a write waits
    *timeout* seconds for another process's."""
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    # Pages of 16 KiB for a database made now (one made already keeps its own): the search's part is mostly long
    # texts and their full-text index, written in one go on a first build, a few percent faster so.
    conn.execute(f"PRAGMA page_size = {PAGE_BYTES}")
    _into_wal(conn)
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _into_wal(conn: sqlite3.Connection) -> None:
    """Switch *conn* to WAL, waiting a little while other processes opening a new database at once hold it: the
    switch takes no busy wait of its own."""
    for attempt in range(1, OPEN_TRIES + 1):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if attempt == OPEN_TRIES or not busy(exc):
                conn.close()
                raise
            time.sleep(OPEN_PAUSE * attempt)


def _lenient(conn: sqlite3.Connection) -> sqlite3.Connection:
    """*conn*, reading text that is not UTF-8 (written into the database by someone else) with its bytes kept as
    lone surrogates: such a row then fails its MAC and is computed again, where SQLite's own decoding would fail
    every query that meets it."""
    conn.text_factory = _text_of
    return conn


def _text_of(data: bytes | bytearray) -> str:
    return data.decode("utf-8", "surrogateescape")


def _ours(name: object) -> bool:
    """Whether a kept row's *name* is one this index could have written (text, UTF-8 throughout): no other is
    ever asked for, dropped or checked."""
    if not isinstance(name, str):
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def private_path(path: Path) -> Path:
    """Where this process builds a new database for *path* that no other process knows of (:func:`publish`)."""
    return path.with_name(f"{path.name}.{os.getpid()}{_PRIVATE_SUFFIX}")


def connect_private(path: Path) -> sqlite3.Connection:
    """A connection to a new database at *path* that only this process knows of, built whole before
    :func:`publish` puts it in place: its rollback journal kept in memory and nothing synced until then, so
    each page is written once (in WAL mode every page is written twice, to the log and then into the file)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA page_size = {PAGE_BYTES}")
    conn.execute("PRAGMA journal_mode=MEMORY")
    conn.execute("PRAGMA synchronous=OFF")
    return conn


def publish(conn: sqlite3.Connection, private: Path, path: Path) -> bool:
    """Put the database built at *private* (open on *conn*, closed here) in place at *path*, in WAL mode and on
    disk; False, and nothing put in place, when a database is at *path* already (made by another process
    meanwhile: it is never replaced). *private* is removed either way."""
    try:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()
        return writes_outside.link_in_place(private, path)
    finally:
        discard(private)


def remove_stale_private(path: Path) -> None:
    """Remove the databases left beside *path* by builds that never ended (their process is gone)."""
    prefix = path.name + "."
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        names = [e.name for e in entries if e.name.startswith(prefix) and e.name.endswith(_PRIVATE_SUFFIX)]
    for name in names:
        pid = name[len(prefix) : -len(_PRIVATE_SUFFIX)]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                discard(path.parent / name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def adopt(conn: sqlite3.Connection, root: Path) -> str | None:
    """Why the database open on *conn* is not the index of the project at *root* (None: it is; an empty one is
    made ours, in one transaction, as another process may be making it at the same moment)."""
    app, version = _stamp(conn)
    if app == 0 and version == 0:
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            app, version = _stamp(conn)
            if app == 0 and version == 0:
                if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] and not _made_here(conn, root):
                    return "is not an okstra store index"
                # Empty, or holding this index's own tables for this project without their stamp (seen once
                # when several processes made it at the same moment): made (again) ours.
                _make(conn, root)
                return None
    if app != APPLICATION_ID:
        return "is not an okstra store index"
    if version != INDEX_FORMAT:
        return f"has format {version}, not {INDEX_FORMAT}"
    row = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
    if row is None or row[0] != os.path.realpath(root):
        return "belongs to another project"
    return None


def _made_here(conn: sqlite3.Connection, root: Path) -> bool:
    """Whether the database holds this index's own tables, naming the project at *root*, and besides them only
    the tables of the parts it records (``<part>_...``)."""
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"meta", "facts"} <= tables:
        return False
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
        parts = [key[5:] for (key,) in conn.execute("SELECT key FROM meta WHERE key LIKE 'part:%'")]
    except sqlite3.OperationalError:  # a table of that name made otherwise: not ours
        return False
    others = {t for t in tables - {"meta", "facts"} if not t.startswith("sqlite_")}  # SQLite's own: any file
    if any(not any(t.startswith(f"{part}_") for part in parts) for t in others):
        return False
    return row is not None and row[0] == os.path.realpath(root)


def _stamp(conn: sqlite3.Connection) -> tuple[int, int]:
    """The database's application id and format, read together: read one statement each, another process making
    the index between the two gave an id of 0 with our format, taken for another application's database."""
    app, version = conn.execute(
        "SELECT a.application_id, v.user_version FROM pragma_application_id() AS a, pragma_user_version() AS v"
    ).fetchone()
    return int(app), int(version)


def create(conn: sqlite3.Connection, root: Path) -> None:
    """Make the index's own tables in the empty database open on *conn* (one transaction)."""
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        _make(conn, root)


def _make(conn: sqlite3.Connection, root: Path) -> None:
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('root', ?)", (os.path.realpath(root),))


def discard(path: Path) -> None:
    """Remove the database at *path* with the files SQLite keeps beside it (a file already gone is no error)."""
    for suffix in _SIDE_FILES:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def _texts(value: object, deps: object, mac: object) -> tuple[str, bytes, str] | None:
    """A kept row's value, record of reads (:func:`packed_record`) and MAC, when they are text, bytes and text
    (SQLite keeps whatever a column is given: a row of another type, or of the form before, is not ours, and is
    computed again)."""
    if isinstance(value, str) and isinstance(deps, bytes) and isinstance(mac, str):
        return value, deps, mac
    return None


def busy(exc: sqlite3.DatabaseError) -> bool:
    """Whether *exc* says another connection holds the database (``SQLITE_BUSY``, ``SQLITE_LOCKED``)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _SQLITE_BUSY


def damaged(exc: sqlite3.DatabaseError) -> bool:
    """Whether *exc* says the database is damaged (corrupt, truncated, not a database at all): it is rebuilt."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return not isinstance(exc, sqlite3.OperationalError)
    return code & 0xFF in _SQLITE_CORRUPT or "malformed" in str(exc)


def part_made(
    conn: sqlite3.Connection, name: str, version: int, schema: Sequence[str], *, afresh: bool = False
) -> bool:
    """Make the tables of the part *name* (*schema*, each table named ``<name>_...``) unless the database holds
    them at *version*; those of another version (every one, with *afresh*) are dropped first, the rest of the
    database left as it is. True when they were made now. One transaction: a process making them at the same
    moment waits, then finds them made."""
    key = f"part:{name}"
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if not afresh and row is not None and row[0] == str(version):
        return False
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if not afresh and row is not None and row[0] == str(version):
            return False
        tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        mine = [(table, sql or "") for table, sql in tables if table.startswith(f"{name}_")]
        # A virtual table first: dropping it drops its shadow tables.
        mine.sort(key=lambda pair: not pair[1].upper().startswith("CREATE VIRTUAL"))
        for table, _sql in mine:
            quoted = table.replace('"', '""')
            conn.execute(f'DROP TABLE IF EXISTS "{quoted}"')
        for statement in schema:
            conn.execute(statement)
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(version)))
    return True


def kept_clock(conn: sqlite3.Connection, table: str) -> str | None:
    """The watchman clock kept in *table* (a ``key, value`` table: ``meta`` or a part's own), None when none is."""
    row = conn.execute(f"SELECT value FROM {table} WHERE key = ?", (WATCHMAN_CLOCK,)).fetchone()
    return None if row is None else str(row[0])


def keep_clock(conn: sqlite3.Connection, table: str, kept: str | None, clock: str) -> None:
    """Keep *clock* in *table*, in the caller's transaction, unless another process kept one since this one read
    *kept* (then none: the next look looks at everything once)."""
    if kept_clock(conn, table) == kept:
        conn.execute(f"INSERT OR REPLACE INTO {table} VALUES (?, ?)", (WATCHMAN_CLOCK, clock))
    else:
        conn.execute(f"DELETE FROM {table} WHERE key = ?", (WATCHMAN_CLOCK,))


class StoreIndex:
    """The index of one project. Use :meth:`fact` to get a fact, :meth:`flush` (or ``with``) to keep new ones.

    *key* signs the facts (None: no key could be had, and no fact is reused or
    kept); *scope* names the code that computes them (facts kept under another
    scope are dropped). With *reindex*, every kept fact is dropped first.
    """

    def __init__(
        self,
        root: Path,
        cache_dir: Path,
        *,
        key: bytes | None,
        scope: str,
        look: Look | None = None,
        reindex: bool = False,
        watchman: bool = False,
    ) -> None:
        self.root = root
        self.path = index_path(cache_dir, root)
        self.look: Look = look if look is not None else StatPass()
        #: One line per problem met (the index rebuilt, the cache folder unusable), for the caller to show once.
        self.notices: list[str] = []
        #: Facts reused from the index and computed afresh in this process.
        self.reused = 0
        self.computed = 0
        self._key = key
        self._scope = scope
        self._prefix = os.fspath(root).rstrip(os.sep) + os.sep
        self._conn: sqlite3.Connection | None = None
        #: The kept rows read ahead by :meth:`prefetch` (the last batch only).
        self._ahead: dict[str, tuple[str, bytes, str]] = {}
        #: Facts computed and not yet written (at most :data:`BATCH`), and facts to drop.
        self._pending: dict[str, tuple[str, bytes, str]] = {}
        self._gone: set[str] = set()
        #: Facts looked up or computed in this process (the others are checked before a new clock is kept).
        self._consulted: set[str] = set()
        #: The watchman clock kept at open and the one to keep at flush (None: leave it as it is).
        self._clock_kept: str | None = None
        self._clock_new: str | None = None
        #: Whether a write of computed facts failed: their old rows, possibly stale, are still kept.
        self._lost = False
        #: Why watchman was not used (None: it was, or it was not asked for).
        self.watchman_problem: str | None = None
        #: The facts whose MAC is followed (:meth:`follow_mac`), and the MAC each was found kept with.
        self._macs_followed: set[str] = set()
        self._macs_found: dict[str, str] = {}
        #: Digests of the recorded reads found to hold through the look named beside them (the look itself and how
        #: often it forgot): another fact that recorded the same reads (a sibling, :meth:`fact`) holds too, without
        #: unpacking them again, until the look is replaced or forgets.
        self._held: set[bytes] = set()
        #: Digests of the recorded reads found not to hold through that same look: a fact asked for again (a
        #: poll counts from the kept value, then computes it) is computed without looking at them once more.
        self._stale: set[bytes] = set()
        self._held_by: tuple[Look, int] | None = None
        if key is None:
            self.notices.append("no key to sign the store index could be had: every answer is computed afresh")
        else:
            self._open(reindex)
            if watchman and self._conn is not None:
                self._ask_watchman()

    # ------------------------------------------------------------------ the database

    def _open(self, reindex: bool) -> None:
        misplaced = layout.misplaced_cache(self.path.parent, self.root)
        if misplaced is not None:
            self._unusable(misplaced)
            return
        for attempt in range(1, OPEN_TRIES + 1):
            try:
                self._open_once(reindex)
                return
            except sqlite3.DatabaseError as exc:
                if attempt < OPEN_TRIES and busy(exc):
                    # Processes opening a new index at once: some steps (the switch to WAL) take no busy wait.
                    self._close_quietly()
                    time.sleep(OPEN_PAUSE * attempt)
                    continue
                self._give_up_or_rebuild(exc)
                return
            except OSError as exc:
                self._unusable(f"{exc.strerror or exc}")
                return

    def _open_once(self, reindex: bool) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.path.is_symlink() or (self.path.exists() and not self.path.is_file()):
            self._discard(f"{self.path} is not a regular file")
        self._conn = _lenient(connect(self.path, BUSY_SECONDS))
        problem = adopt(self._conn, self.root)
        if problem is not None:
            self.notices.append(f"store index {self.path} {problem}: rebuilt")
            self._conn.close()
            self._discard(None)
            self._conn = _lenient(connect(self.path, BUSY_SECONDS))
            create(self._conn, self.root)
        self._own_scope(reindex)

    def _close_quietly(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def _own_scope(self, reindex: bool) -> None:
        """Drop the facts kept by another version of okstra (every fact, with *reindex*) and the clock they held
        as of; the other parts of the database are left as they are."""
        assert self._conn is not None
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'scope'").fetchone()
        if not reindex and row is not None and row[0] == self._scope:
            return
        with self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.execute("DELETE FROM facts")
            self._conn.execute("DELETE FROM meta WHERE key = ?", (WATCHMAN_CLOCK,))
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('scope', ?)", (self._scope,))

    def _discard(self, reason: str | None) -> None:
        if reason is not None:
            self.notices.append(f"store index {reason}: rebuilt")
        discard(self.path)

    def _give_up_or_rebuild(self, exc: sqlite3.DatabaseError) -> None:
        """A database SQLite cannot use is built afresh once; failing again, the index is not used this run."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if not damaged(exc):
            self._unusable(str(exc))
            return
        try:
            self._discard(f"{self.path} is damaged ({exc})")
            self._conn = connect(self.path, BUSY_SECONDS)
            create(self._conn, self.root)
            self._own_scope(False)
        except (sqlite3.DatabaseError, OSError) as again:
            self._unusable(str(again))

    def _unusable(self, reason: str) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn = None
        self.notices.append(f"cannot keep the store index in {self.path.parent}: {reason}; looking afresh")

    def _ask_watchman(self) -> None:
        """Look only at what watchman says changed under ``.okstra/`` since the clock kept at the last flush, and
        keep the clock it gives now (before anything is read: a change made while this process reads is named
        by the next answer)."""
        assert self._conn is not None
        try:
            self._clock_kept = kept_clock(self._conn, "meta")
        except sqlite3.DatabaseError as exc:
            self._give_up_or_rebuild(exc)
            return
        since = watchman.changed_since(self.root, self._clock_kept)
        self.watchman_problem = since.problem
        self._clock_new = since.token
        if since.token is not None:
            self.look = ChangedSince(since.changed, within=os.fspath(layout.okstra_dir(self.root)))

    @property
    def usable(self) -> bool:
        """Whether facts are reused and kept (False: every fact is computed afresh)."""
        return self._conn is not None

    # ------------------------------------------------------------------ facts

    def _mac(self, name: str, value: str | bytes, deps: bytes) -> str:
        """The MAC column of a row: the digest of its *value* (text, or that digest itself), then a MAC of the
        row's name, that digest and its record of reads. Whether a row holds is then said without reading its
        value (:meth:`holds`), and a value read is checked against its digest."""
        assert self._key is not None
        digest = value if isinstance(value, bytes) else _value_digest(value)
        mac = hmac.new(self._key, digestmod="sha256")
        for i, part in enumerate((self._scope, os.fspath(self.root), name)):
            mac.update(b"\x00" if i else b"")
            mac.update(part.encode("utf-8", "surrogatepass"))
        for kept in (digest, deps):
            mac.update(b"\x00")
            mac.update(kept)
        return digest.hex() + mac.hexdigest()

    def _signed(self, name: str, value: str | None, deps: bytes, mac: str) -> bool:
        """Whether *mac* is this index's for the row (a MAC of other characters than hex is not: no error); the
        value is checked against its digest unless it was not read (None)."""
        if len(mac) != _MAC_CHARS or not mac.isascii():
            return False
        try:
            digest = bytes.fromhex(mac[:_VALUE_DIGEST_CHARS])
        except ValueError:
            return False
        if value is not None and not hmac.compare_digest(digest, _value_digest(value)):
            return False
        return hmac.compare_digest(mac, self._mac(name, digest, deps))

    def _deps_of(self, record: bytes) -> tuple[list[str], watch.Looks, set[str]] | None:
        """The recorded paths (absolute) of a fact, their metadata in the same order, and those reached through a
        symlink, when every one still holds, else None. A path reached through a symlink is looked at whatever
        the freshness source says (:attr:`okstra_core.reading.Reads.linked`)."""
        try:
            unpacked = unpack_deps(record_text(record), self._prefix)
        except ValueError:
            return None
        if unpacked is None:
            return None
        paths, sigs, linked = unpacked
        unsettled = watch.UNSETTLED in sigs
        # A look that notes what changed is asked even so: each path recorded unsettled is noted as changed.
        if unsettled and not (isinstance(self.look, StatPass) and self.look.differed is not None):
            return None
        if not self.look.holds_all(paths, sigs, linked) or unsettled:
            return None
        return unpacked

    def _holds_streamed(self, record: bytes, meanwhile: Callable[[], object] | None = None) -> bool | None:
        """Whether every path *deps* records still holds, looked at a batch at a time as its segments are read
        (:func:`segments_of`): the check of a fact made of 100,000 facts never holds all their paths. None when
        only the whole record can say: not one :func:`pack_deps` wrote, or a path recorded in two segments
        (whether the two agree)."""
        look = self.look
        noting = isinstance(look, StatPass) and look.differed is not None
        if isinstance(look, StatPass) and not noting and look.untouched and watch.may_fork():
            shared = self._holds_shared(record, look, meanwhile)
            if not isinstance(shared, _Unheard):
                return shared
        hashes = array.array("q")
        paths: list[str] = []
        looks = watch.Looks()
        linked: set[str] = set()
        holds = True
        try:
            for part_paths, part_looks, part_linked in _segments(_inflated(record), self._prefix):
                hashes.extend(map(hash, part_paths))
                paths.extend(part_paths)
                looks.numbers.extend(part_looks.numbers)
                linked |= part_linked
                if len(paths) >= STREAM_PATHS:
                    holds = self._batch_holds(paths, looks, linked, noting) and holds
                    if not holds and not noting:
                        return False
                    paths, looks, linked = [], watch.Looks(), set()
        except ValueError:
            return None
        if paths:
            holds = self._batch_holds(paths, looks, linked, noting) and holds
        return holds if _distinct(hashes) else None

    def _holds_shared(
        self, record: bytes, look: StatPass, meanwhile: Callable[[], object] | None
    ) -> bool | _Unheard | None:
        """:meth:`_holds_streamed` shared with a forked process: each reads the whole record, and unpacks and
        looks at its share of the segments (one process alone spends a third of its time unpacking, the rest in
        ``stat``). This process calls *meanwhile* first (the kept value decoded in case it holds), so its share
        is the smaller. :data:`_NO_ANSWER` when the forked process gave none."""
        forked = watch.Forked(lambda: _half_answer(*self._holds_half(record, 1)))
        try:
            if meanwhile is not None:
                meanwhile()
            holds, hashes, looked = self._holds_half(record, 0)
        except BaseException:  # an interrupt: the forked process is not left behind
            forked.stop()
            raise
        if holds is False:
            forked.stop()
            look.stats += looked
            return False
        theirs = _from_half_answer(forked.answer())
        if theirs is None:
            return _NO_ANSWER
        their_holds, their_hashes, their_looked = theirs
        look.stats += looked + their_looked
        if holds is None or their_holds is None:
            return None
        if not their_holds:
            return False
        return True if _distinct(hashes, their_hashes) else None

    def _holds_half(self, record: bytes, parity: int) -> tuple[bool | None, array.array[int], int]:
        """Whether the paths of *record*'s segments in one share hold (with *parity* 0, :data:`SHARE_HERE` of
        every :data:`SHARE_EVERY` segments; with 1, the others), the hashes of those paths, and how many were
        looked at; None for a record that is not one (:meth:`_holds_streamed`)."""
        hashes: array.array[int] = array.array("q")
        paths: list[str] = []
        looks = watch.Looks()
        looked = 0
        try:
            for number, segment in enumerate(_raw_segments(_inflated(record))):
                if (number % SHARE_EVERY < SHARE_HERE) != (parity == 0):
                    continue
                part_paths, part_looks, _places = _segment(segment, self._prefix)
                hashes.extend(map(hash, part_paths))
                paths.extend(part_paths)
                looks.numbers.extend(part_looks.numbers)
                if len(paths) >= STREAM_PATHS // 2:
                    looked += len(paths)
                    if not _looked_same(paths, looks):
                        return False, hashes, looked
                    paths, looks = [], watch.Looks()
        except ValueError:
            return None, hashes, looked
        looked += len(paths)
        return _looked_same(paths, looks), hashes, looked

    def _batch_holds(self, paths: list[str], looks: watch.Looks, linked: AbstractSet[str], noting: bool) -> bool:
        """Whether a batch of recorded *paths* holds: a path recorded unsettled never does (a look that notes is
        asked even so, to note it)."""
        if not noting and watch.UNSETTLED in looks:
            return False
        look = self.look
        if isinstance(look, StatPass):
            return look.holds_passing(paths, looks) and watch.UNSETTLED not in looks
        return look.holds_all(paths, looks, linked)

    def _row(self, name: str, value: bool = True) -> tuple[str | None, bytes, str] | None:
        """The kept row of *name*: its value (None when *value* is False and it was not read already), record of
        reads and MAC column."""
        if name in self._pending:
            return self._pending[name]
        if name in self._ahead:
            return self._ahead.pop(name)
        if self._conn is None or name in self._gone:
            return None
        try:
            if not value:
                found = self._conn.execute("SELECT deps, mac FROM facts WHERE name = ?", (name,)).fetchone()
                texts = None if found is None else _texts("", found[0], found[1])
                return None if texts is None else (None, texts[1], texts[2])
            found = self._conn.execute("SELECT value, deps, mac FROM facts WHERE name = ?", (name,)).fetchone()
        except sqlite3.DatabaseError as exc:
            self._give_up_or_rebuild(exc)
            return None
        return None if found is None else _texts(found[0], found[1], found[2])

    def prefetch(self, names: Sequence[str]) -> None:
        """Read the kept rows of *names* (at most :data:`BATCH`, about to be asked for) in one query, in place of
        those read ahead before: a pass over every task asks for its facts a batch at a time, and never holds
        more than a batch of them."""
        self._ahead = {}
        # At most a batch: SQLite takes at most 999 parameters in one statement where it is older than 3.32.
        wanted = [name for name in names[:BATCH] if name not in self._pending and name not in self._gone]
        if self._conn is None or self._key is None or not wanted:
            return
        marks = ",".join("?" * len(wanted))
        try:
            rows = self._conn.execute(f"SELECT name, value, deps, mac FROM facts WHERE name IN ({marks})", wanted)
            ahead = {name: _texts(value, deps, mac) for name, value, deps, mac in rows}
            self._ahead = {name: row for name, row in ahead.items() if row is not None}
        except sqlite3.DatabaseError as exc:
            self._give_up_or_rebuild(exc)

    def kept(self, name: str) -> Any | None:
        """The JSON value kept for *name* when it is still fresh (its MAC checks and every path it read is as it
        was), else None."""
        found = self._found(name, _parsed)
        return None if found is _MISSING else found

    def kept_text(self, name: str) -> str | None:
        """The JSON text kept for *name*, unparsed, when it is still fresh (:meth:`kept`), else None: a reader of
        a large value (the inbox of 100,000 tasks is tens of megabytes of JSON) takes it a part at a time
        (:func:`okstra_core.reading.object_rows`) and never holds it parsed whole."""
        found = self._found(name, _as_is, late=True)
        return found if isinstance(found, str) else None

    def _late_value(self, name: str, mac: str) -> str | None:
        """The value of *name*'s row while its MAC is still *mac* (checked already) and the value is the one that
        MAC covers, else None: read a megabyte at a time into one buffer and decoded once, where a query's answer
        is held three times over at once (SQLite's copy, its bytes, the text)."""
        if self._conn is None:
            return None
        try:
            found = self._conn.execute(
                "SELECT rowid FROM facts WHERE name = ? AND mac = ? AND typeof(value) = 'text'", (name, mac)
            ).fetchone()
            if found is None:
                return None
            with self._conn.blobopen("facts", "value", found[0], readonly=True) as blob:
                data = bytearray(len(blob))
                view, at = memoryview(data), 0
                while at < len(data) and (chunk := blob.read(_CHUNK_CHARS)):
                    view[at : at + len(chunk)] = chunk
                    at += len(chunk)
                view.release()
        except sqlite3.DatabaseError as exc:
            self._give_up_or_rebuild(exc)
            return None
        if at != len(data):
            return None
        value = _text_of(data)
        del data
        return value if hmac.compare_digest(bytes.fromhex(mac[:_VALUE_DIGEST_CHARS]), _value_digest(value)) else None

    def holds(self, name: str) -> bool:
        """Whether a value is kept for *name* whose row is this index's (its MAC checks) and whose record of reads
        still holds, without fetching the value (a caller that asks only whether the store changed: a polling
        watcher's look each second, where the kept inbox of a large store is megabytes of JSON). A value changed
        under its MAC is found by whoever reads it (:meth:`kept`, :meth:`fact`), and never used."""
        return self._found(name, None) is not _MISSING

    def _found(self, name: str, decode: Callable[[str], T | object] | None, *, late: bool = False) -> T | object:
        """*decode* of the JSON text kept for *name* when it is still fresh, else :data:`_MISSING` (also when
        *decode* says the value does not decode); with no *decode* the value is not read, and a fresh one gives
        True. Where the looks are shared with a forked process, the value is decoded while that process looks,
        and let go if the looks say it is stale. With *late*, the value is read only once its reads are found to
        hold (:meth:`_late_value`): a value of tens of megabytes is never held beside that check."""
        self._consulted.add(name)
        row = self._row(name, decode is not None and not late) if self._key is not None else None
        if row is None:
            return _MISSING
        value, deps, mac = row
        if not self._signed(name, value, deps, mac):
            return _MISSING
        if name in self._macs_followed:
            self._macs_found[name] = mac
        # A kept inbox of 10,000 tasks is tens of thousands of paths and decisions: no container in it is cyclic.
        recording = reading.recording_now()
        digest = hashlib.blake2b(deps, digest_size=16).digest()
        held = None
        by = (self.look, getattr(self.look, "forgotten", 0))
        if self._held_by is None or self._held_by[0] is not by[0] or self._held_by[1] != by[1]:
            self._held, self._stale, self._held_by = set(), set(), by
        decoded: list[T | object] = []
        wanted = value is None and decode is not None  # read late: not while the reads are looked at
        with collector.paused():
            # Every path is looked at once per index (LookedOnce): reads found to hold hold for another fact too.
            if digest in self._stale:
                return _MISSING
            if digest in self._held and not recording:
                pass
            elif (
                recording
                or (
                    streamed := self._holds_streamed(
                        deps, None if wanted else lambda: decoded.append(_taken(value, decode))
                    )
                )
                is None
            ):
                held = self._deps_of(deps)  # the paths themselves are wanted, or only the whole record can say
                if held is None:
                    self._stale.add(digest)
                    return _MISSING
            elif not streamed:
                self._stale.add(digest)
                return _MISSING
            self._held.add(digest)
            if wanted:
                if held is None:
                    row, deps = None, b""  # not wanted again: let go before the value is read
                value = self._late_value(name, mac)
                if value is None:
                    return _MISSING
            result = decoded[0] if decoded else _taken(value, decode)
        if result is _MISSING:
            return _MISSING
        # A fact computed from this one depends on what this one was computed from.
        if recording and held is not None:
            paths, sigs, linked = held
            packed = (self._prefix, deps_segments(record_text(deps)))
            reading.note_reads(lambda: dict(zip(paths, sigs, strict=True)), linked, packed=packed)
        return result

    def fact(
        self,
        name: str,
        compute: Callable[[], T],
        encode: Callable[[T], Any],
        decode: Callable[[Any], T],
        *,
        siblings: Callable[[], Mapping[str, Any]] | None = None,
    ) -> T:
        """The fact *name*: *decode* of the kept JSON value when it is fresh, else *compute*\\ d now (recording
        what it reads) and kept as *encode* gives it.

        Facts nest: a fact computed from other facts depends on every path they were computed from, whether
        they were reused or computed, so one look at those paths confirms the whole. When it is computed,
        *siblings* gives the JSON values of other facts that computing it found too, by name: they are kept as
        read from the same paths.
        """
        found = self._found(name, partial(_decoded, decode=decode))  # a value of another shape is computed afresh
        if found is not _MISSING:
            self.reused += 1
            return cast(T, found)
        try:
            with reading.recording(self._prefix) as reads:
                result = compute()
        except BaseException:
            # A fact around this one that catches the error depends on what was read as much as on a result.
            if reading.fact_recording_now():
                failed = pack_deps(reads.paths, reads.linked, self._prefix, reads.nested)
                reading.note_nested(self._prefix, deps_segments(failed), lambda: self._table(failed))
            raise
        self.computed += 1
        nested = reading.fact_recording_now()
        record: bytes | None = None
        if nested:
            deps = pack_deps(reads.paths, reads.linked, self._prefix, reads.nested)
            reads.nested.clear()
            reading.note_nested(self._prefix, deps_segments(deps), lambda: self._table(deps))
            if self._conn is not None:
                record = packed_record(deps)
        elif self._conn is not None:
            # Kept only: deflated as it is packed (the record of a fact made of every task is tens of megabytes).
            record = packed_deps(reads.paths, reads.linked, self._prefix, reads.nested)
            reads.nested.clear()
        if record is not None:
            self._keep(name, json.dumps(encode(result), separators=(",", ":")), record)
            for other, value in (siblings() if siblings is not None else {}).items():
                self._keep(other, json.dumps(value, separators=(",", ":")), record)
        return result

    def follow_mac(self, name: str) -> None:
        """Say which MAC the fact *name* is found kept with (:meth:`found_mac`) and left with (:meth:`left_mac`):
        a caller that left it with one and finds another knows another process kept it in between."""
        self._macs_followed.add(name)

    def found_mac(self, name: str) -> str | None:
        """The MAC the fact *name* was kept with when it was looked up (None: not kept, or not signed here)."""
        return self._macs_found.get(name)

    def left_mac(self, name: str) -> str | None:
        """The MAC the fact *name* is left with: the one computed now, to be kept at :meth:`flush`, else the one
        it was found with."""
        row = self._pending.get(name)
        return row[2] if row is not None else self._macs_found.get(name)

    def _table(self, deps: str) -> tuple[watch.Signature, AbstractSet[str]]:
        """What *deps* (as packed here a moment ago) says was read, path by path."""
        unpacked = unpack_deps(deps, self._prefix)
        if unpacked is None:  # two looks at one path disagreed: an unsettled look makes the fact never hold
            return {self._prefix: watch.UNSETTLED}, frozenset()
        paths, sigs, linked = unpacked
        return dict(zip(paths, sigs, strict=True)), linked

    def _keep(self, name: str, value: str, record: bytes) -> None:
        """Keep *value* with the record of what it was read from (as :func:`packed_record` deflated it)."""
        self._gone.discard(name)
        self._pending[name] = (value, record, self._mac(name, value, record))
        if len(self._pending) >= BATCH:
            self._write(None)

    def flush(self) -> None:
        """Write the facts computed since the last flush (one transaction); a failure only loses them.

        With a new watchman clock, the facts this process did not look up are checked first (those that no
        longer hold are dropped), so every kept fact holds as of the new clock; the clock is kept only if no
        other process kept one since this one read it (else none is kept, and the next process looks at
        every path once). After a write that failed, the clock is left as it was: the rows that write would
        have replaced may no longer hold, and only the changes since the old clock name their paths again."""
        clock = None if self._lost else self._clock_new
        if self._conn is None or not (self._pending or self._gone or clock is not None):
            return
        if clock is not None:
            self._settle_unconsulted()
        self._clock_new = None
        self._write(clock)

    def _write(self, clock: str | None) -> None:
        """Write the facts computed and drop those gone, in one transaction, and let them go (written or not: a
        failure only loses them); with *clock*, keep it as the clock they hold as of."""
        assert self._conn is not None
        rows = [(name, *row) for name, row in self._pending.items()]
        gone = [(name,) for name in self._gone]
        self._pending, self._gone = {}, set()
        try:
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany("DELETE FROM facts WHERE name = ?", gone)
                self._conn.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?)", rows)
                if clock is not None:
                    keep_clock(self._conn, "meta", self._clock_kept, clock)
                    self._clock_kept = clock
        except sqlite3.DatabaseError as exc:
            self._lost = True
            self.notices.append(f"cannot keep the store index in {self.path.parent}: {exc}")

    def _settle_unconsulted(self) -> None:
        """Drop the kept facts not looked up in this process whose paths no longer hold (nothing to do when the
        freshness source says nothing changed)."""
        look = self.look
        if isinstance(look, ChangedSince) and look.changed is not None and not look.changed:
            return
        assert self._conn is not None
        try:
            rows = self._conn.execute("SELECT name, value, deps, mac FROM facts")
            for name, *row in rows:  # one row at a time: the kept facts are never all held
                if not _ours(name) or name in self._consulted or name in self._pending or name in self._gone:
                    continue
                texts = _texts(*row)
                if texts is None or not self._signed(name, *texts) or self._deps_of(texts[1]) is None:
                    self._gone.add(name)
        except sqlite3.DatabaseError as exc:
            self.notices.append(f"cannot keep the store index in {self.path.parent}: {exc}")

    def prune(self, prefix: str, used: set[str]) -> None:
        """Forget the kept facts whose name starts with *prefix* and is not in *used* (tasks that are no more)."""
        if self._conn is None:
            return
        try:
            # A range of the key (SQLite's own text functions stop at the NUL the names hold).
            after = prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else "\U0010ffff"
            names = self._conn.execute("SELECT name FROM facts WHERE name >= ? AND name < ?", (prefix, after))
            gone = [name for (name,) in names if _ours(name) and name.startswith(prefix) and name not in used]
        except sqlite3.DatabaseError as exc:
            self._give_up_or_rebuild(exc)
            return
        for name in gone:
            self._pending.pop(name, None)
            self._ahead.pop(name, None)
        self._gone.update(gone)

    def close(self, keep: bool = True) -> None:
        """Keep what was computed (:meth:`flush`) and close; with *keep* False, close without keeping anything
        (a quick look that must not spend time settling a new clock)."""
        if keep:
            self.flush()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> StoreIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
