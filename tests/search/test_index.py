"""The index: kept up to date file by file, rebuilt when it cannot be trusted, never writing in the store."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.search import index as search_index
from okstra_core.search.index import SearchError, SearchIndex, index_path
from okstra_core.search.query import parse

TASK = "payments/retry-policy"


def _note(root: Path, name: str = "20261201T120000Z-scratch.md") -> Path:
    folder = layout.notes_dir(layout.tasks_dir(root) / TASK)
    folder.mkdir(exist_ok=True)
    return folder / name


def _paths(index: SearchIndex, text: str) -> set[str]:
    return {h.path for h in index.search(parse(text), limit=10_000).hits}


def test_an_up_to_date_index_reads_nothing(fresh_index: SearchIndex) -> None:
    update = fresh_index.update()
    assert update.read == 0 and update.removed == 0 and update.unchanged > 300


def test_an_edited_file_is_read_again_alone(fresh_demo: Path, fresh_index: SearchIndex) -> None:
    brief = layout.instruction_set_dir(layout.tasks_dir(fresh_demo) / TASK) / "task-brief.md"
    rel = layout.rel(brief, fresh_demo)
    brief.write_text(brief.read_text() + "\nThe quokkazebra clause.\n")
    update = fresh_index.update()
    assert (update.read, update.removed) == (1, 0)
    assert _paths(fresh_index, "quokkazebra") == {rel}
    assert rel in _paths(fresh_index, "kind:brief task:*retry-policy*")


def test_an_added_file_is_indexed_and_a_removed_one_forgotten(fresh_demo: Path, fresh_index: SearchIndex) -> None:
    note = _note(fresh_demo)
    note.write_text("Remember the wombatfjord.\n")
    update = fresh_index.update()
    assert (update.read, update.removed) == (1, 0)
    assert _paths(fresh_index, "wombatfjord") == {layout.rel(note, fresh_demo)}
    note.unlink()
    update = fresh_index.update()
    assert (update.read, update.removed) == (0, 1)
    assert _paths(fresh_index, "wombatfjord") == set()


def test_a_renamed_file_is_found_under_its_new_name(fresh_demo: Path, fresh_index: SearchIndex) -> None:
    note = _note(fresh_demo)
    note.write_text("The narwhalquay memo.\n")
    fresh_index.update()
    renamed = note.with_name("20261201T130000Z-renamed.md")
    note.rename(renamed)
    update = fresh_index.update()
    assert (update.read, update.removed) == (1, 1)
    assert _paths(fresh_index, "narwhalquay") == {layout.rel(renamed, fresh_demo)}


def test_a_size_change_under_the_same_mtime_is_seen(fresh_demo: Path, fresh_index: SearchIndex) -> None:
    note = _note(fresh_demo)
    note.write_text("first draft\n")
    fresh_index.update()
    st = note.stat()
    with open(note, "a") as fh:  # in place: same inode, same folder
        fh.write("the ocelotmarsh line\n")
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert note.stat().st_mtime_ns == st.st_mtime_ns and note.stat().st_ino == st.st_ino
    update = fresh_index.update()
    assert update.read == 1
    assert _paths(fresh_index, "ocelotmarsh") == {layout.rel(note, fresh_demo)}


def test_a_removed_task_is_forgotten(fresh_demo: Path, fresh_index: SearchIndex) -> None:
    import shutil

    assert _paths(fresh_index, "task:*retry-policy* idempotency")
    shutil.rmtree(layout.tasks_dir(fresh_demo) / TASK)
    update = fresh_index.update()
    assert update.removed > 10 and update.read == 0
    assert not _paths(fresh_index, "task:*retry-policy* idempotency")


def test_a_file_touched_in_the_racy_window_is_read_again(
    fresh_demo: Path, fresh_index: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_index, "RACY_NS", 10**18)  # everything counts as just written
    note = _note(fresh_demo)
    note.write_text("an unsettled note\n")
    assert fresh_index.update().read >= 1
    assert fresh_index.update().read >= 1  # not trusted: looked at again


def _store_state(root: Path) -> dict[str, tuple[bytes, int]]:
    out: dict[str, tuple[bytes, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            data = Path(path).read_bytes() if os.path.isfile(path) and not os.path.islink(path) else b""
            out[path] = (data, st.st_mtime_ns)
    return out


def test_indexing_and_searching_leave_the_store_as_it_was(fresh_demo: Path, cache_dir: Path) -> None:
    before = _store_state(fresh_demo)
    with SearchIndex(fresh_demo, cache_dir, include_logs=True) as index:
        index.update()
        index.search(parse("idempotency OR retry"), limit=100)
        index.update()
    assert _store_state(fresh_demo) == before
    assert index_path(cache_dir, fresh_demo).is_file()


def test_the_index_is_never_kept_in_the_store(fresh_demo: Path) -> None:
    with pytest.raises(SearchError, match="inside the store"):
        SearchIndex(fresh_demo, layout.okstra_dir(fresh_demo) / "cache")


def _rebuilt_after(fresh_demo: Path, cache_dir: Path, damage: str) -> SearchIndex:
    with SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
    path = index_path(cache_dir, fresh_demo)
    if damage == "garbage":
        path.write_bytes(b"this is not a database at all" * 100)
    elif damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    elif damage == "foreign-version":
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = 99")
        conn.close()
    elif damage == "other-application":
        path.unlink()
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE mine(x)")
        conn.close()
    elif damage == "symlink":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        target = cache_dir / "elsewhere"
        target.write_bytes(b"keep me")
        path.symlink_to(target)
    index = SearchIndex(fresh_demo, cache_dir)
    index.open()
    index.update()
    return index


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign-version", "other-application", "symlink"])
def test_an_untrustworthy_index_is_rebuilt_with_one_notice(fresh_demo: Path, cache_dir: Path, damage: str) -> None:
    index = _rebuilt_after(fresh_demo, cache_dir, damage)
    try:
        assert len(index.notices) == 1, index.notices
        assert "rebuilt" in index.notices[0] and "\n" not in index.notices[0]
        assert _paths(index, "idempotency")
        assert index.update().read == 0
    finally:
        index.close()
    if damage == "symlink":
        assert (cache_dir / "elsewhere").read_bytes() == b"keep me"


def test_an_index_locked_past_the_wait_is_rebuilt(
    fresh_demo: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
    monkeypatch.setattr(search_index, "BUSY_SECONDS", 0.2)
    holder = sqlite3.connect(index_path(cache_dir, fresh_demo), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # a process that never lets go
    try:
        _note(fresh_demo).write_text("the lemurgrove note\n")
        with SearchIndex(fresh_demo, cache_dir) as index:
            index.update()
            assert any("locked" in n for n in index.notices)
            assert _paths(index, "lemurgrove")
    finally:
        holder.close()


def _query_loop(root: str, cache: str, rounds: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    search_index.RACY_NS = 0
    try:
        seen = set()
        for _ in range(rounds):
            with SearchIndex(Path(root), Path(cache)) as index:
                index.update()
                hits = index.search(parse("idempotency"), limit=1000).hits
                seen.add(len(hits))
                assert hits
        out.put(("ok", sorted(seen), []))
    except BaseException as exc:  # reported to the test, which fails on it
        out.put(("error", [], [repr(exc)]))


def _edit_loop(root: str, cache: str, rounds: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    search_index.RACY_NS = 0
    try:
        note = _note(Path(root))
        for i in range(rounds):
            note.write_text(f"edit {i} of the capybaraloft note\n" * (i + 1))
            with SearchIndex(Path(root), Path(cache)) as index:
                index.update()
        out.put(("ok", [], []))
    except BaseException as exc:
        out.put(("error", [], [repr(exc)]))


def test_two_processes_query_while_one_updates(fresh_demo: Path, cache_dir: Path) -> None:
    with SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue = ctx.Queue()  # type: ignore[type-arg]
    args = (str(fresh_demo), str(cache_dir), 15, out)
    procs = [ctx.Process(target=_edit_loop, args=args)] + [ctx.Process(target=_query_loop, args=args) for _ in (0, 1)]
    for p in procs:
        p.start()
    reports = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert all(status == "ok" for status, _, _ in reports), reports
    with SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
        assert not index.notices
        assert _paths(index, "capybaraloft") == {layout.rel(_note(fresh_demo), fresh_demo)}
        assert index.update().read == 0


def test_the_shared_out_look_sees_what_the_look_here_sees(fresh_demo: Path, cache_dir: Path) -> None:
    import shutil

    with SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
        _note(fresh_demo).write_text("a new note\n")
        shutil.rmtree(layout.tasks_dir(fresh_demo) / "search")
        brief = layout.instruction_set_dir(layout.tasks_dir(fresh_demo) / TASK) / "task-brief.md"
        brief.write_text(brief.read_text() + "\nedited\n")
        known = index._known_dirs()
        here = index._look(known, False)
        index.jobs = 2
        shared = index._look(known, False)
    assert here.dirty and here.gone
    assert shared.dirty == here.dirty and shared.gone == here.gone and shared.files == here.files
    assert {rel: shared.dirs[rel] for rel in shared.dirty} == {rel: here.dirs[rel] for rel in here.dirty}


def _contents(index: SearchIndex) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """What an index holds, without its row ids: each file's row and each section with its text."""
    files = index.conn.execute(
        "SELECT path, dir, stat, kind, task, run_type, mtime, capped, error, chars, recorded FROM search_files "
        "ORDER BY path"
    ).fetchall()
    sections = index.conn.execute(
        "SELECT f.path, s.kind, s.label, b.text FROM search_sections s JOIN search_files f ON f.id = s.file "
        "JOIN search_body b ON b.rowid = s.id ORDER BY f.path, s.id"
    ).fetchall()
    return files, sections


