"""The store index: facts reused only while what they read stands still, and an index that is never trusted."""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from okstra_core import reading, store_index, watch
from okstra_core.store import Project
from okstra_core.store_index import (
    DEPS_FORM,
    INDEX_FORMAT,
    ChangedSince,
    StatPass,
    StoreIndex,
    index_path,
    pack_deps,
    packed_deps,
    packed_record,
    part_made,
    record_text,
    unpack_deps,
)
from okstra_core.workflows.inbox import INBOX_FACT, read_inbox

KEY = b"k" * 32


def _index(root: Path, cache: Path, **kw: object) -> StoreIndex:
    return StoreIndex(root, cache, key=kw.pop("key", KEY), scope=str(kw.pop("scope", "s")), **kw)  # type: ignore[arg-type]


def _text_fact(index: StoreIndex, path: Path) -> str:
    def compute() -> str:
        text = reading.read_text(path)
        return text if isinstance(text, str) else "missing"

    return index.fact("text", compute, lambda v: v, str)


def _age(path: Path, seconds: float = 10) -> None:
    old = time.time() - seconds
    os.utime(path, (old, old))


def _aged_file(tmp_path: Path, text: str = "one") -> Path:
    """``a.txt`` holding *text*, written long enough ago to be trusted."""
    path = tmp_path / "a.txt"
    path.write_text(text, encoding="utf-8")
    _age(path)
    return path


