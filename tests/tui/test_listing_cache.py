"""The catalog listing's cache: a hit only for the very catalog it was made from, never trusted beyond its shape."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.errors import LoadError
from okstra_core.store import CatalogListingEntry, Project
from okstra_tui.data import listing_cache


def _settled(catalog: Path) -> None:
    """Date the catalog back, as one written minutes ago (a just-written one is not cached)."""
    st = catalog.stat()
    os.utime(catalog, ns=(st.st_atime_ns, st.st_mtime_ns - 10 * listing_cache.SETTLED_NS))


def _listing(root: Path) -> tuple[list[CatalogListingEntry] | LoadError, Callable[[], None] | None]:
    listing, save = listing_cache.read_listing(Project(root))
    return listing if isinstance(listing, LoadError) else listing.entries, save


def _cached(root: Path) -> list[CatalogListingEntry]:
    """Read the listing, cache it, and return it as the next reading gives it from the cache."""
    fresh, save = _listing(root)
    assert save is not None and not isinstance(fresh, LoadError)
    save()
    again, save_again = _listing(root)
    assert save_again is None and again == fresh  # a hit: nothing to save
    assert not isinstance(again, LoadError)
    return again


def _cache_file_written(root: Path) -> tuple[Path, bytes]:
    """Cache the listing of a settled catalog; the cache file and what it holds."""
    _settled(layout.task_catalog_path(root))
    _cached(root)
    cache = listing_cache.cache_file(root)
    return cache, cache.read_bytes()


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


class Parts:
    """A cache file taken apart: its header, its tables' positions and its text part."""

    def __init__(self, data: bytes) -> None:
        line, _, rest = data.partition(b"\n")
        self.head: dict[str, Any] = json.loads(line)
        count, width = self.head["count"], listing_cache.CODE_WIDTHS[self.head["codes"]]
        split = count * width * len(self.head["tables"])
        self.codes = bytearray(rest[:split])
        self.text = rest[split:]

    def __bytes__(self) -> bytes:
        return json.dumps(self.head).encode() + b"\n" + bytes(self.codes) + self.text


def _header_of_the_earlier_format(parts: Parts) -> None:
    parts.head["format"] = 2


def _header_with_a_field_more(parts: Parts) -> None:
    parts.head["extra"] = 1


def _the_other_byte_order(parts: Parts) -> None:
    parts.head["order"] = "big" if sys.byteorder == "little" else "little"


def _a_count_that_is_not_a_number(parts: Parts) -> None:
    parts.head["count"] = True


def _a_negative_count(parts: Parts) -> None:
    parts.head["count"] = -1


def _an_unknown_position_format(parts: Parts) -> None:
    parts.head["codes"] = "Q"


def _a_table_missing(parts: Parts) -> None:
    parts.head["tables"].pop()


def _a_table_value_of_another_type(parts: Parts) -> None:
    parts.head["tables"][1][0] = 5


def _a_position_past_the_table(parts: Parts) -> None:
    parts.codes[0] = len(parts.head["tables"][0])


def _a_missing_key(parts: Parts) -> None:
    parts.text = listing_cache.MISSING.encode() + parts.text[parts.text.index(b"\0") :]


def _a_value_too_few(parts: Parts) -> None:
    parts.text = parts.text[parts.text.index(b"\0") + 1 :]


def _text_after_the_last_value(parts: Parts) -> None:
    parts.text += b"more"


def _text_that_is_not_utf8(parts: Parts) -> None:
    parts.text = b"\xff" + parts.text


def _cut_short(parts: Parts) -> None:
    parts.text = b""
    del parts.codes[1:]


