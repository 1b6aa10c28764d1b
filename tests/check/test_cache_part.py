"""The check's records are a part of the store index's database: untrusted, rebuilt alone, and never the reason a
finding goes unreported."""

from __future__ import annotations

import contextlib
import io
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from okstra_core import cli, layout, store_index
from okstra_core.check import cache as cache_module
from okstra_core.check.cache import CheckCache
from okstra_core.commands.check import main_check

from .helpers import TASK, check, edit_records, kept_records, one, records_database

WARNING = "okstra check: warning: "


@pytest.fixture(autouse=True)
def _trust_fresh_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests edit files right before checking: cache them anyway."""
    monkeypatch.setattr(cache_module, "RACY_SECONDS", 0.0)


@pytest.fixture
def broken(fresh_demo: Path) -> Path:
    """A demo with one error in one task."""
    one(fresh_demo / TASK, "runs/analysis/state/team-state-*.json").write_text("{", encoding="utf-8")
    return fresh_demo


def _check(root: Path, *extra: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main_check([str(root), "--home", str(root / ".okstra-home"), "--quiet", *map(str, extra)])
    out, err = capsys.readouterr()
    return code, out, err


def _table(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return sorted(conn.execute(sql).fetchall())
    finally:
        conn.close()


def test_a_deleted_record_never_hides_a_finding(
    broken: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    expected = _check(broken, "--no-cache", capsys=capsys)
    assert expected[0] == 1 and expected[2] == ""
    assert _check(broken, "--cache-dir", cache, capsys=capsys) == expected
    before = kept_records(cache)

    def delete(records: dict[str, dict[str, Any]]) -> None:
        (with_error,) = [rel for rel, rec in records.items() if any(row[1] == "error" for row in rec["findings"])]
        del records[with_error]

    edit_records(cache, delete)
    assert _check(broken, "--cache-dir", cache, capsys=capsys) == expected, "the task is checked afresh"
    assert kept_records(cache).keys() == before.keys(), "and its record kept again"


def test_a_record_with_a_broken_mac_never_hides_a_finding(
    broken: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    expected = _check(broken, "--no-cache", capsys=capsys)
    _check(broken, "--cache-dir", cache, capsys=capsys)

    def forge(records: dict[str, dict[str, Any]]) -> None:
        for rec in records.values():
            rec["findings"] = []
            rec["mac"] = "0" * 64

    edit_records(cache, forge)
    code, out, err = _check(broken, "--cache-dir", cache, capsys=capsys)
    assert (code, out) == expected[:2]
    lines = err.splitlines()
    assert len(lines) == 1 and "failed the integrity check" in lines[0], err


def _every_part(root: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Keep facts, the search's part and the check's part in the store index of *root* in *cache*."""
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(["inbox", str(root), "--cache-dir", str(cache), "--no-watchman"]) == 0
        assert cli.main(["search", str(root), "retry", "--cache-dir", str(cache), "--no-watchman", "--jobs", "1"]) == 0
    _check(root, "--cache-dir", cache, "--no-watchman", capsys=capsys)


def test_a_check_part_of_another_version_is_rebuilt_alone(
    broken: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    expected = _check(broken, "--no-cache", capsys=capsys)
    _every_part(broken, cache, capsys)
    db = records_database(cache)
    facts = _table(db, "SELECT * FROM facts")
    search = _table(db, "SELECT path, stat FROM search_files")
    assert facts and search and kept_records(cache)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'part:check'")
        conn.execute("CREATE TABLE check_left_over(x)")
        conn.execute("UPDATE check_tasks SET record = '[]'")  # a version that kept its records otherwise
    conn.close()
    check_cache = CheckCache(cache)
    assert check_cache.load(str(broken), str(broken / ".okstra-home")) == {}
    assert check_cache.rejected == 0, "records of another version are not read at all"
    assert _check(broken, "--cache-dir", cache, "--no-watchman", capsys=capsys) == expected
    assert _table(db, "SELECT value FROM meta WHERE key = 'part:check'") == [(str(cache_module.PART_FORMAT),)]
    assert not _table(db, "SELECT name FROM sqlite_master WHERE name = 'check_left_over'"), "the old part is gone"
    assert _table(db, "SELECT * FROM facts") == facts, "the facts are left as they are"
    assert _table(db, "SELECT path, stat FROM search_files") == search, "and so is the search's part"
    again = CheckCache(cache)
    assert len(again.load(str(broken), str(broken / ".okstra-home"))) == len(kept_records(cache)) > 0


@pytest.mark.parametrize("damage", ["truncated", "last pages spoiled"])
def test_a_damaged_database_is_rebuilt_with_one_warning(
    broken: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    """Cut short (SQLite finds it malformed as it is opened), or with the check's last pages overwritten (found
    as its records are read)."""
    cache = tmp_path / "cache"
    expected = _check(broken, "--no-cache", capsys=capsys)
    _every_part(broken, cache, capsys)
    db = records_database(cache)
    size = db.stat().st_size
    assert size > 4 * 4096
    with db.open("r+b") as fh:
        if damage == "truncated":
            fh.truncate(size // 3)
        else:
            fh.seek(size - size // 4)
            fh.write(b"\xff" * (size // 4))
    code, out, err = _check(broken, "--cache-dir", cache, "--no-watchman", capsys=capsys)
    assert (code, out) == expected[:2]
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{WARNING}store index {db} ") and "rebuilt" in lines[0], err
    assert _check(broken, "--cache-dir", cache, "--no-watchman", capsys=capsys) == expected, "no more warning"
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    assert kept_records(cache)


def test_a_cache_folder_that_cannot_hold_the_database_is_said_once(
    broken: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    expected = _check(broken, "--no-cache", capsys=capsys)
    cache.mkdir()
    (cache / store_index.INDEX_DIR).write_text("not a folder\n", encoding="utf-8")
    for _run in range(2):
        code, out, err = _check(broken, "--cache-dir", cache, capsys=capsys)
        assert (code, out) == expected[:2], "a fresh answer"
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{WARNING}cache not used: "), err
        assert str(cache / store_index.INDEX_DIR) in lines[0] and "File exists" in lines[0]
    assert (cache / store_index.INDEX_DIR).read_text(encoding="utf-8") == "not a folder\n"


def test_the_records_file_of_an_older_okstra_is_removed(
    broken: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    expected = _check(broken, "--no-cache", capsys=capsys)
    assert _check(broken, "--cache-dir", cache, capsys=capsys) == expected
    (verdict,) = (cache / layout.CHECK_CACHE_DIR).glob(f"*{layout.CHECK_VERDICT_SUFFIX}")
    old = verdict.with_suffix(".json")
    old.write_text('{"format": 4, "tasks": {}}', encoding="utf-8")
    other = cache / layout.CHECK_CACHE_DIR / "another-project.json"
    other.write_text("{}", encoding="utf-8")
    assert _check(broken, "--cache-dir", cache, capsys=capsys) == expected
    assert not old.exists(), "the records file is removed"
    assert verdict.is_file() and other.is_file(), "the verdict stays, and another project's file is not ours to remove"


def test_each_home_keeps_its_own_records(broken: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    root = str(broken)
    home = broken / ".okstra-home"
    check(broken, check_cache=CheckCache(cache), home=home)
    check(broken, check_cache=CheckCache(cache), home=tmp_path / "no-such-home")
    assert CheckCache(cache).load(root, str(home)), "another home's save leaves these records"
    assert CheckCache(cache).load(root, None)
    assert {row[0] for row in _table(records_database(cache), "SELECT scope FROM check_runs")} == {
        f'["{root}", "{home}"]',
        f'["{root}", null]',
    }