def test_a_fact_is_reused_until_a_file_it_read_changes(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one", encoding="utf-8")
    _age(path)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "one" and index.computed == 1
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "one" and (index.reused, index.computed) == (1, 0)
    path.write_text("two", encoding="utf-8")
    _age(path)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "two" and index.computed == 1


def test_whether_a_kept_fact_holds_is_said_without_reading_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _aged_file(tmp_path)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert not index.holds("text"), "nothing kept yet"
        _text_fact(index, path)
    parsed: list[str] = []
    decoded = store_index._decoded
    monkeypatch.setattr(store_index, "_decoded", lambda value, decode: parsed.append(value) or decoded(value, decode))
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index.holds("text") and parsed == []
        assert index.kept("text") == "one" and len(parsed) == 1
        assert index.kept_text("text") == '"one"' and len(parsed) == 1, "the text as kept, not parsed"
    path.write_text("two", encoding="utf-8")
    _age(path)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert not index.holds("text"), "a file it read changed"
        assert _text_fact(index, path) == "two"
    conn = sqlite3.connect(index_path(tmp_path / "cache", tmp_path))
    conn.execute("UPDATE facts SET value = '\"three\"'")  # the value changed, the MAC left as it was
    conn.commit()
    conn.close()
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index.holds("text"), "what it was read from holds: its value is not read"
        assert index.kept("text") is None, "a value read is checked against the digest its MAC covers"
        assert index.kept_text("text") is None, "and so is one read after its reads are found to hold"
        assert _text_fact(index, path) == "two" and index.computed == 1
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index.kept_text("text") == '"two"'
        row = index._row("text")
        assert row is not None
        assert index._late_value("text", row[2]) == '"two"'
        # A row kept anew between the check of its reads and the read of its value: that value is not taken.
        assert index._late_value("text", "0" * len(row[2])) is None
    conn = sqlite3.connect(index_path(tmp_path / "cache", tmp_path))
    conn.execute("UPDATE facts SET value = CAST(value AS BLOB)")  # the same bytes, of another type: not ours
    conn.commit()
    conn.close()
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index.kept_text("text") is None and index.kept("text") is None
        assert _text_fact(index, path) == "two" and index.computed == 1
    conn = sqlite3.connect(index_path(tmp_path / "cache", tmp_path))
    conn.execute("UPDATE facts SET deps = deps || X'00'")  # the record of reads changed
    conn.commit()
    conn.close()
    with _index(tmp_path, tmp_path / "cache") as index:
        assert not index.holds("text"), "the MAC covers the record of reads"


def test_what_was_read_within_one_clock_tick_of_its_change_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second same-size write in the tick of the read would leave the metadata as recorded ("racy git"): a file
    read that close to its last change is recorded as unsettled and read again at the next look. (The window is
    widened here so that a slow machine cannot step out of it.)"""
    monkeypatch.setattr(watch, "RACY_NS", 3_600 * 10**9)
    path = tmp_path / "a.txt"
    path.write_text("A", encoding="utf-8")
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "A"
    monkeypatch.setattr(watch, "RACY_NS", 0)  # the next look is long after: the file looks settled now
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "A" and (index.reused, index.computed) == (0, 1)
    with _index(tmp_path, tmp_path / "cache") as index:  # read when settled, it is trusted
        assert _text_fact(index, path) == "A" and (index.reused, index.computed) == (1, 0)


def test_a_noting_look_names_what_changed_since_each_fact_was_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stat pass that notes names every path a fact recorded whose look differs now, a path recorded unsettled
    among them (then a look no longer trusted, as above); the MAC followed is the kept one, then the new one."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    for path in (a, b):
        path.write_text("one", encoding="utf-8")
        _age(path)
    with _index(tmp_path, tmp_path / "cache") as index:
        index.follow_mac("text")
        assert _text_fact(index, a) == "one" and index.found_mac("text") is None
        first = index.left_mac("text")
    assert first is not None
    looks = StatPass(noting=True)
    with _index(tmp_path, tmp_path / "cache", look=looks) as index:
        index.follow_mac("text")
        assert _text_fact(index, a) == "one" and looks.differed == set()
        assert index.found_mac("text") == index.left_mac("text") == first
    b.write_text("two", encoding="utf-8")  # read by no fact
    a.write_text("two", encoding="utf-8")
    monkeypatch.setattr(watch, "RACY_NS", 3_600 * 10**9)  # the fact records *a* unsettled
    looks = StatPass(noting=True)
    with _index(tmp_path, tmp_path / "cache", look=looks) as index:
        index.follow_mac("text")
        assert _text_fact(index, a) == "two" and looks.differed == {str(a)}
        assert index.found_mac("text") == first and index.left_mac("text") not in (None, first)
    monkeypatch.setattr(watch, "RACY_NS", 0)
    looks = StatPass(noting=True)
    with _index(tmp_path, tmp_path / "cache", look=looks) as index:
        assert _text_fact(index, a) == "two" and looks.differed == {str(a)} and index.computed == 1
    looks = StatPass()
    with _index(tmp_path, tmp_path / "cache", look=looks) as index:
        assert _text_fact(index, a) == "two" and looks.differed is None and index.reused == 1


def test_a_missing_file_that_appears_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "later.txt"
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "missing"
    path.write_text("here", encoding="utf-8")
    _age(path)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "here"


def test_a_fact_made_of_facts_depends_on_what_they_read(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    for p in (a, b):
        p.write_text(p.stem, encoding="utf-8")
        _age(p)

    def whole(index: StoreIndex) -> str:
        def part(p: Path) -> str:
            return index.fact(f"part:{p.name}", lambda: str(reading.read_text(p)), lambda v: v, str)

        return index.fact("whole", lambda: part(a) + part(b), lambda v: v, str)

    with _index(tmp_path, tmp_path / "cache") as index:
        assert whole(index) == "ab"
    with _index(tmp_path, tmp_path / "cache") as index:
        index.fact("part:a.txt", lambda: "never", lambda v: v, str)  # reused: the outer one too
        assert whole(index) == "ab" and index.computed == 0
    b.write_text("B", encoding="utf-8")
    _age(b)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert whole(index) == "aB"
        assert index.computed == 2  # the whole and the part that changed; the other part is reused


# ---------------------------------------------------------------------------- an untrusted index


def _inbox_json(root: Path, index: StoreIndex | None) -> list[object]:
    return [d.to_json() for d in read_inbox(Project(root), index).items]


def _warm(root: Path, cache: Path) -> Path:
    with _index(root, cache) as index:
        _inbox_json(root, index)
    return index_path(cache, root)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign-version", "other-project", "not-sqlite-ours"])
def test_a_damaged_or_foreign_index_is_rebuilt(fresh_demo: Path, tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "cache"
    db = _warm(fresh_demo, cache)
    expected = _inbox_json(fresh_demo, None)
    if damage == "garbage":
        db.write_bytes(b"\x00garbage" * 100)
    elif damage == "truncated":
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 3])
    else:
        conn = sqlite3.connect(db)
        if damage == "foreign-version":
            conn.execute(f"PRAGMA user_version = {INDEX_FORMAT + 1}")
        elif damage == "other-project":
            conn.execute("UPDATE meta SET value = '/elsewhere' WHERE key = 'root'")
        else:
            conn.execute("PRAGMA application_id = 1")
        conn.commit()
        conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with _index(fresh_demo, cache) as index:
        assert _inbox_json(fresh_demo, index) == expected
        assert index.usable
        assert len(index.notices) == 1 and "rebuilt" in index.notices[0]
    with _index(fresh_demo, cache) as index:  # and it is trusted again once rebuilt
        assert _inbox_json(fresh_demo, index) == expected and index.reused == 1 and not index.notices


@pytest.mark.parametrize("extra", [False, True])
def test_an_unstamped_index_is_taken_as_ours_only_when_it_holds_its_own_tables(
    fresh_demo: Path, tmp_path: Path, extra: bool
) -> None:
    """Its own tables for this project, and a part's, without the stamps (as a start racing others once left
    it) are stamped again and used; with any other table beside them it is foreign, and rebuilt."""
    cache = tmp_path / "cache"
    db = _warm(fresh_demo, cache)
    expected = _inbox_json(fresh_demo, None)
    conn = sqlite3.connect(db, isolation_level=None)
    part_made(conn, "demo", 1, ["CREATE TABLE demo_rows(x)"])
    conn.execute("PRAGMA application_id = 0")
    conn.execute("PRAGMA user_version = 0")
    if extra:
        conn.execute("CREATE TABLE other(x)")
    conn.commit()
    conn.close()
    with _index(fresh_demo, cache) as index:
        assert _inbox_json(fresh_demo, index) == expected
        assert index.usable
        if extra:
            assert len(index.notices) == 1 and "is not an okstra store index: rebuilt" in index.notices[0]
        else:
            assert index.notices == []
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA application_id").fetchone()[0] != 0
    assert conn.execute("PRAGMA user_version").fetchone()[0] == INDEX_FORMAT
    conn.close()


@pytest.mark.parametrize("moment", range(1, 6))
def test_an_index_made_by_another_process_while_one_is_adopted_is_ours(tmp_path: Path, moment: int) -> None:
    """Another process makes the index just before any one statement of the adoption: it is never taken for a
    foreign database (read one at a time, the two stamps once straddled such a commit, and the index was
    rebuilt under the other processes' feet)."""
    db, root = tmp_path / "index.sqlite", tmp_path
    conn, other = store_index.connect(db, 5.0), store_index.connect(db, 0.0)
    statements = 0

    def made_meanwhile(_statement: str) -> None:
        nonlocal statements
        statements += 1
        if statements == moment and not conn.in_transaction:
            store_index.create(other, root)

    conn.set_trace_callback(made_meanwhile)
    assert store_index.adopt(conn, root) is None
    conn.set_trace_callback(None)
    assert store_index.adopt(other, root) is None
    conn.close()
    other.close()


@pytest.mark.parametrize("held", [1, store_index.OPEN_TRIES - 1, store_index.OPEN_TRIES])
def test_the_switch_to_wal_waits_its_turn_while_other_processes_open_a_new_index(
    monkeypatch: pytest.MonkeyPatch, held: int
) -> None:
    """The switch to WAL takes no busy wait of its own (seen as "database is locked" from processes opening a
    new index at once): it is tried again a few times, and only a lock held longer is an error."""
    monkeypatch.setattr(store_index, "OPEN_PAUSE", 0.0)

    class Opening:
        tries, closed = 0, False

        def execute(self, statement: str) -> None:
            assert statement == "PRAGMA journal_mode=WAL"
            self.tries += 1
            if self.tries <= held:
                locked = sqlite3.OperationalError("database is locked")
                locked.sqlite_errorcode = 5  # type: ignore[attr-defined]
                raise locked

        def close(self) -> None:
            self.closed = True

    conn = Opening()
    if held < store_index.OPEN_TRIES:
        store_index._into_wal(conn)  # type: ignore[arg-type]
        assert conn.tries == held + 1 and not conn.closed
    else:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            store_index._into_wal(conn)  # type: ignore[arg-type]
        assert conn.tries == store_index.OPEN_TRIES and conn.closed


def test_a_tampered_fact_never_hides_a_decision(fresh_demo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    db = _warm(fresh_demo, cache)
    expected = _inbox_json(fresh_demo, None)
    assert expected
    conn = sqlite3.connect(db)
    for (name,) in conn.execute("SELECT name FROM facts").fetchall():
        value = json.loads(conn.execute("SELECT value FROM facts WHERE name = ?", (name,)).fetchone()[0])
        if isinstance(value, dict) and "items" in value:
            value["items"] = []  # the decisions hidden, the MAC left as it was
            conn.execute("UPDATE facts SET value = ? WHERE name = ?", (json.dumps(value), name))
    conn.commit()
    conn.close()
    with _index(fresh_demo, cache) as index:
        assert _inbox_json(fresh_demo, index) == expected
    with _index(fresh_demo, cache, key=b"another key, another user....") as index:
        assert _inbox_json(fresh_demo, index) == expected and index.reused == 0


@pytest.mark.parametrize(
    "tamper",
    [
        "UPDATE facts SET deps = CAST(deps AS TEXT)",  # the form before (reads kept as text)
        "UPDATE facts SET value = CAST(value AS BLOB)",
        "UPDATE facts SET mac = 'é' || mac",
        "INSERT INTO facts VALUES (CAST('inbox' || char(0) || 'x' AS BLOB), 'v', 'd', 'm')",
        # Text that is not UTF-8, in a value and in the reads.
        "UPDATE facts SET value = CAST(X'22FF22' AS TEXT)",
        "UPDATE facts SET deps = CAST(X'5BFF5D' AS TEXT)",
    ],
)
def test_rows_of_another_type_are_computed_again_without_an_error(
    fresh_demo: Path, tmp_path: Path, tamper: str
) -> None:
    """SQLite keeps whatever a column is given: a kept row of another type, or not UTF-8 text, is not ours."""
    cache = tmp_path / "cache"
    db = _warm(fresh_demo, cache)
    expected = _inbox_json(fresh_demo, None)
    conn = sqlite3.connect(db)
    conn.execute(tamper)
    conn.commit()
    conn.close()
    with _index(fresh_demo, cache) as index:
        assert _inbox_json(fresh_demo, index) == expected and index.notices == []
        if "INSERT" not in tamper:
            assert index.reused == 0
    with _index(fresh_demo, cache) as index:  # computed again and kept: reused from now on
        assert _inbox_json(fresh_demo, index) == expected and index.computed == 0


def test_a_kept_name_that_is_not_utf8_is_passed_over(fresh_demo: Path, tmp_path: Path) -> None:
    """A row named in bytes that are not UTF-8 (no name this index writes) is never asked for, nor dropped by
    name, when a pass over every task forgets the facts of tasks gone: the answer is the same, without a notice."""
    cache = tmp_path / "cache"
    db = _warm(fresh_demo, cache)
    expected = _inbox_json(fresh_demo, None)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO facts VALUES (CAST(X'696E626F7800FF' AS TEXT), 'v', 'd', 'm')")  # "inbox\0\xff"
    conn.execute("DELETE FROM facts WHERE name = ?", (INBOX_FACT,))  # the whole is made again from its tasks
    conn.commit()
    conn.close()
    with _index(fresh_demo, cache) as index:
        assert _inbox_json(fresh_demo, index) == expected and index.notices == []
        assert index.computed == 1 and index.reused > 0
    with _index(fresh_demo, cache) as index:
        assert _inbox_json(fresh_demo, index) == expected and (index.computed, index.notices) == (0, [])


def test_facts_of_another_version_of_okstra_are_dropped(fresh_demo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _warm(fresh_demo, cache)
    with _index(fresh_demo, cache, scope="another version") as index:
        _inbox_json(fresh_demo, index)
        assert index.reused == 0


@pytest.mark.parametrize("where", ["a file", "inside the store"])
def test_an_unusable_cache_folder_degrades_to_a_fresh_look(fresh_demo: Path, tmp_path: Path, where: str) -> None:
    if where == "a file":
        cache = tmp_path / "cache"
        cache.write_text("not a folder", encoding="utf-8")
    else:
        cache = fresh_demo / ".okstra" / "cache"
    expected = _inbox_json(fresh_demo, None)
    with _index(fresh_demo, cache) as index:
        assert not index.usable
        assert _inbox_json(fresh_demo, index) == expected
        assert len(index.notices) == 1 and str(cache) in index.notices[0]
    assert not (fresh_demo / ".okstra" / "cache").exists()


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                with open(path, "rb") as fh:
                    out[path] = (fh.read(), os.stat(path).st_mtime_ns)
    return out


def _okstra(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", *map(str, argv)], capture_output=True, text=True, check=False
    )


def test_the_cli_answers_the_same_with_and_without_the_index(fresh_demo: Path) -> None:
    before = _tree(fresh_demo)
    plain = _okstra("inbox", fresh_demo, "--json", "--no-cache")
    cold, warm = (_okstra("inbox", fresh_demo, "--json") for _ in range(2))
    again = _okstra("inbox", fresh_demo, "--json", "--reindex")
    assert plain.returncode == 0 and plain.stdout
    assert cold.stdout == warm.stdout == again.stdout == plain.stdout
    assert cold.stderr == warm.stderr == again.stderr == ""
    assert _tree(fresh_demo) == before  # the store's bytes and mtimes never change
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "okstra" / "index"
    assert len(list(cache.glob("*.sqlite"))) == 1


def test_processes_updating_the_index_at_once_lose_nothing(fresh_demo: Path) -> None:
    expected = _okstra("inbox", fresh_demo, "--json", "--no-cache").stdout
    for _round in range(3):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "okstra_core.cli", "inbox", str(fresh_demo), "--json"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert (proc.returncode, out, err) == (0, expected, "")
    db = next((Path(os.environ["XDG_CACHE_HOME"]) / "okstra" / "index").glob("*.sqlite"))
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM facts WHERE name = ?", (INBOX_FACT,)).fetchone()[0] == 1
    conn.close()


def test_events_naming_a_folder_moved_in_look_at_everything_below_it(tmp_path: Path) -> None:
    """A folder moved away, changed there (where no event is seen) and moved back is named alone by the events."""
    folder = tmp_path / "task"
    folder.mkdir()
    path = folder / "a.txt"
    path.write_text("one", encoding="utf-8")
    _age(path)
    _age(folder)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "one"
    away = tmp_path.parent / f"{tmp_path.name}-away"
    folder.rename(away)
    (away / "a.txt").write_text("two", encoding="utf-8")
    _age(away / "a.txt")
    away.rename(folder)
    with _index(tmp_path, tmp_path / "cache", look=ChangedSince(set())) as index:
        assert _text_fact(index, path) == "one"  # told nothing changed, it trusts what it kept
    with _index(tmp_path, tmp_path / "cache", look=ChangedSince({str(folder)})) as index:
        assert _text_fact(index, path) == "two"


@pytest.mark.parametrize(
    ("changed", "folder", "quiet"),
    [
        ({"/p/.okstra/tasks/g/a/x.json"}, "/p/.okstra/tasks/g/b", True),
        ({"/p/.okstra/tasks/g/a/x.json"}, "/p/.okstra/tasks/g/a", False),  # a change below it
        ({"/p/.okstra/tasks/g/a"}, "/p/.okstra/tasks/g/a", False),  # replaced whole
        ({"/p/.okstra/tasks/g"}, "/p/.okstra/tasks/g/a", False),  # a folder holding it moved in
        ({"/p/.okstra/tasks/g/ab"}, "/p/.okstra/tasks/g/a", True),  # a sibling whose name starts alike
        (set(), "/p/outside", False),  # outside what the source speaks for
        (None, "/p/.okstra/tasks/g/a", False),  # the source cannot say
    ],
)
def test_changed_since_vouches_for_quiet_folders_only(changed: set[str] | None, folder: str, quiet: bool) -> None:
    assert ChangedSince(changed, within="/p/.okstra").quiet(folder) is quiet


def test_an_unstamped_database_with_foreign_tables_of_our_names_is_rebuilt(fresh_demo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    db = index_path(cache, fresh_demo)
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE meta(a, b)")
    conn.execute("CREATE TABLE facts(x)")
    conn.commit()
    conn.close()
    expected = _inbox_json(fresh_demo, None)
    with _index(fresh_demo, cache) as index:
        assert _inbox_json(fresh_demo, index) == expected
        assert index.usable
        assert len(index.notices) == 1 and "is not an okstra store index: rebuilt" in index.notices[0]


def _linked_store(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A store where a task's ``runs`` folder is a symlink to a folder elsewhere in the store, and a file is a
    symlink to another file: (the path read through the folder link, its target, the file link)."""
    store = tmp_path / ".okstra"
    shared = store / "shared" / "runs"
    shared.mkdir(parents=True)
    task = store / "tasks" / "g" / "t"
    task.mkdir(parents=True)
    (task / "runs").symlink_to(shared)
    target = shared / "a.txt"
    target.write_text("one", encoding="utf-8")
    (task / "b.txt").symlink_to(target)
    for each in (target, shared, task):
        _age(each)
    return task / "runs" / "a.txt", target, task / "b.txt"


def test_a_path_reached_through_a_symlink_in_the_store_is_recorded_as_linked(tmp_path: Path) -> None:
    through_folder, target, file_link = _linked_store(tmp_path)
    plain = target.parent / "plain.txt"
    plain.write_text("x", encoding="utf-8")
    with reading.recording() as reads:
        reading.read_text(through_folder)
        reading.read_text(file_link)
        reading.read_text(plain)
        reading.lexists(through_folder.parent / "not-yet.txt")
        reading.is_dir(through_folder.parent)
        reading.list_folder(target.parent)
    assert reads.linked == {
        str(through_folder),
        str(file_link),
        str(through_folder.parent / "not-yet.txt"),
        str(through_folder.parent),
    }
    assert set(reads.paths) >= reads.linked | {str(plain), str(target.parent)}
    assert not reading.through_link(str(tmp_path / "elsewhere.txt")), "under no store: never linked"


def test_a_store_that_moved_since_it_was_resolved_is_resolved_again(tmp_path: Path) -> None:
    """The project is reached through a symlink that is pointed elsewhere while the process runs (as when the
    folder above it is renamed and another put in its place): a plain file of the store there is not linked."""
    for side in ("a", "b"):
        (tmp_path / side / "project" / ".okstra").mkdir(parents=True)
        (tmp_path / side / "project" / ".okstra" / "plain.txt").write_text(side, encoding="utf-8")
    via = tmp_path / "via"
    via.symlink_to(tmp_path / "a", target_is_directory=True)
    plain = str(via / "project" / ".okstra" / "plain.txt")
    assert not reading.through_link(plain)
    via.unlink()
    via.symlink_to(tmp_path / "b", target_is_directory=True)
    assert not reading.through_link(plain), "the store's real path as it is now, not as first resolved"
    link = via / "project" / ".okstra" / "link.txt"
    link.symlink_to(tmp_path / "b" / "project" / ".okstra" / "plain.txt")
    assert reading.through_link(str(link))


@pytest.mark.parametrize("via", ["folder", "file"])
def test_a_source_naming_a_symlinks_target_never_vouches_for_the_path_read_through_it(tmp_path: Path, via: str) -> None:
    """Watchman names the target of a symlink that changed, never the path a fact read through the link: that
    path is looked at, so the fact is computed afresh."""
    through_folder, target, file_link = _linked_store(tmp_path)
    read = through_folder if via == "folder" else file_link
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, read) == "one"
    with _index(tmp_path, tmp_path / "cache", look=ChangedSince(set())) as index:
        assert _text_fact(index, read) == "one" and index.reused == 1  # unchanged: reused after the look
    target.write_text("two!", encoding="utf-8")
    _age(target)
    with _index(tmp_path, tmp_path / "cache", look=ChangedSince({str(target)})) as index:
        assert _text_fact(index, read) == "two!" and index.computed == 1


def test_what_a_view_read_through_a_symlink_is_looked_at_though_the_events_name_its_target(tmp_path: Path) -> None:
    """A view's reads are checked against the app's change feed (a :class:`ChangedSince`): a path the process
    read through a symlink is looked at, whatever the feed names, so the view goes stale when the target
    changes."""
    through_folder, target, file_link = _linked_store(tmp_path)
    plain = target.parent / "plain.txt"
    plain.write_text("x", encoding="utf-8")
    _age(plain)
    with reading.recording() as reads:
        for path in (through_folder, file_link, plain):
            reading.read_text(path)
    shown = dict(reads.paths)
    assert all(ChangedSince(set()).holds(p, sig) for p, sig in shown.items()), "nothing changed"
    target.write_text("two!", encoding="utf-8")
    feed = ChangedSince({str(target)})
    assert not feed.holds(str(through_folder), shown[str(through_folder)])
    assert not feed.holds(str(file_link), shown[str(file_link)])
    assert feed.holds(str(plain), shown[str(plain)])


def test_a_new_index_has_large_pages_and_one_made_before_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from okstra_core import store_index

    path = _aged_file(tmp_path)
    with _index(tmp_path, tmp_path / "new") as index:
        assert _text_fact(index, path) == "one"
    with sqlite3.connect(index_path(tmp_path / "new", tmp_path)) as conn:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == store_index.PAGE_BYTES == 16384
    with monkeypatch.context() as patched:
        patched.setattr(store_index, "PAGE_BYTES", 4096)  # an index made with the pages of an older okstra
        with _index(tmp_path, tmp_path / "old") as index:
            assert _text_fact(index, path) == "one"
    with _index(tmp_path, tmp_path / "old") as index:
        assert _text_fact(index, path) == "one" and index.reused == 1 and index.notices == []
    with sqlite3.connect(index_path(tmp_path / "old", tmp_path)) as conn:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096


def test_what_a_fact_read_is_kept_and_read_back_in_order(tmp_path: Path) -> None:
    prefix = str(tmp_path) + os.sep
    inside, outside = str(tmp_path / "b" / "c.json"), "/elsewhere/x"
    sigs = {inside: (1, 2, 3, 4), prefix + "a": watch.MISSING, outside: (5, 6, 7, 2**64 - 1)}
    packed = pack_deps(sigs, {outside}, prefix)
    assert "/elsewhere" in packed and prefix not in packed, "inside paths are kept relative to the root"
    paths, recorded, linked = unpack_deps(packed, prefix) or ([], [], set())
    assert dict(zip(paths, recorded, strict=True)) == sigs and paths == sorted(sigs) and linked == {outside}


def test_a_record_deflated_as_it_is_packed_is_the_packed_record(tmp_path: Path) -> None:
    """What a fact made of other facts keeps, deflated a segment at a time, inflates to what :func:`pack_deps`
    writes, whatever it read: nothing, its own paths, nested facts' paths, or both."""
    prefix = str(tmp_path) + os.sep
    own = {prefix + "a": (1, 2, 3, 4), "/elsewhere/x": (5, 6, 7, 8)}
    nested = [store_index.deps_segments(pack_deps({prefix + f"t{i}": (i, 1, 2, 3)}, set(), prefix)) for i in range(3)]
    for paths, linked, inner in [
        ({}, set(), []),
        (own, {"/elsewhere/x"}, []),
        ({}, set(), nested),
        (own, set(), nested),
    ]:
        expected = pack_deps(paths, linked, prefix, inner)
        assert record_text(packed_deps(paths, linked, prefix, inner)) == expected


def test_a_large_record_is_deflated_without_its_text_held_whole(tmp_path: Path) -> None:
    """The record of a fact made of one fact per task of a large store: packing it never holds its text."""
    import tracemalloc

    prefix = str(tmp_path) + os.sep
    nested = [
        store_index.deps_segments(pack_deps({prefix + f"tasks/g/t{i}/task-manifest.json": (i, 1, 2, 3)}, set(), prefix))
        for i in range(30_000)
    ]
    size = sum(map(len, nested))
    tracemalloc.start()
    try:
        record = packed_deps({}, set(), prefix, nested)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert size > 2_000_000 and len(record) < size / 4
    assert peak < size / 2, f"{peak:,} bytes held at once for a record of {size:,}"


_B64_ONE = base64.b64encode(watch.Looks.of([(1, 2, 3, 4)]).to_bytes()).decode()
_B64_OTHER = base64.b64encode(watch.Looks.of([(1, 2, 3, 5)]).to_bytes()).decode()


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2, 3, 4]}',  # the form before: computed afresh
        '["reads/2", ["a"], [1, 2, 3, 4], []]',  # the forms before
        '["reads/3", [["a"], [1, 2, 3, 4], []]]',
        f'["reads/4", [["a"], "{_B64_ONE[:-4]}", []]]',  # three numbers
        f'["reads/4", [["a"], "{_B64_ONE}!", []]]',  # not base64
        '["reads/4", [["a"], [1, 2, 3, 4], []]]',
        f'["reads/4", [["a", "b"], "{_B64_ONE}", []]]',  # two paths, one look
        f'["reads/4", [[7], "{_B64_ONE}", []]]',
        f'["reads/4", [[""], "{_B64_ONE}", []]]',
        f'["reads/4", [["a"], "{_B64_ONE}", [1]]]',
        f'["reads/4", [["a"], "{_B64_ONE}", [-1]]]',
        f'["reads/4", [["a"], "{_B64_ONE}", ["0"]]]',
        f'["reads/4", [["a"], "{_B64_ONE}"]]',
        f'["reads/4", ["a", "{_B64_ONE}", []]]',
        f'["reads/4", [["a"], "{_B64_ONE}", []], [["a"], "{_B64_OTHER}", []]]',  # one path, two looks that disagree
        '{"reads/4": []}',
        "not json",
    ],
)
def test_recorded_reads_of_another_form_are_not_trusted(tmp_path: Path, text: str) -> None:
    assert unpack_deps(text, str(tmp_path) + os.sep) is None


def test_a_fact_whose_reads_are_of_another_form_is_computed_again(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one", encoding="utf-8")
    _age(path)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "one"
    with _index(tmp_path, tmp_path / "cache") as index:
        row = index._row("text")
        assert row is not None
        value = row[0]
        deps = json.dumps({"a.txt": list(watch.look_one(path))})
        index._keep("text", value, packed_record(deps))  # signed, in the form before
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "one" and (index.reused, index.computed) == (0, 1)


# ---------------------------------------------------------------------------- bounded passes over every task


def _facts_in(cache: Path, root: Path) -> set[str]:
    conn = sqlite3.connect(index_path(cache, root))
    try:
        return {name for (name,) in conn.execute("SELECT name FROM facts")}
    finally:
        conn.close()


def _numbered_files(folder: Path, count: int) -> list[Path]:
    files = []
    for i in range(count):
        files.append(path := folder / f"{i}.txt")
        path.write_text(str(i), encoding="utf-8")
        _age(path)
    return files


def _file_fact(index: StoreIndex, i: int, path: Path) -> str:
    return index.fact(f"f{i}", lambda: str(reading.read_text(path)), lambda v: v, str)


def test_facts_computed_are_written_a_batch_at_a_time_and_let_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_index, "BATCH", 3)
    files = _numbered_files(tmp_path, 7)
    cache = tmp_path / "cache"
    with _index(tmp_path, cache) as index:
        for i, path in enumerate(files):
            assert _file_fact(index, i, path) == str(i)
            assert len(index._pending) < 3  # never more than a batch held
            # written as each batch fills, before the pass ends: another process sees them
            assert _facts_in(cache, tmp_path) == {f"f{j}" for j in range(i + 1 - (i + 1) % 3)}
        # asked again in the same pass, a fact already written is read back, not computed again
        assert index.fact("f0", lambda: "never", lambda v: v, str) == "0" and index.computed == 7
    assert _facts_in(cache, tmp_path) == {f"f{i}" for i in range(7)}
    with _index(tmp_path, cache) as index:
        values = [index.fact(f"f{i}", lambda: "never", lambda v: v, str) for i in range(7)]
        assert values == [str(i) for i in range(7)] and (index.reused, index.computed) == (7, 0)


def test_facts_read_ahead_are_the_same_as_facts_read_one_by_one(tmp_path: Path) -> None:
    files = _numbered_files(tmp_path, 5)
    cache = tmp_path / "cache"
    with _index(tmp_path, cache) as index:
        for i, path in enumerate(files):
            _file_fact(index, i, path)
    files[3].write_text("three", encoding="utf-8")
    _age(files[3])
    with _index(tmp_path, cache) as index:
        index.prefetch([f"f{i}" for i in range(5)] + ["absent"])
        assert set(index._ahead) == {f"f{i}" for i in range(5)}
        values = [_file_fact(index, i, path) for i, path in enumerate(files)]
        assert values == ["0", "1", "2", "three", "4"] and (index.reused, index.computed) == (4, 1)
        assert index._ahead == {}  # each row read ahead is handed out once, then let go
        index.prefetch(["f0"])
        index.prefetch(["f1"])  # a new batch replaces the one before
        assert set(index._ahead) == {"f1"}


def test_a_pass_over_every_task_lets_the_validated_catalog_go(fresh_demo: Path, tmp_path: Path) -> None:
    project = Project(fresh_demo)
    with _index(fresh_demo, tmp_path / "cache") as index:
        cold = [d.to_json() for d in read_inbox(project, index).items]
    assert "catalog" not in project.__dict__ and "task_refs" not in project.__dict__
    held = Project(fresh_demo)
    refs = held.task_refs  # read by the caller before: it stays as it was
    with _index(fresh_demo, tmp_path / "other-cache") as index:
        assert [d.to_json() for d in read_inbox(held, index).items] == cold
    assert held.__dict__["task_refs"] is refs and "catalog" in held.__dict__
    assert cold == _inbox_json(fresh_demo, None)


def test_tasks_gone_are_forgotten_whatever_batch_wrote_them(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from okstra_core.workflows.inbox import TASK_FACT_PREFIX

    monkeypatch.setattr(store_index, "BATCH", 2)
    cache = tmp_path / "cache"
    last = Project(fresh_demo).task_refs[-1].root
    extra = last.parent / "copied-in"  # a task folder the catalog does not name
    shutil.copytree(last, extra)
    _warm(fresh_demo, cache)
    named = f"{TASK_FACT_PREFIX}{os.fspath(extra.relative_to(fresh_demo))}\x00"
    before = {n for n in _facts_in(cache, fresh_demo) if n.startswith(TASK_FACT_PREFIX)}
    assert named in before
    shutil.rmtree(extra)
    with _index(fresh_demo, cache) as index:
        assert _inbox_json(fresh_demo, index) == _inbox_json(fresh_demo, None)
    after = {n for n in _facts_in(cache, fresh_demo) if n.startswith(TASK_FACT_PREFIX)}
    assert after == before - {named}


def _parts_and_whole(tmp_path: Path) -> tuple[Path, Path, Path]:
    a, b, shared = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "shared.txt"
    for p in (a, b, shared):
        p.write_text(p.stem, encoding="utf-8")
        _age(p)
    return a, b, shared


def _whole(index: StoreIndex, a: Path, b: Path, shared: Path, seen: list[set[str]] | None = None) -> str:
    def part(p: Path) -> str:
        return index.fact(f"part:{p.name}", lambda: f"{reading.read_text(p)}+{reading.read_text(shared)}", str, str)

    def compute() -> str:
        text = part(a) + "," + part(b)
        if seen is not None:  # what the whole's own recording holds path by path
            seen.append(set(reading._RECORDERS.get()[-1].paths))
        return text

    return index.fact("whole", compute, str, str)


def test_a_fact_made_of_facts_takes_their_reads_packed_and_looks_at_each_path_once(tmp_path: Path) -> None:
    a, b, shared = _parts_and_whole(tmp_path)
    cache = tmp_path / "cache"
    seen: list[set[str]] = []
    with _index(tmp_path, cache) as index:
        assert _whole(index, a, b, shared, seen) == "a+shared,b+shared"
    assert seen == [set()], "the parts' reads are handed over packed, not path by path"
    conn = sqlite3.connect(index_path(cache, tmp_path))
    (deps,) = map(record_text, conn.execute("SELECT deps FROM facts WHERE name = 'whole'").fetchone())
    rows = conn.execute("SELECT deps FROM facts WHERE name LIKE 'part:%' ORDER BY name")
    parts = [record_text(row[0]) for row in rows]
    conn.close()
    assert deps == f'["{DEPS_FORM}",' + ",".join(p[len(f'["{DEPS_FORM}",') : -1] for p in parts) + "]"
    paths, _, _ = unpack_deps(deps, str(tmp_path) + os.sep) or ([], [], set())
    assert sorted(paths) == sorted(map(str, (a, b, shared))), "the file both parts read is looked at once"
    with _index(tmp_path, cache) as index:
        assert _whole(index, a, b, shared) == "a+shared,b+shared" and (index.reused, index.computed) == (1, 0)
    shared.write_text("SHARED", encoding="utf-8")
    _age(shared)
    with _index(tmp_path, cache) as index:
        assert _whole(index, a, b, shared) == "a+SHARED,b+SHARED" and index.computed == 3
    with _index(tmp_path, cache) as index:  # a part asked for alone is kept too
        assert index.fact("part:a.txt", lambda: "never", str, str) == "a+SHARED" and index.computed == 0
    b.write_text("B", encoding="utf-8")
    _age(b)
    with _index(tmp_path, cache) as index:  # a part reused (a) within a whole computed again
        assert _whole(index, a, b, shared) == "a+SHARED,B+SHARED" and (index.reused, index.computed) == (1, 2)
    with _index(tmp_path, cache) as index:
        assert _whole(index, a, b, shared) == "a+SHARED,B+SHARED" and (index.reused, index.computed) == (1, 0)


@pytest.mark.parametrize("warm", [False, True])
def test_a_plain_recording_around_facts_sees_every_path_they_read(tmp_path: Path, warm: bool) -> None:
    """A view reading through the index records every file the facts it asked read, computed or reused."""
    a, b, shared = _parts_and_whole(tmp_path)
    cache = tmp_path / "cache"
    if warm:
        with _index(tmp_path, cache) as index:
            _whole(index, a, b, shared)
    with _index(tmp_path, cache) as index, reading.recording() as reads:
        assert _whole(index, a, b, shared) == "a+shared,b+shared"
        assert index.reused == (1 if warm else 0)
    assert set(reads.paths) == set(map(str, (a, b, shared)))


@pytest.mark.parametrize("inner_fact", ["computed", "reused"])
def test_a_fact_nested_in_a_fact_of_another_store_hands_its_reads_path_by_path(tmp_path: Path, inner_fact: str) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for root in (one, two):
        root.mkdir()
        (root / "f.txt").write_text(root.name, encoding="utf-8")
        _age(root / "f.txt")
    if inner_fact == "reused":
        with _index(two, tmp_path / "c2") as inner:
            assert _text_fact(inner, two / "f.txt") == "two"
    with _index(one, tmp_path / "c1") as outer, _index(two, tmp_path / "c2") as inner:
        assert _text_fact(outer, one / "f.txt") == "one"

        def both() -> str:
            return str(reading.read_text(one / "f.txt")) + _text_fact(inner, two / "f.txt")

        assert outer.fact("both", both, str, str) == "onetwo"
        assert (inner.reused, inner.computed) == ((1, 0) if inner_fact == "reused" else (0, 1))
    with _index(one, tmp_path / "c1") as outer:
        row = outer._row("both")
        assert row is not None
        paths, _, _ = unpack_deps(record_text(row[1]), str(one) + os.sep) or ([], [], set())
        assert sorted(paths) == [str(one / "f.txt"), str(two / "f.txt")]


@pytest.mark.parametrize("busy_opens", [2, store_index.OPEN_TRIES])
def test_an_index_another_process_holds_while_it_is_opened_is_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, busy_opens: int
) -> None:
    """Processes opening a new index at once can meet SQLite's "database is locked" in a step that takes no busy
    wait (the switch to WAL): the open is tried again a few times before the index is given up for the run."""
    real, calls = store_index.connect, []

    def held(path: Path, timeout: float) -> sqlite3.Connection:
        calls.append(path)
        if len(calls) <= busy_opens:
            exc = sqlite3.OperationalError("database is locked")
            exc.sqlite_errorcode = 5
            raise exc
        return real(path, timeout)

    monkeypatch.setattr(store_index, "connect", held)
    monkeypatch.setattr(store_index, "OPEN_PAUSE", 0.0)
    path = tmp_path / "a.txt"
    path.write_text("one", encoding="utf-8")
    _age(path)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert _text_fact(index, path) == "one"
        if busy_opens < store_index.OPEN_TRIES:
            assert index.usable and index.notices == [] and len(calls) == busy_opens + 1
        else:  # held all along: this run looks afresh, and says why once
            assert not index.usable and len(calls) == store_index.OPEN_TRIES
            assert index.notices == [
                f"cannot keep the store index in {index.path.parent}: database is locked; looking afresh"
            ]


def test_names_read_ahead_beyond_a_batch_are_read_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_index, "BATCH", 2)
    files = _numbered_files(tmp_path, 4)
    cache = tmp_path / "cache"
    with _index(tmp_path, cache) as index:
        for i, path in enumerate(files):
            _file_fact(index, i, path)
    with _index(tmp_path, cache) as index:
        index.prefetch([f"f{i}" for i in range(4)])
        assert set(index._ahead) == {"f0", "f1"}
        assert [_file_fact(index, i, path) for i, path in enumerate(files)] == ["0", "1", "2", "3"]
        assert (index.reused, index.computed) == (4, 0)


