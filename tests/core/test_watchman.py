"""The watchman freshness source against a real daemon (the test session's own, see ``private_watchman``).

Watchman's answer is trusted only when it can vouch for it: a first question, a restarted daemon, a recrawl,
more paths than the bound, or no watchman at all mean looking at every path, and the answers through the
index stay those of a fresh look.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import PrivateWatchman

from okstra_core import cli, watchman
from okstra_core.store_index import WATCHMAN_CLOCK, ChangedSince, StatPass, StoreIndex

KEY = b"k" * 32
SCOPE = "test"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".okstra" / "a").mkdir(parents=True)
    (root / ".okstra" / "a" / "one.json").write_text("1", encoding="utf-8")
    (root / "outside.txt").write_text("x", encoding="utf-8")
    return root


def test_changes_under_the_store_are_named_and_a_first_answer_is_not_trusted(
    watchman_on: PrivateWatchman, tmp_path: Path
) -> None:
    root = _project(tmp_path)
    first = watchman.changed_since(root, None)
    assert first.changed is None and first.token is not None and first.problem is None
    quiet = watchman.changed_since(root, first.token)
    assert quiet.changed == set()
    (root / ".okstra" / "a" / "two.json").write_text("2", encoding="utf-8")
    (root / ".okstra" / "a" / "one.json").unlink()
    (root / "outside.txt").write_text("y", encoding="utf-8")
    after = watchman.changed_since(root, quiet.token)
    store = os.fspath(root / ".okstra")
    assert after.changed == {f"{store}/a", f"{store}/a/one.json", f"{store}/a/two.json"}
    # The clock was taken when the question was asked: asked again, nothing changed since.
    assert watchman.changed_since(root, after.token).changed == set()


def test_a_restarted_daemon_is_not_trusted(watchman_on: PrivateWatchman, tmp_path: Path) -> None:
    root = _project(tmp_path)
    token = watchman.changed_since(root, None).token
    assert watchman.changed_since(root, token).changed == set()
    watchman_on.kill()
    (root / ".okstra" / "a" / "one.json").write_text("changed while no daemon watched", encoding="utf-8")
    # The next questions start the daemon again (the first may meet the dead one's socket): never trusted.
    for _ in range(5):
        again = watchman.changed_since(root, token)
        assert again.changed is None
        if again.token is not None:
            break
    assert again.token is not None, again.problem
    assert watchman.changed_since(root, again.token).changed == set()


def test_a_recrawl_is_not_trusted_then_its_count_is(watchman_on: PrivateWatchman, tmp_path: Path) -> None:
    root = _project(tmp_path)
    token = watchman.changed_since(root, None).token
    watchman_on.run("debug-recrawl", os.path.realpath(root))
    after = watchman.changed_since(root, token)
    assert after.changed is None and after.token is not None
    assert json.loads(after.token)[1] >= 1  # the recrawl count kept with the clock
    assert watchman.changed_since(root, after.token).changed == set()


def test_an_answer_longer_than_the_bound_is_not_used(
    watchman_on: PrivateWatchman, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path)
    token = watchman.changed_since(root, None).token
    for n in range(3):
        (root / ".okstra" / "a" / f"new-{n}.json").write_text("n", encoding="utf-8")
    monkeypatch.setattr(watchman, "MAX_CHANGED", 2)
    assert watchman.changed_since(root, token).changed is None


def test_without_watchman_on_the_path_every_path_is_looked_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    answer = watchman.changed_since(root, None)
    assert answer.changed is None and answer.token is None
    assert answer.problem is not None and "not installed" in answer.problem
    with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE, watchman=True) as index:
        assert isinstance(index.look, StatPass)
        assert index.fact("a", lambda: 1, lambda v: v, int) == 1


def _read_text_fact(index: StoreIndex, path: Path) -> str:
    from okstra_core import reading

    def compute() -> str:
        text = reading.read_text(path)
        assert isinstance(text, str)
        return text

    return index.fact(path.name, compute, lambda v: v, str)


def test_a_fact_not_looked_up_is_checked_before_a_newer_clock_is_kept(
    watchman_on: PrivateWatchman, tmp_path: Path
) -> None:
    root = _project(tmp_path)
    one, two = root / ".okstra" / "a" / "one.json", root / ".okstra" / "a" / "two.json"
    two.write_text("2", encoding="utf-8")
    cache = tmp_path / "cache"
    os.utime(one, (1e9, 1e9))
    os.utime(two, (1e9, 1e9))
    with StoreIndex(root, cache, key=KEY, scope=SCOPE, watchman=True) as index:
        assert (_read_text_fact(index, one), _read_text_fact(index, two)) == ("1", "2")
    two.write_text("3", encoding="utf-8")
    os.utime(two, (1e9 + 5, 1e9 + 5))
    with StoreIndex(root, cache, key=KEY, scope=SCOPE, watchman=True) as index:
        assert isinstance(index.look, ChangedSince) and index.look.changed is not None
        assert _read_text_fact(index, one) == "1"  # the other fact is not looked up in this process
    with StoreIndex(root, cache, key=KEY, scope=SCOPE, watchman=True) as index:
        assert isinstance(index.look, ChangedSince) and index.look.changed == set()
        assert _read_text_fact(index, two) == "3"


def _clock(cache: Path) -> str | None:
    (db,) = (cache / "okstra" / "index").glob("*.sqlite")
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (WATCHMAN_CLOCK,)).fetchone()
    return None if row is None else str(row[0])


def _inbox_json(root: Path, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[str, str]:
    cli.main(["inbox", str(root), "--json", *options])
    out = capsys.readouterr()
    return out.out, out.err


def test_the_inbox_verb_keeps_a_clock_and_answers_as_a_fresh_look(
    watchman_on: PrivateWatchman, fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = Path(os.environ["XDG_CACHE_HOME"])
    fresh, _ = _inbox_json(fresh_demo, capsys, "--no-cache")
    assert _inbox_json(fresh_demo, capsys) == (fresh, "")
    kept = _clock(cache)
    assert kept is not None
    assert _inbox_json(fresh_demo, capsys) == (fresh, "")
    assert _clock(cache) not in (None, kept)
    # A decision taken away by an agent's write: watchman names the file, the answer follows.
    task = next((fresh_demo / ".okstra" / "tasks").glob("*/fraud-rules"))
    shutil.move(task, fresh_demo / "away")
    changed, _ = _inbox_json(fresh_demo, capsys, "--no-cache")
    assert changed != fresh
    assert _inbox_json(fresh_demo, capsys) == (changed, "")


def test_no_watchman_leaves_the_daemon_alone(
    watchman_on: PrivateWatchman, fresh_demo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = Path(os.environ["XDG_CACHE_HOME"])
    fresh, _ = _inbox_json(fresh_demo, capsys, "--no-cache")
    assert _inbox_json(fresh_demo, capsys, "--no-watchman") == (fresh, "")
    assert _clock(cache) is None
    monkeypatch.setenv("OKSTRA_WATCHMAN", "off")
    assert _inbox_json(fresh_demo, capsys) == (fresh, "")
    assert _clock(cache) is None


def test_watchman_asked_for_but_missing_is_said_once(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fresh, _ = _inbox_json(fresh_demo, capsys, "--no-cache")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("OKSTRA_WATCHMAN", "auto")
    assert _inbox_json(fresh_demo, capsys) == (fresh, "")  # not asked for: not a word
    monkeypatch.setenv("OKSTRA_WATCHMAN", "on")
    out, err = _inbox_json(fresh_demo, capsys)
    assert out == fresh
    assert err.count("\n") == 1 and "watchman not used" in err and "not installed" in err


def test_a_path_outside_the_store_is_looked_at(watchman_on: PrivateWatchman, tmp_path: Path) -> None:
    root = _project(tmp_path)
    outside, cache = root / "outside.txt", tmp_path / "cache"
    os.utime(outside, (1e9, 1e9))
    for _ in range(2):  # the second keeps a clock watchman can vouch for
        with StoreIndex(root, cache, key=KEY, scope=SCOPE, watchman=True) as index:
            assert _read_text_fact(index, outside) == "x"
    outside.write_text("y", encoding="utf-8")  # watchman is asked about .okstra/ only
    os.utime(outside, (1e9 + 5, 1e9 + 5))
    with StoreIndex(root, cache, key=KEY, scope=SCOPE, watchman=True) as index:
        assert isinstance(index.look, ChangedSince) and index.look.changed == set()
        assert _read_text_fact(index, outside) == "y"


def test_a_store_that_is_a_symlink_is_never_asked_about(tmp_path: Path) -> None:
    """Watchman names what changes in a symlinked store under the folder it leads to, which no path of the
    store matches: its answer would vouch for every path, so the caller looks instead."""
    from okstra_core import watchman as wm

    (tmp_path / "real-store").mkdir()
    (tmp_path / ".okstra").symlink_to(tmp_path / "real-store")
    since = wm.changed_since(tmp_path, None)
    assert since.changed is None and since.token is None and since.problem == wm.LINKED_STORE