def test_the_shared_out_reading_indexes_what_the_reading_here_does(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first build shared out reads each task in the worker that walked it; an update shared out reads what
    changed in workers of its own: each indexes what one process reading everything does."""
    with SearchIndex(fresh_demo, tmp_path / "here", jobs=1) as index:
        index.update()
        here = _contents(index)
    monkeypatch.setattr(search_index, "SHARED_READ_FROM", 1)
    calls: dict[str, list[object]] = {"walk": [], "read": []}
    walk, read = search_index._shared_walk, search_index._shared_read

    def walked(*args: Any) -> Any:
        calls["walk"].append(args[-1])  # the root to read under (None: the walk only looks)
        return walk(*args)

    def shared_read(*args: Any) -> Any:
        calls["read"].append(1)
        return read(*args)

    monkeypatch.setattr(search_index, "_shared_walk", walked)
    monkeypatch.setattr(search_index, "_shared_read", shared_read)
    with SearchIndex(fresh_demo, tmp_path / "shared", jobs=2) as index:
        steps: list[tuple[int, int]] = []
        index.update(progress=lambda done, total: steps.append((done, total)))
        shared = _contents(index)
    assert here[0] and here[1] and any(row[-1] is not None for row in here[0])  # recorded times included
    assert calls["walk"] == [fresh_demo] and not calls["read"], "read as it was walked"
    assert shared == here
    assert len(steps) > 1 and steps[-1][0] == steps[-1][1] == len(here[0])  # progress in steps, to the end
    assert all(a <= b for (a, _), (b, _) in itertools.pairwise(steps))
    # Every Markdown file indexed, edited: the update reads them again in workers, and agrees with a build of the
    # edited store (each look taking the edits as settled, so that the two record the same keys).
    monkeypatch.setattr(search_index, "RACY_NS", 0)
    edited = [fresh_demo / str(row[0]) for row in here[0] if str(row[0]).endswith(".md")]
    for path in edited:
        path.write_text(path.read_text(encoding="utf-8") + "\nEdited after the build.\n", encoding="utf-8")
    with SearchIndex(fresh_demo, tmp_path / "shared", jobs=2) as index:
        assert index.update().read == len(edited)
        updated = _contents(index)
    with SearchIndex(fresh_demo, tmp_path / "again", jobs=1) as index:
        index.update()
        afresh = _contents(index)
    assert calls["read"] and updated == afresh != here


def test_a_query_fts5_cannot_parse_is_a_bad_query_not_a_corrupt_index(fresh_demo: Path, cache_dir: Path) -> None:
    from okstra_core.search.query import And, Query, QueryError, Term

    node: And | Term = Term(("retry",))
    for _ in range(60):  # deeper than FTS5's parser stack holds
        node = And((Term(("retry",)), node), (Term(("nothing",)),))
    with SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
        before = index.path.stat().st_ino
        with pytest.raises(QueryError, match="cannot run this query"):
            index.search(Query("deep", node))
        assert index.notices == [] and index.path.stat().st_ino == before
        assert _paths(index, "retry")


def test_since_filters_on_the_time_the_store_records_not_the_mtime(fresh_demo: Path, fresh_index: SearchIndex) -> None:
    """The demo's two analysis runs of one task (15:20 and 17:05 on 5 November) were written seconds apart: only
    the runs' recorded times tell them apart. A file the store records no time for keeps its mtime."""
    prompts = f"kind:prompt task:{TASK} type:analysis"
    both = _paths(fresh_index, prompts)
    later = _paths(fresh_index, f"{prompts} since:2026-11-05T16:00:00Z")
    assert later and all("-analysis-002" in p for p in later)
    assert later < both and any("-analysis-001" in p for p in both)
    note = _note(fresh_demo, "20261130T120000Z-scratch.md")
    note.write_text("quokkazebra\n")
    os.utime(note, (0, 0))  # its name records 30 November: that, not the mtime, is its time
    fresh_index.update()
    assert _paths(fresh_index, "quokkazebra since:2026-11-29") == {layout.rel(note, fresh_demo)}
    assert _paths(fresh_index, "quokkazebra since:2026-12-01") == set()
    brief = layout.instruction_set_dir(layout.tasks_dir(fresh_demo) / TASK) / "task-brief.md"
    os.utime(brief, (0, 0))
    brief.write_text(brief.read_text() + "\nThe quokkafox clause.\n")
    fresh_index.update()
    assert _paths(fresh_index, "quokkafox since:1d") == {layout.rel(brief, fresh_demo)}


# ---------------------------------------------------------------------------- inside the store index's database


def _facts(root: Path, cache_dir: Path, *, reindex: bool = False) -> tuple[list[object], int]:
    """The inbox through the store index kept in *cache_dir*, and how many facts it reused."""
    from okstra_core.store import Project
    from okstra_core.store_index import StoreIndex
    from okstra_core.workflows.inbox import read_inbox

    with StoreIndex(root, cache_dir, key=b"k" * 32, scope="test", reindex=reindex) as index:
        items = [d.to_json() for d in read_inbox(Project(root), index).items]
        assert not index.notices
        return items, index.reused


def test_the_search_keeps_its_tables_in_the_store_index_database(fresh_demo: Path, cache_dir: Path) -> None:
    from okstra_core import store_index

    expected, _ = _facts(fresh_demo, cache_dir)
    with SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
        assert index.path == store_index.index_path(cache_dir, fresh_demo)
    assert [p.name for p in cache_dir.rglob("*.sqlite")] == [index.path.name]
    # Each keeps what the other made: the facts stay warm after a search, the search's tables after the facts.
    assert _facts(fresh_demo, cache_dir) == (expected, 1)
    with SearchIndex(fresh_demo, cache_dir) as index:
        assert index.update().read == 0 and not index.notices
    # Rebuilding one part leaves the other as it was.
    with SearchIndex(fresh_demo, cache_dir) as index:
        index.rebuild()
        assert index.update().read > 300
    assert _facts(fresh_demo, cache_dir) == (expected, 1)
    assert _facts(fresh_demo, cache_dir, reindex=True) == (expected, 0)
    with SearchIndex(fresh_demo, cache_dir) as index:
        assert index.update().read == 0 and not index.notices


def test_a_search_part_of_another_version_is_made_afresh_alone(fresh_demo: Path, cache_dir: Path) -> None:
    expected, _ = _facts(fresh_demo, cache_dir)
    with SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
    conn = sqlite3.connect(index_path(cache_dir, fresh_demo))
    conn.execute("UPDATE meta SET value = '1' WHERE key = ?", (f"part:{search_index.PART}",))
    conn.execute("CREATE TABLE search_leftover(x)")  # a table of the old version the new one does not make
    conn.commit()
    conn.close()
    with SearchIndex(fresh_demo, cache_dir) as index:
        assert not index.notices
        assert index.update().read > 300
        assert _paths(index, "idempotency")
        names = {n for (n,) in index.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "search_leftover" not in names
    assert _facts(fresh_demo, cache_dir) == (expected, 1)


def test_the_search_database_of_an_older_okstra_is_removed(fresh_demo: Path, cache_dir: Path) -> None:
    import hashlib

    old = cache_dir / "search"
    old.mkdir(parents=True)
    ident = hashlib.sha256(os.fsencode(os.path.abspath(fresh_demo))).hexdigest()[:32]
    for suffix in ("", "-wal", "-shm"):
        Path(f"{old / ident}.sqlite{suffix}").write_bytes(b"an older okstra's search index")
    with SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
        assert _paths(index, "idempotency") and not index.notices
    assert not old.exists()


def test_another_writer_is_not_kept_waiting_while_the_search_reads_the_store(
    fresh_demo: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files are read before the search takes the write lock: the store index keeping facts in the same
    database meanwhile does not wait for the reading (on a large store, a build reads for minutes)."""
    from okstra_core import store_index

    _facts(fresh_demo, cache_dir)  # the database is made
    others: list[str] = []
    read = search_index.extract

    def reading(*args: object, **kwargs: object) -> object:
        if not others:
            other = store_index.connect(index_path(cache_dir, fresh_demo), timeout=0)
            try:
                other.execute("BEGIN IMMEDIATE")
                other.execute("INSERT OR REPLACE INTO meta VALUES ('another writer', 'was here')")
                other.execute("COMMIT")
                others.append("wrote")
            except sqlite3.OperationalError as exc:
                others.append(str(exc))
            finally:
                other.close()
        return read(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search_index, "extract", reading)
    with SearchIndex(fresh_demo, cache_dir) as index:
        assert index.update().read > 300
        assert _paths(index, "idempotency") and not index.notices
    assert others == ["wrote"]


def _leftovers(cache_dir: Path) -> list[str]:
    return sorted(p.name for p in cache_dir.rglob("*") if p.name.endswith(".new"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_first_build_is_put_in_place_whole(
    fresh_demo: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """A new index is built where no other process sees it and put in place whole: while its rows are written
    (with two jobs, as each worker hands them back) no database is at the index's path, and after the build one
    is, in WAL mode, with nothing left beside it."""
    path = index_path(cache_dir, fresh_demo)
    seen: list[bool] = []
    insert = SearchIndex._insert

    def inserting(self: SearchIndex, *args: Any) -> None:
        seen.append(path.exists())
        insert(self, *args)

    monkeypatch.setattr(SearchIndex, "_insert", inserting)
    with SearchIndex(fresh_demo, cache_dir, jobs=jobs) as index:
        assert index.update().read > 300
        assert _paths(index, "idempotency") and not index.notices
        assert index.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # One batch of rows here; with two jobs, one per worker's share and one for what the parent read.
    assert len(seen) > (2 if jobs > 1 else 0) and not any(seen), seen
    assert path.is_file() and not _leftovers(cache_dir)
    with SearchIndex(fresh_demo, cache_dir) as index:
        assert index.update().read == 0 and not index.notices


def test_a_first_build_that_fails_leaves_nothing(
    fresh_demo: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = search_index.extract
    count = itertools.count()

    def reading(*args: object, **kwargs: object) -> object:
        if next(count) == 100:
            raise KeyboardInterrupt
        return read(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search_index, "extract", reading)
    with pytest.raises(KeyboardInterrupt), SearchIndex(fresh_demo, cache_dir) as index:
        index.update()
    assert not index_path(cache_dir, fresh_demo).exists() and not _leftovers(cache_dir)


def test_an_index_put_in_place_meanwhile_is_kept(
    fresh_demo: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process that makes the database while this one builds its own keeps it, facts and all: this
    build is dropped and its update made in the database in place."""
    expected: list[object] = []
    read = search_index.extract

    def reading(*args: object, **kwargs: object) -> object:
        if not expected:
            expected.append(_facts(fresh_demo, cache_dir)[0])  # the inbox, in another process, keeps its facts
        return read(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search_index, "extract", reading)
    with SearchIndex(fresh_demo, cache_dir) as index:
        assert index.update().read > 300
        assert _paths(index, "idempotency") and not index.notices
    monkeypatch.setattr(search_index, "extract", read)
    assert _facts(fresh_demo, cache_dir) == (expected[0], 1)  # its facts kept
    assert not _leftovers(cache_dir)
    with SearchIndex(fresh_demo, cache_dir) as index:
        assert index.update().read == 0


def test_a_build_left_by_a_process_gone_is_removed(fresh_demo: Path, cache_dir: Path) -> None:
    import subprocess
    import sys

    path = index_path(cache_dir, fresh_demo)
    path.parent.mkdir(parents=True)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for pid in (int(gone.stdout), alive.pid):
            Path(f"{path}.{pid}.new").write_bytes(b"half a build")
        with SearchIndex(fresh_demo, cache_dir) as index:
            index.update()
        assert _leftovers(cache_dir) == [f"{path.name}.{alive.pid}.new"]  # that one may still be building
    finally:
        alive.kill()
        alive.wait()