class _LockedOnce:
    """A connection whose next write meets "database is locked" once (another process held it too long)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn, self.locked = conn, True

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql == "BEGIN IMMEDIATE" and self.locked:
            self.locked = False
            raise sqlite3.OperationalError("database is locked")
        return self.conn.execute(sql, *args)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> object:
        return getattr(self.conn, name)

    def __enter__(self) -> sqlite3.Connection:
        return self.conn.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.conn.__exit__(*exc)  # type: ignore[arg-type]


def test_a_batch_that_could_not_be_written_leaves_the_kept_clock_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Facts computed afresh whose write failed leave their old rows kept: the clock is not moved past the
    changes that made those rows stale, so the next process is told of them again and computes them afresh."""
    monkeypatch.setattr(store_index, "BATCH", 2)
    root = tmp_path / "root"
    root.mkdir()
    files = [root / f"{i}.txt" for i in range(3)]
    for i, path in enumerate(files):
        path.write_text(f"old{i}", encoding="utf-8")
        _age(path)

    def facts(index: StoreIndex) -> list[str]:
        return [index.fact(f"f{i}", lambda p=p: str(reading.read_text(p)), str, str) for i, p in enumerate(files)]

    def kept_clock() -> object:
        conn = sqlite3.connect(index_path(tmp_path / "cache", root))
        try:
            return conn.execute("SELECT value FROM meta WHERE key = 'watchman-clock'").fetchone()
        finally:
            conn.close()

    with _index(root, tmp_path / "cache") as index:
        assert facts(index) == ["old0", "old1", "old2"]
        index._clock_new = "c:1"
    assert kept_clock() == ("c:1",)
    for i in (0, 1):
        files[i].write_text(f"NEW{i}", encoding="utf-8")
        _age(files[i], 5)
    changed = {str(files[0]), str(files[1])}
    with _index(root, tmp_path / "cache", look=ChangedSince(changed)) as index:
        index._clock_kept, index._clock_new = "c:1", "c:2"
        index._conn = _LockedOnce(index._conn)  # type: ignore[arg-type, assignment]
        assert facts(index) == ["NEW0", "NEW1", "old2"] and index.notices
    assert kept_clock() == ("c:1",), "not moved past the changes the lost write would have kept"
    # The next process asks what changed since the kept clock: the two files again.
    with _index(root, tmp_path / "cache", look=ChangedSince(changed)) as index:
        assert facts(index) == ["NEW0", "NEW1", "old2"] and index.computed == 2


