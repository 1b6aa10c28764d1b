"""The catalog listing's cache: the workbench's first frame without parsing ``task-catalog.json`` again.

Parsing a 10,000-task catalog into objects and checking their shape is most of
the workbench's own start-up work (tens of milliseconds; it grows with the
store). When the catalog has not changed since the last start, its listing is
read from the user's cache folder (:func:`okstra_core.layout.okstra_cache_dir`,
never the store) instead, as columns (one list per
:class:`~okstra_core.store.CatalogListingEntry` field):

- a header line, JSON: the format, the catalog's identity, the number of tasks,
  and for each field whose values repeat (the group, type and status) its table
  of distinct values;
- for each of those fields, each task's position in its table, one unsigned
  integer per task in the machine's own order (``B``, ``H`` or ``I``, as the
  header says): one byte per task while a table has at most 256 values;
- then every other field's values, field after field, as UTF-8 text, each
  value ended by NUL; a missing value (``None``) is SOH. A listing holding a
  value with a NUL or SOH in it is not cached.

Loading it is one split of the text and one C pass per table: no JSON value per
task, and no check per task beyond the split's count and each table's largest
position.

The cached listing is kept under the catalog's identity as one ``stat`` gives
it (device, inode, size, modification and change times, in nanoseconds): a
catalog published by a rename has a new inode, one rewritten in place a new
change time, which no program can set. A listing is saved only for a catalog
that was last changed long enough ago that a second write within the same
timestamp tick cannot follow unseen. A cached listing is checked for its shape
as a fresh one is, and the caller confirms what it shows with the validated
catalog (as it does a fresh listing): a damaged or forged cache file can at
worst show rows that the confirmation replaces, never run code or reach
outside the cache folder.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Final, cast

from okstra_core import layout, reading
from okstra_core.errors import LoadError, OkstraError
from okstra_core.store import LISTING_OPTIONAL, LISTING_SHARED, CatalogListing, Project

#: The cache file's format; another value is a miss (1: one flat JSON list; 2: JSON columns).
FORMAT: Final = 3

#: The fields of an entry: the number of columns, in the listing's own field order.
FIELDS: Final = len(LISTING_OPTIONAL)

#: The fields kept as text (those not kept as a table of distinct values), in field order.
TEXT_FIELDS: Final = tuple(i for i in range(FIELDS) if i not in LISTING_SHARED)

#: Ends every value in the text part.
END: Final = "\x00"
#: Stands for a missing value in the text part.
MISSING: Final = "\x01"

#: The position formats a table's codes may take, and the bytes each takes per task.
CODE_WIDTHS: Final = {"B": 1, "H": 2, "I": 4}

#: A catalog modified less than this long before it was read is not cached (file systems stamp whole seconds
#: at worst, and a second write within the same stamp, same size and same inode would go unseen).
SETTLED_NS: Final = 2_000_000_000


def cache_file(project_root: Path) -> Path:
    """Where the listing of *project_root*'s catalog is cached."""
    return layout.okstra_cache_dir() / "catalog-listing" / f"{layout.project_digest(project_root)}.bin"


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def read_listing(project: Project) -> tuple[CatalogListing | LoadError, Callable[[], None] | None]:
    """The catalog's listing (as :meth:`Project.catalog_listing` reads it) and, when it was not cached and can
    be, a function that caches it: the caller runs it off its hurry (a worker)."""
    path = layout.task_catalog_path(project.root)
    try:
        st = os.stat(path)
    except OSError:
        return _listing(project), None  # the reader says why (missing, a loop, ...)
    identity = _identity(st)
    cached = load(project.root, identity)
    if cached is not None:
        return CatalogListing(columns=cached), None
    listing = _listing(project)
    if isinstance(listing, LoadError) or time.time_ns() - st.st_mtime_ns < SETTLED_NS:
        return listing, None
    return listing, lambda: save(project.root, identity, listing.columns)


def _listing(project: Project) -> CatalogListing | LoadError:
    entries = project.catalog_listing()
    return entries if isinstance(entries, LoadError) else CatalogListing(entries=entries)


