"""The incremental check asks watchman what changed: a task whose tree watchman vouches for is reused without a
look, every other task is looked at as before, and the report is the one a fresh check gives."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import PrivateWatchman

from okstra_core.check import cache as cache_module
from okstra_core.check import engine
from okstra_core.check.cache import CheckCache
from okstra_core.check.formats import render
from okstra_core.watchman import LINKED_STORE

from .helpers import TASK, check, edit_records, kept_records, one, records_database


@pytest.fixture(autouse=True)
def _trust_fresh_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "RACY_SECONDS", 0.0)


def _looked_at(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The task folders whose trees the check looks at (``lstat``) to confirm their cached records."""
    seen: list[str] = []
    holds = cache_module.tree_holds

    def counting(folder: str, *args: Any) -> bool:
        seen.append(folder)
        return holds(folder, *args)

    monkeypatch.setattr(cache_module, "tree_holds", counting)
    return seen


def _clock(cache_dir: Path) -> str | None:
    """The watchman clock the kept records hold as of."""
    conn = sqlite3.connect(records_database(cache_dir))
    try:
        (clock,) = conn.execute("SELECT clock FROM check_runs").fetchone()
    finally:
        conn.close()
    return clock


def _same_as_fresh(root: Path, check_cache: CheckCache, problem: str | None = None) -> None:
    cached = check(root, check_cache=check_cache, watchman=True)
    assert check_cache.watchman_problem == problem
    assert render(cached, "json") == render(check(root), "json")