def test_a_nested_fact_that_raises_hands_its_reads_to_the_fact_that_caught_it(tmp_path: Path) -> None:
    """A fact around one whose computing raised, and that makes its answer of the error, depends on what the
    failed one read: once that file is mended, both are computed again."""
    path = tmp_path / "b.txt"
    path.write_text("bad", encoding="utf-8")
    _age(path)

    def inner() -> str:
        text = str(reading.read_text(path))
        if text == "bad":
            raise ValueError(text)
        return text

    def outer(index: StoreIndex) -> str:
        def compute() -> str:
            try:
                return index.fact("inner", inner, str, str)
            except ValueError:
                return "error"

        return index.fact("outer", compute, str, str)

    with _index(tmp_path, tmp_path / "cache") as index:
        assert outer(index) == "error"
    with _index(tmp_path, tmp_path / "cache") as index:
        assert outer(index) == "error" and (index.reused, index.computed) == (1, 0)
    path.write_text("good!", encoding="utf-8")
    _age(path, 5)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert outer(index) == "good!" and (index.reused, index.computed) == (0, 2)


# ---------------------------------------------------------------------------- a record read a segment at a time


def _segments_record(tmp_path: Path, count: int) -> tuple[list[Path], str]:
    """*count* files, each the one read of a segment (as a fact made of one fact per task records them)."""
    (tmp_path / "many").mkdir(exist_ok=True)
    files = _numbered_files(tmp_path / "many", count)
    prefix = str(tmp_path) + os.sep
    parts = [pack_deps({str(f): watch.look_one(str(f))}, set(), prefix) for f in files]
    return files, pack_deps({}, set(), prefix, [store_index.deps_segments(p) for p in parts])