def load(project_root: Path, identity: list[int]) -> list[list[Any]] | None:
    """The cached columns of the catalog whose identity is *identity*; ``None`` on a miss or anything odd."""
    data = reading.read_bytes(cache_file(project_root), max_bytes=reading.CATALOG_MAX_BYTES)
    if isinstance(data, LoadError):
        return None
    end = data.find(b"\n")
    try:
        head = json.loads(data[:end]) if end >= 0 else None
    except (ValueError, RecursionError):  # RecursionError: arrays nested deeper than the parser goes
        return None
    if type(head) is not dict or head.keys() != {"format", "identity", "order", "count", "codes", "tables"}:
        return None
    if head["format"] != FORMAT or head["identity"] != identity or head["order"] != sys.byteorder:
        return None
    count, code, tables = head["count"], head["codes"], head["tables"]
    if type(count) is not int or count < 0 or code not in CODE_WIDTHS or type(tables) is not list:
        return None
    if len(tables) != len(LISTING_SHARED):
        return None
    body = memoryview(data)[end + 1 :]
    size = count * CODE_WIDTHS[code]
    text_start = size * len(LISTING_SHARED)
    if text_start > len(body):
        return None
    try:
        values = str(body[text_start:], "utf-8").split(END)
    except UnicodeDecodeError:
        return None
    if values.pop() or len(values) != count * len(TEXT_FIELDS):  # every value ends in END: nothing after the last
        return None
    columns: list[list[Any]] = [[]] * FIELDS
    for n, index in enumerate(TEXT_FIELDS):
        column: list[Any] = values[n * count : (n + 1) * count]
        if MISSING in column:
            if not LISTING_OPTIONAL[index]:
                return None
            column = [None if value == MISSING else value for value in column]
        columns[index] = column
    for n, (index, table) in enumerate(zip(LISTING_SHARED, tables, strict=True)):
        allowed = {str, type(None)} if LISTING_OPTIONAL[index] else {str}
        if type(table) is not list or not set(map(type, table)) <= allowed:
            return None
        # Cast to an integer format, a memoryview gives ints (its stubs only know the bytes one).
        codes = cast("Sequence[int]", body[n * size : (n + 1) * size].cast(code))
        if count and max(codes) >= len(table):  # unsigned: no position is negative
            return None
        columns[index] = list(map(table.__getitem__, codes))
    return columns


def save(project_root: Path, identity: list[int], columns: list[list[Any]]) -> None:
    """Cache the listing's *columns* under *identity*; a cache that cannot be written (or a value the text part
    cannot hold) is only a slower next start."""
    from array import array

    from okstra_core import writes_outside

    count = len(columns[0])
    tables: list[list[Any]] = []
    positions: list[list[int]] = []
    for index in LISTING_SHARED:
        table = list(dict.fromkeys(columns[index]))
        place = {value: n for n, value in enumerate(table)}
        tables.append(table)
        positions.append(list(map(place.__getitem__, columns[index])))
    largest = max(map(len, tables), default=0)
    code = next((c for c, width in CODE_WIDTHS.items() if largest <= 1 << (8 * width)), None)
    if code is None or array(code).itemsize != CODE_WIDTHS[code]:
        return
    texts = [
        [MISSING if value is None else value for value in columns[index]] if LISTING_OPTIONAL[index] else columns[index]
        for index in TEXT_FIELDS
    ]
    text = END.join(chain.from_iterable(texts)) + END if count else ""
    missing = sum(columns[index].count(None) for index in TEXT_FIELDS)
    if text.count(END) != count * len(TEXT_FIELDS) or text.count(MISSING) != missing:
        return  # a value holds NUL or SOH: it would read back as two values, or as a missing one
    head = {"format": FORMAT, "identity": identity, "order": sys.byteorder, "count": count, "codes": code}
    head["tables"] = tables
    try:
        body = text.encode("utf-8")  # a lone surrogate (from a \ud800 in the catalog) cannot be encoded
        data = b"".join(
            [json.dumps(head, separators=(",", ":")).encode("ascii"), b"\n"]
            + [array(code, p).tobytes() for p in positions]
            + [body]
        )
        target = cache_file(project_root)
        writes_outside.replace_file(target, data)
        target.with_suffix(".json").unlink(missing_ok=True)  # the earlier formats' file, if any
    except (OSError, OkstraError, UnicodeEncodeError):
        return