@pytest.mark.parametrize(
    "damage",
    [
        b"not json at all",
        pytest.param(b"[" * 200_000 + b"\n", id="a header nested deeper than the parser goes"),
        b'{"format": 2, "identity": [1]}\n[[], [], [], [], [], [], [], []]',
        b"",
        _header_of_the_earlier_format,
        _header_with_a_field_more,
        _the_other_byte_order,
        _a_count_that_is_not_a_number,
        _a_negative_count,
        _an_unknown_position_format,
        _a_table_missing,
        _a_table_value_of_another_type,
        _a_position_past_the_table,
        _a_missing_key,
        _a_value_too_few,
        _text_after_the_last_value,
        _text_that_is_not_utf8,
        _cut_short,
    ],
)
def test_a_damaged_cache_is_a_miss(fresh_demo: Path, damage: bytes | Callable[[Parts], None]) -> None:
    cache, data = _cache_file_written(fresh_demo)
    if not isinstance(damage, bytes):
        parts = Parts(data)
        damage(parts)  # a cache of the right identity with something wrong in it
        damage = bytes(parts)
        assert damage != data
    cache.write_bytes(damage)
    _assert_missed(fresh_demo)


def test_the_earlier_formats_file_is_removed_when_the_cache_is_written(fresh_demo: Path) -> None:
    earlier = listing_cache.cache_file(fresh_demo).with_suffix(".json")
    earlier.parent.mkdir(parents=True, exist_ok=True)
    earlier.write_text("[]", encoding="utf-8")
    _cache_file_written(fresh_demo)
    assert not earlier.exists()


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
    _, data = _cache_file_written(fresh_demo)
    parts = Parts(data)
    assert parts.head["codes"] == "B" and len(parts.head["tables"]) == 3
    listing, save = _listing(fresh_demo)
    assert save is None and not isinstance(listing, LoadError)
    assert listing == Project(fresh_demo).catalog_listing()
    for field in ("task_group", "task_type", "current_status"):
        values = [getattr(entry, field) for entry in listing]
        assert len(set(map(id, values))) == len(set(values)) < len(values)


IDENTITY = [1, 2, 3, 4, 5]


def _columns(rows: list[tuple[str | None, ...]]) -> list[list[str | None]]:
    return [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in range(8)]


def test_missing_values_wide_tables_and_no_tasks_read_back_as_written(tmp_path: Path) -> None:
    """Values the demo does not have: missing ones, empty and non-ASCII ones, a table of 300 groups (two bytes
    per position), and a catalog with no task at all."""
    rows: list[tuple[str | None, ...]] = [
        (f"p:g{n}/t{n}", f"g{n}", f"t{n}", None if n % 3 else "feature", None, "" if n % 2 else "tâche ✓", None, "x")
        for n in range(300)
    ]
    for written in (_columns(rows), _columns([])):
        listing_cache.save(tmp_path, IDENTITY, written)
        assert listing_cache.load(tmp_path, IDENTITY) == written
    assert Parts(listing_cache.cache_file(tmp_path).read_bytes()).head["codes"] == "B"  # the empty one
    listing_cache.save(tmp_path, IDENTITY, _columns(rows))
    assert Parts(listing_cache.cache_file(tmp_path).read_bytes()).head["codes"] == "H"
    assert listing_cache.load(tmp_path, [9, 9, 9, 9, 9]) is None  # another catalog's identity


@pytest.mark.parametrize(
    "value", ["a\x00b", "\x01", "end\x01", "\ud800"], ids=["NUL", "SOH", "ends in SOH", "surrogate"]
)
def test_a_value_the_text_part_cannot_hold_is_not_cached(tmp_path: Path, value: str) -> None:
    def row(title: str) -> list[tuple[str | None, ...]]:
        return [("p:g/t1", "g", "t1", None, None, title, None, None)]

    listing_cache.save(tmp_path, IDENTITY, _columns(row("plain")))  # the same listing with a plain title is
    assert listing_cache.load(tmp_path, IDENTITY) == _columns(row("plain"))  # cached, where the odd one is not
    listing_cache.cache_file(tmp_path).unlink()
    listing_cache.save(tmp_path, IDENTITY, _columns(row(value)))
    assert not listing_cache.cache_file(tmp_path).exists()
    assert listing_cache.load(tmp_path, IDENTITY) is None