def test_a_record_read_a_segment_at_a_time_is_the_whole_record(tmp_path: Path) -> None:
    files, record = _segments_record(tmp_path, 5)
    prefix = str(tmp_path) + os.sep
    whole = unpack_deps(record, prefix)
    assert whole is not None
    segments = store_index.segments_of(record, prefix)
    streamed = [pair for paths, looks, _ in segments for pair in zip(paths, looks, strict=True)]
    assert streamed == list(zip(whole[0], whole[1], strict=True)) and len(streamed) == len(files)
    assert list(store_index.segments_of(f'["{DEPS_FORM}"]', prefix)) == []
    bad_records = (record[:-1], record + "]", record[:-1] + ",]", record.replace("[[", "[{", 1), "[]", '["reads/3",[]]')
    for bad in bad_records:
        with pytest.raises(ValueError):
            list(store_index.segments_of(bad, prefix))


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_a_kept_record_is_inflated_and_read_a_chunk_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """The record kept deflated reads back segment by segment, whatever chunk a segment is cut at; a record that
    does not inflate, or inflates to something else, is refused part-way."""
    monkeypatch.setattr(store_index, "_CHUNK_CHARS", chunk)
    _, record = _segments_record(tmp_path, 5)
    prefix = str(tmp_path) + os.sep
    kept = store_index.packed_record(record)
    assert len(kept) < len(record) and store_index.record_text(kept) == record
    inflated = list(store_index._segments(store_index._inflated(kept), prefix))
    assert inflated == list(store_index.segments_of(record, prefix))
    assert (
        list(store_index._segments(store_index._inflated(store_index.packed_record(f'["{DEPS_FORM}"]')), prefix)) == []
    )
    for bad in (kept[:-3], kept + b"x", b"not deflated", store_index.packed_record(record[:-1])):
        with pytest.raises(ValueError):
            list(store_index._segments(store_index._inflated(bad), prefix))
    with pytest.raises(ValueError):
        store_index.record_text(b"not deflated")


