"""The catalog listing's cache: a hit only for the very catalog it was made from, never trusted beyond its shape."""

from __future__ import annotations

import json
import os
from pathlib import Path

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


@pytest.mark.parametrize(
    "damage",
    [
        b"not json at all",
        b'{"format": 1}\n[1, 2, 3]',
        b"",
        None,  # a right header over a body of the wrong shape: an entry whose key is not a string
    ],
)
def test_a_damaged_cache_is_a_miss(fresh_demo: Path, damage: bytes | None) -> None:
    catalog = layout.task_catalog_path(fresh_demo)
    _settled(catalog)
    _cached(fresh_demo)
    cache = listing_cache.cache_file(fresh_demo)
    if damage is None:
        head, _, body = cache.read_bytes().partition(b"\n")
        flat = json.loads(body)
        flat[0] = 7
        damage = head + b"\n" + json.dumps(flat).encode()
    cache.write_bytes(damage)
    listing, save = _listing(fresh_demo)
    assert listing == Project(fresh_demo).catalog_listing() and save is not None


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
