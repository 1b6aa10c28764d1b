"""The catalog listing's cache: a hit only for the very catalog it was made from, never trusted beyond its shape."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout, listing_cache
from okstra_core.errors import LoadError
from okstra_core.store import Project


def _settled(catalog: Path) -> None:
    """Date the catalog back, as one written minutes ago (a just-written one is not cached)."""
    st = catalog.stat()
    os.utime(catalog, ns=(st.st_atime_ns, st.st_mtime_ns - 10 * listing_cache.SETTLED_NS))


def _listing(root: Path) -> tuple[object, object]:
    return listing_cache.read_listing(Project(root))


def _cached(root: Path) -> list[object]:
    """Read the listing, cache it, and return it as the next reading gives it from the cache."""
    fresh, save = _listing(root)
    assert save is not None and not isinstance(fresh, LoadError)
    save()
    again, save_again = _listing(root)
    assert save_again is None and again == fresh  # a hit: nothing to save
    return again  # type: ignore[return-value]


def _cache_file_written(root: Path) -> tuple[Path, bytes, bytes]:
    """Cache the listing of a settled catalog; the cache file, its header line and its body."""
    _settled(layout.task_catalog_path(root))
    _cached(root)
    cache = listing_cache.cache_file(root)
    head, _, body = cache.read_bytes().partition(b"\n")
    return cache, head, body


def _assert_missed(root: Path) -> None:
    """The next reading comes from the catalog itself (and offers to cache it again), as if nothing was cached."""
    listing, save = _listing(root)
    assert listing == Project(root).catalog_listing() and save is not None


def test_a_settled_catalog_is_cached_outside_the_store_and_read_back(fresh_demo: Path) -> None:
    catalog = layout.task_catalog_path(fresh_demo)
    _settled(catalog)
    before = {p: p.stat().st_mtime_ns for p in fresh_demo.rglob("*")}
    assert _cached(fresh_demo) == Project(fresh_demo).catalog_listing()
    cache = listing_cache.cache_file(fresh_demo)
    assert cache.is_file() and not cache.is_relative_to(fresh_demo)
    assert {p: p.stat().st_mtime_ns for p in fresh_demo.rglob("*")} == before  # the store is untouched


def test_a_just_written_catalog_is_not_cached(fresh_demo: Path) -> None:
    catalog = layout.task_catalog_path(fresh_demo)
    catalog.write_bytes(catalog.read_bytes())  # written now: a second write could follow within the same stamp
    listing, save = _listing(fresh_demo)
    assert save is None and not isinstance(listing, LoadError)


@pytest.mark.parametrize("how", ["renamed over", "edited in place, same size and mtime"])
def test_a_changed_catalog_misses(fresh_demo: Path, how: str) -> None:
    catalog = layout.task_catalog_path(fresh_demo)
    _settled(catalog)
    _cached(fresh_demo)
    doc = json.loads(catalog.read_text(encoding="utf-8"))
    old_title = doc["tasks"][0]["title"]
    doc["tasks"][0]["title"] = "X" * len(old_title)  # same length: the same size in bytes
    data = json.dumps(doc, indent=2).encode()
    st = catalog.stat()
    if how == "renamed over":
        (catalog.parent / "next.json").write_bytes(data)
        os.replace(catalog.parent / "next.json", catalog)
    else:
        with open(catalog, "r+b") as fh:
            fh.write(data)
            fh.truncate()
    os.utime(catalog, ns=(st.st_atime_ns, st.st_mtime_ns))  # the change time still moves
    listing, _ = _listing(fresh_demo)
    assert not isinstance(listing, LoadError)
    assert listing[0].title == "X" * len(old_title)


def _key_not_a_string(columns: list[Any]) -> None:
    columns[0][0] = 7


def _columns_of_unequal_length(columns: list[Any]) -> None:
    columns[2].pop()


def _a_column_not_a_list(columns: list[Any]) -> None:
    columns[1] = "platform"


def _a_column_missing(columns: list[Any]) -> None:
    columns.pop()


def _a_position_past_the_table(columns: list[Any]) -> None:
    columns[1]["codes"][0] = len(columns[1]["values"])


def _a_negative_position(columns: list[Any]) -> None:
    columns[3]["codes"][0] = -1  # Python would index from the end


def _a_position_that_is_not_an_integer(columns: list[Any]) -> None:
    columns[4]["codes"][0] = True


def _a_table_value_of_another_type(columns: list[Any]) -> None:
    columns[3]["values"][0] = 5


def _a_table_without_its_codes(columns: list[Any]) -> None:
    del columns[1]["codes"]


@pytest.mark.parametrize(
    "damage",
    [
        b"not json at all",
        pytest.param(b"[" * 200_000 + b"\n[]", id="a header nested deeper than the parser goes"),
        b'{"format": 1}\n[1, 2, 3]',
        b"",
        _key_not_a_string,
        _columns_of_unequal_length,
        _a_column_not_a_list,
        _a_column_missing,
        _a_position_past_the_table,
        _a_negative_position,
        _a_position_that_is_not_an_integer,
        _a_table_value_of_another_type,
        _a_table_without_its_codes,
    ],
)
def test_a_damaged_cache_is_a_miss(fresh_demo: Path, damage: bytes | Callable[[list[Any]], None]) -> None:
    cache, head, body = _cache_file_written(fresh_demo)
    if not isinstance(damage, bytes):
        columns = json.loads(body)
        damage(columns)  # a right header over a body of the wrong shape
        damage = head + b"\n" + json.dumps(columns).encode()
    cache.write_bytes(damage)
    _assert_missed(fresh_demo)


def test_a_cache_of_the_earlier_format_is_a_miss(fresh_demo: Path) -> None:
    """A cache written by an okstra that kept one flat list is read again from the catalog, not misread."""
    cache, head, _ = _cache_file_written(fresh_demo)
    assert b'"format":2' in head
    listing = Project(fresh_demo).catalog_listing()
    assert not isinstance(listing, LoadError)
    flat = [value for entry in listing for value in entry]
    cache.write_bytes(head.replace(b'"format":2', b'"format":1') + b"\n" + json.dumps(flat).encode())
    _assert_missed(fresh_demo)


def test_a_cache_that_cannot_be_written_is_only_a_slower_start(fresh_demo: Path) -> None:
    catalog = layout.task_catalog_path(fresh_demo)
    _settled(catalog)
    cache = listing_cache.cache_file(fresh_demo)
    cache.parent.parent.mkdir(parents=True, exist_ok=True)
    cache.parent.write_text("a file where the cache folder should be", encoding="utf-8")
    listing, save = _listing(fresh_demo)
    assert save is not None
    save()  # no error
    assert _listing(fresh_demo)[0] == listing


def test_repeated_values_come_back_as_one_object_each(fresh_demo: Path) -> None:
    """The group, type and status columns are cached as tables: a hit shares their values as a fresh read does."""
    _, _, body = _cache_file_written(fresh_demo)
    columns = json.loads(body)
    assert [i for i, column in enumerate(columns) if isinstance(column, dict)] == [1, 3, 4]
    listing, save = _listing(fresh_demo)
    assert save is None and not isinstance(listing, LoadError)
    assert listing == Project(fresh_demo).catalog_listing()
    for field in ("task_group", "task_type", "current_status"):
        values = [getattr(entry, field) for entry in listing]
        assert len(set(map(id, values))) == len(set(values)) < len(values)


def test_a_cached_column_may_be_a_plain_list(fresh_demo: Path) -> None:
    """Any column may be a plain list, even one the cache writes as a table; its values are shared then."""
    cache, head, body = _cache_file_written(fresh_demo)
    columns = json.loads(body)
    table = columns[1]
    columns[1] = [table["values"][code] for code in table["codes"]]
    cache.write_bytes(head + b"\n" + json.dumps(columns).encode())
    listing, save = _listing(fresh_demo)
    assert save is None and listing == Project(fresh_demo).catalog_listing()
    assert not isinstance(listing, LoadError)
    groups = [entry.task_group for entry in listing]
    assert len(set(map(id, groups))) == len(set(groups)) < len(groups)


def test_a_body_nested_deeper_than_the_parser_goes_is_a_miss(fresh_demo: Path) -> None:
    cache, head, _ = _cache_file_written(fresh_demo)
    cache.write_bytes(head + b"\n" + b"[" * 200_000)
    _assert_missed(fresh_demo)