def test_hashes_are_told_distinct_a_part_at_a_time() -> None:
    """A value twice is found whether the two are in one array or in two, and whatever part its bits put it in."""
    import array

    def of(*values: int) -> array.array[int]:
        return array.array("q", values)

    assert store_index._distinct(of(*range(100)), of(*range(100, 200)))
    assert store_index._distinct(of(), of())
    for twice in (0, 15, 16, -1, 2**63 - 1, -(2**63)):
        assert not store_index._distinct(of(twice, 3, twice))
        assert not store_index._distinct(of(1, twice), of(twice, 2))
        assert store_index._distinct(of(twice), of(twice ^ 16))


def test_a_fact_made_of_many_is_checked_a_batch_at_a_time_and_keeps_no_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm check of a fact made of many facts holds a batch of paths at a time (never all) and keeps none of
    its looks; a change in any batch is seen, and a look that notes names every change, not only the first. (Here
    looked at in this process alone: the looks shared with a forked process are the next test's.)"""
    monkeypatch.setattr(store_index, "STREAM_PATHS", 4)
    monkeypatch.setattr(watch, "_may_fork", lambda: False)
    files, record = _segments_record(tmp_path, 11)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index._holds_streamed(packed_record(record)) is True
        look = index.look
        assert isinstance(look, StatPass) and not look._by_path and not look._unfiled and look.stats == 11
        twice = record[:-1] + "," + store_index.deps_segments(record) + "]"
        assert index._holds_streamed(packed_record(twice)) is None, "in two segments: only the whole record can say"
        assert index._holds_streamed(b"not a record") is None
    for changed in (files[0], files[-1]):
        changed.write_text("changed", encoding="utf-8")
        _age(changed, 20)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index._holds_streamed(packed_record(record)) is False
        assert index.look.stats == 4, "the first batch that changed ends the check"  # type: ignore[attr-defined]
    noting = StatPass(noting=True)
    with _index(tmp_path, tmp_path / "cache", look=noting) as index:
        assert index._holds_streamed(packed_record(record)) is False
        assert noting.differed == {str(files[0]), str(files[-1])}


def _shares(record: str, files: list[Path]) -> tuple[list[Path], list[Path]]:
    """The files whose segment this process looks at where looks are shared, and those the forked one does."""
    mine: list[Path] = []
    theirs: list[Path] = []
    by_name = {f.name: f for f in files}
    for number, segment in enumerate(store_index._raw_segments(iter((record,)))):
        named = [by_name[Path(p).name] for p in segment[0] if Path(p).name in by_name]  # type: ignore[index]
        (mine if number % store_index.SHARE_EVERY < store_index.SHARE_HERE else theirs).extend(named)
    return mine, theirs


@pytest.mark.parametrize("changed", ["none", "here", "forked", "both"])
def test_looks_shared_with_a_forked_process_say_what_one_process_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: str
) -> None:
    """Where a forked process shares the looks, the verdict is the one a single process gives: a change in
    either share is seen, every path is looked at once (counted in both shares), none of the looks is kept, and
    a record that is not one, or names a path in two segments, is left to the whole record."""
    monkeypatch.setattr(store_index, "STREAM_PATHS", 4)
    monkeypatch.setattr(watch, "_may_fork", lambda: True)
    files, record = _segments_record(tmp_path, 11)
    mine, theirs = _shares(record, files)
    assert mine and theirs and sorted(mine + theirs) == sorted(files)
    for path in {"none": [], "here": [mine[-1]], "forked": [theirs[-1]], "both": [mine[0], theirs[0]]}[changed]:
        path.write_text("changed", encoding="utf-8")
        _age(path, 20)
    forks: list[object] = []
    real_forked = watch.Forked
    monkeypatch.setattr(watch, "Forked", lambda work: forks.append(work) or real_forked(work))
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index._holds_streamed(packed_record(record)) is (changed == "none")
        look = index.look
        assert isinstance(look, StatPass) and not look._by_path and not look._unfiled
        assert len(forks) == 1, "the looks were shared"
        if changed in ("none", "forked"):
            assert look.stats == 11, "each path looked at once, in one share or the other"
        twice = record[:-1] + "," + store_index.deps_segments(record) + "]"
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index._holds_streamed(packed_record(twice)) is (None if changed == "none" else False)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index._holds_streamed(b"not a record") is None


