"""The search index asks watchman what changed: the folders watchman vouches for are taken as recorded, without
a look, and the hits are those of an index built afresh."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PrivateWatchman

from okstra_core import layout
from okstra_core.search import index as search_index
from okstra_core.search.index import SearchIndex
from okstra_core.search.query import parse

TASK = "payments/retry-policy"


def _looked_at(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders the look lists afresh or whose files it hashes (one ``stat`` per file): those it could not
    take as recorded."""
    seen: list[str] = []
    hashed, listing = search_index._files_hash, search_index._listing

    def counting(folder: str, names: str, now: int) -> str:
        seen.append(folder)
        return hashed(folder, names, now)

    def listing_counted(folder: str, role: str) -> tuple[str, str, str, str, bool]:
        seen.append(folder)
        return listing(folder, role)

    monkeypatch.setattr(search_index, "_files_hash", counting)
    monkeypatch.setattr(search_index, "_listing", listing_counted)
    return seen


def _hits(root: Path, cache_dir: Path, word: str, *, watchman: bool) -> list[tuple[str, str]]:
    with SearchIndex(root, cache_dir, watchman=watchman) as index:
        index.update()
        assert index.watchman_problem is None
        return [(h.path, h.plain_snippet) for h in index.search(parse(word)).hits]


