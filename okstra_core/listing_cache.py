"""The catalog listing's cache: the workbench's first frame without parsing ``task-catalog.json`` again.

Parsing a 10,000-task catalog into objects and checking their shape is most of
the workbench's own start-up work (tens of milliseconds; it grows with the
store). When the catalog has not changed since the last start, its listing is
read from the user's cache folder (:func:`okstra_core.layout.okstra_cache_dir`,
never the store) instead: one JSON column per field, in
:class:`~okstra_core.store.CatalogListingEntry` order (the fields whose values
repeat, such as the group, as a table of distinct values and a position per
task), about a quarter of the catalog's size and several times quicker to load.

The cached listing is kept under the catalog's identity as one ``stat`` gives
it (device, inode, size, modification and change times, in nanoseconds): a
catalog published by a rename has a new inode, one rewritten in place a new
change time, which no program can set. A listing is saved only for a catalog
that was last changed long enough ago that a second write within the same
timestamp tick cannot follow unseen. A cached listing goes through the same
shape checks as a fresh one, and the caller confirms what it shows with the
validated catalog (as it does a fresh listing): a damaged or forged cache file
can at worst show rows that the confirmation replaces, never run code or reach
outside the cache folder.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from . import layout, reading
from .errors import LoadError, OkstraError
from .store import LISTING_OPTIONAL, LISTING_SHARED, CatalogListingEntry, Project, listing_entries

#: The cache file's format; another value is a miss (format 1 held one flat list of every entry's fields).
FORMAT: Final = 2

#: The fields of an entry: the number of columns, in the listing's own field order.
FIELDS: Final = len(CatalogListingEntry._fields)

#: A catalog modified less than this long before it was read is not cached (file systems stamp whole seconds
#: at worst, and a second write within the same stamp, same size and same inode would go unseen).
SETTLED_NS: Final = 2_000_000_000


def cache_file(project_root: Path) -> Path:
    """Where the listing of *project_root*'s catalog is cached."""
    return layout.okstra_cache_dir() / "catalog-listing" / f"{layout.project_digest(project_root)}.json"


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def read_listing(
    project: Project,
) -> tuple[list[CatalogListingEntry] | LoadError, Callable[[], None] | None]:
    """The catalog's listing (as :meth:`Project.catalog_listing` gives it) and, when it was not cached and can
    be, a function that caches it: the caller runs it off its hurry (a worker)."""
    path = layout.task_catalog_path(project.root)
    try:
        st = os.stat(path)
    except OSError:
        return project.catalog_listing(), None  # the reader says why (missing, a loop, ...)
    identity = _identity(st)
    cached = load(project.root, identity)
    if cached is not None:
        return cached, None
    listing = project.catalog_listing()
    if isinstance(listing, LoadError) or time.time_ns() - st.st_mtime_ns < SETTLED_NS:
        return listing, None
    return listing, lambda: save(project.root, identity, listing)


def load(project_root: Path, identity: list[int]) -> list[CatalogListingEntry] | None:
    """The cached listing of the catalog whose identity is *identity*; ``None`` on a miss or anything odd."""
    data = reading.read_bytes(cache_file(project_root), max_bytes=reading.CATALOG_MAX_BYTES)
    if isinstance(data, LoadError):
        return None
    head, sep, body = data.partition(b"\n")
    try:
        if not sep or json.loads(head) != {"format": FORMAT, "identity": identity}:
            return None
        stored = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: arrays nested deeper than the parser goes
        return None
    if not isinstance(stored, list) or len(stored) != FIELDS:
        return None
    read = list(map(_column, stored, LISTING_OPTIONAL))
    columns = [column for column in read if column is not None]
    if len(columns) != FIELDS or len(set(map(len, columns))) != 1:
        return None
    return listing_entries(columns, shared=[i for i in LISTING_SHARED if isinstance(stored[i], dict)])


def _column(stored: object, optional: bool) -> list[Any] | None:
    """One field's values from the cache: a list of them, or a table of distinct values and a list of
    positions in it (``{"values": [...], "codes": [...]}``); ``None`` when it is neither or holds another type.

    A table needs no check per task, only per distinct value; and the values it gives are one object each
    however many tasks repeat them, as :func:`~okstra_core.store.shared_values` would make them.
    """
    allowed = {str, type(None)} if optional else {str}
    if type(stored) is list:
        return stored if set(map(type, stored)) <= allowed else None
    if type(stored) is not dict or stored.keys() != {"values", "codes"}:
        return None
    values, codes = stored["values"], stored["codes"]
    if type(values) is not list or type(codes) is not list or not set(map(type, values)) <= allowed:
        return None
    if codes and (set(map(type, codes)) != {int} or min(codes) < 0 or max(codes) >= len(values)):
        return None
    return list(map(values.__getitem__, codes))


def save(project_root: Path, identity: list[int], listing: list[CatalogListingEntry]) -> None:
    """Cache *listing* under *identity*; a cache that cannot be written is only a slower next start."""
    from . import writes_outside

    columns: list[object] = [list(c) for c in zip(*listing, strict=True)] if listing else [[]] * FIELDS
    for index in LISTING_SHARED:
        columns[index] = _table(columns[index])  # type: ignore[arg-type]
    head = json.dumps({"format": FORMAT, "identity": identity}, separators=(",", ":"))
    body = json.dumps(columns, ensure_ascii=True, separators=(",", ":"))
    try:
        writes_outside.replace_file(cache_file(project_root), (head + "\n" + body).encode("ascii"))
    except (OSError, OkstraError):
        return


def _table(values: list[str | None]) -> dict[str, list[str | None] | list[int]]:
    """A column of repeated values as its distinct values and each task's position among them."""
    distinct = list(dict.fromkeys(values))
    position = {value: n for n, value in enumerate(distinct)}
    return {"values": distinct, "codes": list(map(position.__getitem__, values))}