def test_looks_a_forked_process_never_answered_are_taken_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked process that dies, or cannot be started, leaves the whole check to this process."""
    monkeypatch.setattr(watch, "_may_fork", lambda: True)
    files, record = _segments_record(tmp_path, 7)
    _, theirs = _shares(record, files)

    class Silent:
        def __init__(self, work: object) -> None:
            pass

        def answer(self) -> None:
            return None

        def stop(self) -> None:
            pass

    monkeypatch.setattr(watch, "Forked", Silent)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index._holds_streamed(packed_record(record)) is True
        assert index.look.stats == 7  # type: ignore[attr-defined]
    theirs[0].write_text("changed", encoding="utf-8")
    _age(theirs[0], 20)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert index._holds_streamed(packed_record(record)) is False


def test_an_interrupt_while_the_looks_are_shared_leaves_no_process_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch, "may_fork", lambda: True)
    _, record = _segments_record(tmp_path, 7)
    stopped: list[int] = []
    real_forked = watch.Forked

    class Kept(real_forked):  # type: ignore[misc, valid-type]
        def stop(self) -> None:
            stopped.append(self._pid)
            super().stop()

    monkeypatch.setattr(watch, "Forked", Kept)

    def interrupted() -> None:
        raise KeyboardInterrupt

    with _index(tmp_path, tmp_path / "cache") as index, pytest.raises(KeyboardInterrupt):
        index._holds_streamed(packed_record(record), interrupted)
    assert len(stopped) == 1 and stopped[0] > 0
    with pytest.raises(ChildProcessError):  # ended and reaped
        os.waitpid(stopped[0], os.WNOHANG)


def test_a_value_decoded_while_the_looks_are_shared_is_let_go_when_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept value is decoded while the forked process looks; when a path in its share changed, that value
    is let go and the fact computed afresh. A value that no longer decodes is computed afresh too."""
    monkeypatch.setattr(watch, "_may_fork", lambda: True)
    (tmp_path / "many").mkdir()
    files = _numbered_files(tmp_path / "many", 12)
    decoded: list[object] = []

    def decode(value: object) -> list[str]:
        decoded.append(value)
        if not isinstance(value, list):
            raise TypeError("not a list")
        return [str(v) for v in value]

    def many(index: StoreIndex, encode: Callable[[list[str]], object] = list) -> list[str]:
        """One fact made of one fact per file: a record of a segment per file."""

        def each() -> list[str]:
            return [index.fact(f"one/{f.name}", lambda f=f: str(reading.read_text(f)), str, str) for f in files]

        return index.fact("many", each, encode, decode)

    with _index(tmp_path, tmp_path / "cache") as index:
        first = many(index)
    with _index(tmp_path, tmp_path / "cache") as index:
        assert many(index) == first and index.reused == 1 and decoded == [first]
    with _index(tmp_path, tmp_path / "cache") as index:
        row = index._row("many")
    assert row is not None
    _, theirs = _shares(store_index.record_text(row[1]), files)
    theirs[-1].write_text("changed", encoding="utf-8")
    _age(theirs[-1], 20)
    decoded.clear()
    with _index(tmp_path, tmp_path / "cache") as index:
        again = many(index, encode=lambda value: {"not": "a list"})
    assert decoded == [first], "decoded while the forked process looked, and let go"
    assert "changed" in again and index.computed >= 1
    with _index(tmp_path, tmp_path / "cache") as index:
        assert many(index) == again and index.computed >= 1, "a value of another shape is computed afresh"