def test_only_the_edited_task_is_looked_at(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_cache = CheckCache(tmp_path / "cache")
    _same_as_fresh(fresh_demo, check_cache)  # no clock kept yet: every task is checked
    looked = _looked_at(monkeypatch)
    _same_as_fresh(fresh_demo, CheckCache(tmp_path / "cache"))
    assert looked == [], "nothing changed: watchman vouches for every task"
    report = one(fresh_demo, f"{TASK}/runs/*/reports/*.data.json")
    value = json.loads(report.read_text(encoding="utf-8"))
    value["title"] = 17  # a finding the cached record does not have
    report.write_text(json.dumps(value), encoding="utf-8")
    again = CheckCache(tmp_path / "cache")
    _same_as_fresh(fresh_demo, again)
    assert looked == [os.path.join(fresh_demo, TASK)]
    assert again.misses == 1


def test_a_clock_moved_in_the_cache_file_is_not_trusted(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_cache = CheckCache(tmp_path / "cache")
    _same_as_fresh(fresh_demo, check_cache)
    first, first_clock = kept_records(tmp_path / "cache"), _clock(tmp_path / "cache")
    report = one(fresh_demo, f"{TASK}/runs/*/reports/*.data.json")
    report.write_text("{}", encoding="utf-8")
    monkeypatch.setattr(engine, "UPDATE_MOST_CHANGED", -1)  # this run signs every record afresh, at a newer clock
    _same_as_fresh(fresh_demo, CheckCache(tmp_path / "cache"))
    assert _clock(tmp_path / "cache") != first_clock
    assert kept_records(tmp_path / "cache") != first

    def restore(records: dict[str, dict[str, Any]]) -> None:
        records.clear()
        records.update(first)

    # The old records with the newer clock: the change to the report would be hidden if the clock were trusted.
    edit_records(tmp_path / "cache", restore)
    spoiled = CheckCache(tmp_path / "cache")
    _same_as_fresh(fresh_demo, spoiled)
    assert spoiled.rejected == len(first)


def test_a_run_with_few_changes_writes_only_their_rows_under_the_kept_clock(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_dir = tmp_path / "cache"
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    before, clock = kept_records(cache_dir), _clock(cache_dir)
    assert clock is not None
    report = one(fresh_demo, f"{TASK}/runs/*/reports/*.data.json")
    report.write_text("{}", encoding="utf-8")
    written: list[str] = []
    update_records = cache_module._update_records

    def noting(conn: Any, scope: str, clock: Any, rows: list[tuple[str, ...]], *rest: Any) -> bool:
        written.extend(json.loads(task) for task, *_ in rows)
        return update_records(conn, scope, clock, rows, *rest)

    monkeypatch.setattr(cache_module, "_update_records", noting)
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    monkeypatch.setattr(cache_module, "_update_records", update_records)
    after = kept_records(cache_dir)
    assert _clock(cache_dir) == clock, "the records stay under the clock they were kept with"
    assert written == [TASK], "only the edited task's row is written (a reused record is not written again)"
    assert {rel for rel in after if after[rel] != before[rel]} == {TASK}

    # The edited task's older record, validly signed under the same clock, is put back: the task changed since
    # that clock, so its record is confirmed by a look, found stale and checked afresh.
    edit_records(cache_dir, lambda records: records.update({TASK: before[TASK]}))
    looked = _looked_at(monkeypatch)
    again = CheckCache(cache_dir)
    _same_as_fresh(fresh_demo, again)
    assert (again.rejected, again.misses) == (0, 1)
    assert looked == [os.path.join(fresh_demo, TASK)]


def test_a_run_where_many_tasks_changed_signs_every_record_at_the_new_clock(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_dir = tmp_path / "cache"
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    clock = _clock(cache_dir)
    tasks = sorted(kept_records(cache_dir))
    for rel in tasks[:3]:
        (fresh_demo / rel / "notes.md").write_text("touched\n", encoding="utf-8")
    monkeypatch.setattr(engine, "UPDATE_MOST_SHARE", 2 / len(tasks))  # 3 tasks changed: past the share
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    assert _clock(cache_dir) != clock
    looked = _looked_at(monkeypatch)
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    assert looked == [], "the tasks confirmed by a look are vouched for again at the new clock"


def test_kept_records_replaced_by_another_run_meanwhile_are_saved_whole(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that would keep its records under the clock it loaded them with finds that another run replaced them
    (under another clock) before it saves: it writes nothing of its own under the old clock, and saves every
    record whole under the clock it asked with, each one trusted by the next run."""
    cache_dir = tmp_path / "cache"
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    loaded_clock = _clock(cache_dir)
    before_replacing = kept_records(cache_dir)
    kept_update = CheckCache.update

    def replaced_meanwhile(self: CheckCache, *args: Any) -> bool:
        conn = sqlite3.connect(records_database(cache_dir))
        with conn:
            conn.execute("UPDATE check_runs SET clock = 'c:0:1:1:1'")  # another run's records, as of its clock
        conn.close()
        before = kept_records(cache_dir)
        done = kept_update(self, *args)
        assert not done and kept_records(cache_dir) == before, "nothing written under the old clock"
        return done

    monkeypatch.setattr(CheckCache, "update", replaced_meanwhile)
    report = one(fresh_demo, f"{TASK}/runs/*/reports/*.data.json")
    report.write_text("{}", encoding="utf-8")
    replacing = CheckCache(cache_dir)
    _same_as_fresh(fresh_demo, replacing)
    assert replacing.misses == 1
    assert _clock(cache_dir) not in (loaded_clock, "c:0:1:1:1"), "saved whole under the clock it asked with"
    saved = kept_records(cache_dir)
    assert set(saved) == set(before_replacing), "every task's record saved"
    assert all(saved[t]["mac"] != before_replacing[t]["mac"] for t in saved), "each signed under the new clock"
    monkeypatch.setattr(CheckCache, "update", kept_update)
    after = CheckCache(cache_dir)
    _same_as_fresh(fresh_demo, after)
    assert (after.rejected, after.misses) == (0, 0)


def test_records_kept_by_another_run_after_the_clock_was_read_are_each_confirmed_by_a_look(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The records are read once the project's own rules are done, watchman having been asked since the clock
    they were kept as of before anything was read. Another run that keeps its records (under its own clock) in
    between leaves this run no answer that holds for them: every task is confirmed by a look."""
    cache_dir = tmp_path / "cache"
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    read_clock = CheckCache.kept_clock
    tasks: list[int] = []

    def kept_meanwhile(self: CheckCache, root: str, home: str | None) -> str | None:
        clock = read_clock(self, root, home)
        other = CheckCache(cache_dir)
        records = other.load(root, home)
        assert clock is not None and other.clock == clock and records
        other.save(root, home, records, "c:0:1:1:1")  # another run's records, as of its own clock
        tasks.append(len(records))
        return clock

    monkeypatch.setattr(CheckCache, "kept_clock", kept_meanwhile)
    looked = _looked_at(monkeypatch)
    replaced = CheckCache(cache_dir)
    _same_as_fresh(fresh_demo, replaced)
    assert len(looked) == tasks[0] > 1, "no task reused on watchman's word"
    assert (replaced.hits, replaced.misses) == (tasks[0], 0), "each record confirmed by its look"
    monkeypatch.setattr(CheckCache, "kept_clock", read_clock)
    looked.clear()
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    assert looked == [], "saved under the clock it asked with: the next run is vouched for again"


def test_a_row_that_fails_its_mac_is_gone_after_the_next_run(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman
) -> None:
    cache_dir = tmp_path / "cache"
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))

    def forged(records: dict[str, dict[str, Any]]) -> None:
        records[".okstra/tasks/gone/task"] = {**records[TASK], "mac": "0" * 64}

    edit_records(cache_dir, forged)
    first = CheckCache(cache_dir)
    _same_as_fresh(fresh_demo, first)
    assert first.rejected == 1
    again = CheckCache(cache_dir)
    _same_as_fresh(fresh_demo, again)
    assert again.rejected == 0, "the forged row was removed, not kept under the clock with a warning each run"


def test_a_task_holding_a_symlink_is_looked_at_though_watchman_names_no_change_there(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Watchman names the file that changed, not a symlink leading to it: the task holding the symlink is
    confirmed by a look, which follows it."""
    report = one(fresh_demo, f"{TASK}/runs/*/reports/*.data.json")
    elsewhere = fresh_demo / ".okstra" / "tasks" / "linked-report.data.json"
    elsewhere.write_bytes(report.read_bytes())
    report.unlink()
    report.symlink_to(os.path.relpath(elsewhere, report.parent))
    cache_dir = tmp_path / "cache"
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    value = json.loads(elsewhere.read_text(encoding="utf-8"))
    value["title"] = 17  # a finding the cached record does not have
    elsewhere.write_text(json.dumps(value), encoding="utf-8")
    looked = _looked_at(monkeypatch)
    _same_as_fresh(fresh_demo, CheckCache(cache_dir))
    assert os.path.join(fresh_demo, TASK) in looked


def test_a_symlinked_store_is_checked_without_asking_watchman(
    fresh_demo: Path, tmp_path: Path, watchman_on: PrivateWatchman
) -> None:
    """Watchman names the changes under the store's real folder, never under the symlink the check reads through:
    a store that is a symlink is confirmed by looks."""
    store = fresh_demo / ".okstra"
    real = fresh_demo / "real-store"
    store.rename(real)
    store.symlink_to("real-store")
    cache_dir = tmp_path / "cache"
    _same_as_fresh(fresh_demo, CheckCache(cache_dir), LINKED_STORE)
    _same_as_fresh(fresh_demo, CheckCache(cache_dir), LINKED_STORE)
    report = one(fresh_demo, f"{TASK}/runs/*/reports/*.data.json")
    value = json.loads(report.read_text(encoding="utf-8"))
    value["title"] = 17
    report.write_text(json.dumps(value), encoding="utf-8")
    again = CheckCache(cache_dir)
    _same_as_fresh(fresh_demo, again, LINKED_STORE)
    assert again.misses >= 1
    assert (again.watchman_token, again.watchman_problem) == (None, LINKED_STORE), "watchman's answer not taken"