def test_only_the_changed_folder_is_looked_at(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    _hits(fresh_demo, cache, "retry", watchman=True)  # no clock kept yet: every folder is looked at
    looked = _looked_at(monkeypatch)
    assert _hits(fresh_demo, cache, "retry", watchman=True) != []
    assert looked == [], "nothing changed: watchman vouches for every folder"
    folder = layout.instruction_set_dir(layout.tasks_dir(fresh_demo) / TASK)
    brief = folder / "task-brief.md"
    brief.write_text(brief.read_text(encoding="utf-8") + "\nThe quokkazebra clause.\n", encoding="utf-8")
    found = _hits(fresh_demo, cache, "quokkazebra", watchman=True)
    # The edited file's folder and the folders holding it, down from the tasks folder; no other.
    tasks = layout.tasks_dir(fresh_demo)
    chain = {f"{p}/" for p in [folder, *folder.parents] if p == tasks or tasks in p.parents}
    assert set(looked) == chain
    assert found == _hits(fresh_demo, tmp_path / "fresh", "quokkazebra", watchman=False) != []


def test_the_search_and_the_facts_keep_their_own_clocks(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman
) -> None:
    """One database, two clocks: a search bringing its tables up to date says nothing of the facts, which hold
    as of the clock they kept."""
    from okstra_core import reading
    from okstra_core.store_index import StoreIndex

    cache = tmp_path / "cache"
    brief = layout.instruction_set_dir(layout.tasks_dir(fresh_demo) / TASK) / "task-brief.md"

    def fact() -> str:
        with StoreIndex(fresh_demo, cache, key=b"k" * 32, scope="test", watchman=True) as index:
            assert index.watchman_problem is None
            return index.fact("brief", lambda: str(reading.read_text(brief)), str, str)

    before = fact()
    fact()  # the clock the facts hold as of is kept
    brief.write_text(before + "\nThe quokkazebra clause.\n", encoding="utf-8")
    assert _hits(fresh_demo, cache, "quokkazebra", watchman=True) != []
    assert "quokkazebra" in fact()


def test_a_look_that_finds_nothing_to_change_keeps_the_clock(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index built without watchman, then searched with it: the first look finds the index up to date and
    keeps the clock it holds as of, so the next look is watchman's answer alone."""
    cache = tmp_path / "cache"
    _hits(fresh_demo, cache, "retry", watchman=False)
    _hits(fresh_demo, cache, "retry", watchman=True)  # no clock kept yet: every folder is looked at
    looked = _looked_at(monkeypatch)
    assert _hits(fresh_demo, cache, "retry", watchman=True) != []
    assert looked == [], "nothing changed since the clock kept: watchman vouches for every folder"


def test_a_record_made_too_recently_is_looked_at_though_watchman_says_nothing_changed(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder recorded as unsettled (modified within the racy window of its look) is looked at again even when
    watchman names no change: a second write in the same clock tick would have kept its metadata."""
    cache = tmp_path / "cache"
    monkeypatch.setattr(search_index, "RACY_NS", 10**18)  # every record is unsettled
    _hits(fresh_demo, cache, "retry", watchman=True)
    _hits(fresh_demo, cache, "retry", watchman=True)
    looked = _looked_at(monkeypatch)
    assert _hits(fresh_demo, cache, "retry", watchman=True) != []
    assert looked, "the unsettled folders were taken as recorded"


def test_a_file_that_is_a_symlink_is_looked_at_though_watchman_says_nothing_changed(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman
) -> None:
    """Watchman names a symlink's target when it changes, never the symlink: a folder holding one is looked at
    at every search, so an edit of the target (here outside the store) is found."""
    cache = tmp_path / "cache"
    brief = layout.instruction_set_dir(layout.tasks_dir(fresh_demo) / TASK) / "task-brief.md"
    target = fresh_demo / "notes" / "brief.md"
    target.parent.mkdir()
    target.write_text(brief.read_text(encoding="utf-8"), encoding="utf-8")
    brief.unlink()
    brief.symlink_to(target)
    _hits(fresh_demo, cache, "retry", watchman=True)  # no clock kept yet: every folder is looked at
    assert _hits(fresh_demo, cache, "quokkazebra", watchman=True) == []
    target.write_text(target.read_text(encoding="utf-8") + "\nThe quokkazebra clause.\n", encoding="utf-8")
    found = _hits(fresh_demo, cache, "quokkazebra", watchman=True)
    assert found == _hits(fresh_demo, tmp_path / "fresh", "quokkazebra", watchman=False) != []


def test_a_record_made_too_recently_deep_down_is_looked_at_alone(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Told that nothing changed, the look reads no folder's record but those it must look at: one folder deep in
    a task whose record is unsettled is looked at, though every folder above it is vouched for."""
    import sqlite3

    cache = tmp_path / "cache"
    _hits(fresh_demo, cache, "retry", watchman=True)
    _hits(fresh_demo, cache, "retry", watchman=True)
    folder = layout.instruction_set_dir(layout.tasks_dir(fresh_demo) / TASK)
    rel = layout.rel(folder, fresh_demo)
    conn = sqlite3.connect(search_index.index_path(cache, fresh_demo))
    with conn:
        conn.execute("UPDATE search_dirs SET stat = 'racy' WHERE path = ?", (rel,))
    conn.close()
    records: set[str] = set()
    read = search_index._Records.get

    def counted(self: search_index._Records, key: str, default: object = None) -> object:
        records.add(key)
        return read(self, key, default)

    monkeypatch.setattr(search_index._Records, "get", counted)
    looked = _looked_at(monkeypatch)
    assert _hits(fresh_demo, cache, "retry", watchman=True) != []
    assert {p.rstrip("/") for p in looked} == {str(folder)}
    assert rel in records and len(records) < 40, sorted(records)


def _index_rows(root: Path, cache: Path, *, built: bool) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """What the index in *cache* holds (*built*: as it is, else built first)."""
    with SearchIndex(root, cache) as index:
        if not built:
            index.update()
        files = index.conn.execute("SELECT path, stat, kind, task, chars FROM search_files ORDER BY path").fetchall()
        dirs = index.conn.execute("SELECT path, role, subdirs, plain FROM search_dirs ORDER BY path").fetchall()
    return files, dirs


def test_folders_removed_moved_and_copied_in_are_told_as_a_fresh_look_finds_them(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look told what changed reads the records of the folders it reaches only; what it keeps is what a
    build from nothing keeps, after a task removed, a task moved to another name and one copied in."""
    import shutil

    monkeypatch.setattr(search_index, "RACY_NS", 0)  # each look takes what it sees as settled
    cache = tmp_path / "cache"
    _hits(fresh_demo, cache, "retry", watchman=True)
    tasks = layout.tasks_dir(fresh_demo)
    groups = sorted(p for p in tasks.iterdir() if p.is_dir())
    moved = sorted(p for p in groups[-1].iterdir() if p.is_dir())[0]
    shutil.rmtree(tasks / TASK)
    moved.rename(moved.with_name(moved.name + "-moved"))
    copied = sorted(p for p in groups[0].iterdir() if p.is_dir())[0]
    shutil.copytree(copied, copied.with_name(copied.name + "-copy"), symlinks=True)
    assert _hits(fresh_demo, cache, "retry", watchman=True)
    assert _index_rows(fresh_demo, cache, built=True) == _index_rows(fresh_demo, tmp_path / "fresh", built=False)