@pytest.mark.parametrize("noting", [False, True])
def test_a_fact_found_stale_is_computed_without_looking_again(tmp_path: Path, noting: bool) -> None:
    """A kept value asked for and found stale (a poll's count) and then computed through the same look is looked
    at once, not twice: what the first look found stale is stale for the second question too."""
    (tmp_path / "many").mkdir()
    files = _numbered_files(tmp_path / "many", 6)

    def read() -> list[str]:
        return [str(reading.read_text(f)) for f in files]

    with _index(tmp_path, tmp_path / "cache") as index:
        index.fact("all", read, list, list)
    files[2].write_text("changed", encoding="utf-8")
    _age(files[2], 20)
    look = StatPass(noting=noting)
    with _index(tmp_path, tmp_path / "cache", look=look) as index:
        assert index.kept("all") is None
        looked = look.stats
        assert looked >= len(files)
        assert index.fact("all", read, list, list)[2] == "changed"
        assert look.stats == looked, "found stale once: computed without a second look at what it recorded"
        if noting:
            assert look.differed == {str(files[2])}


def test_a_sibling_found_to_hold_is_looked_at_again_once_the_look_forgets(tmp_path: Path) -> None:
    """Two facts kept from one reading share its reads: the second holds without a look of its own, until the
    look forgets (a watcher told of a change) or is replaced; then a change is seen."""
    path = tmp_path / "a.txt"
    path.write_text("one", encoding="utf-8")
    _age(path)

    def read() -> str:
        return str(reading.read_text(path))

    with _index(tmp_path, tmp_path / "cache") as index:
        index.fact("first", read, str, str, siblings=lambda: {"second": read()})
    look = StatPass()
    with _index(tmp_path, tmp_path / "cache", look=look) as index:
        assert index.fact("first", lambda: "never", str, str) == "one"
        stats = look.stats
        assert index.fact("second", lambda: "never", str, str) == "one" and look.stats == stats
        path.write_text("two", encoding="utf-8")
        _age(path, 5)
        look.forget({str(path)})
        assert index.fact("second", read, str, str) == "two"
        index.look = StatPass()
        assert index.fact("first", read, str, str) == "two"
