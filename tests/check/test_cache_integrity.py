"""The check cache is signed: an edited, added or moved record is never trusted, whoever wrote it."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.check import cache as cache_module
from okstra_core.commands.check import main_check

from .helpers import TASK, edit_records, kept_records, one, records_database

WARNING = "okstra check: warning: "


@pytest.fixture(autouse=True)
def _trust_fresh_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests edit files right before checking: cache them anyway."""
    monkeypatch.setattr(cache_module, "RACY_SECONDS", 0.0)


class Runner:
    """``okstra check`` on one project, cached (in *cache*) or not, with its output."""

    def __init__(self, root: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root, self.cache, self.capsys = root, cache, capsys

    def run(self, *extra: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main_check([str(self.root), "--home", str(self.root / ".okstra-home"), "--quiet", *extra])
        out, err = self.capsys.readouterr()
        return code, out, err

    def cached(self) -> tuple[int, str, str]:
        return self.run("--cache-dir", str(self.cache))

    def fresh(self) -> tuple[int, str]:
        code, out, err = self.run("--no-cache")
        assert err == ""
        return code, out

    def file(self) -> Path:
        return records_database(self.cache)

    def edit(self, change: Any) -> None:
        edit_records(self.cache, change)


@pytest.fixture
def runner(fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Runner:
    """A demo with one error in one task, checked once through the cache (which now holds every task)."""
    one(fresh_demo / TASK, "runs/analysis/state/team-state-*.json").write_text("{", encoding="utf-8")
    r = Runner(fresh_demo, tmp_path / "cache", capsys)
    code, _out, err = r.cached()
    assert code == 1 and err == ""
    return r


def _with_errors(tasks: dict[str, Any]) -> list[str]:
    return sorted(rel for rel, rec in tasks.items() if any(row[1] == "error" for row in rec["findings"]))


def _only_warning(err: str, count: int) -> None:
    lines = err.splitlines()
    assert len(lines) == 1, err
    entries = "entry" if count == 1 else "entries"
    assert lines[0].startswith(f"{WARNING}{count} cache {entries} failed the integrity check"), err


def test_removed_findings_are_not_trusted(runner: Runner) -> None:
    expected = runner.fresh()
    assert expected[0] == 1

    def remove(tasks: dict[str, Any]) -> None:
        (broken,) = _with_errors(tasks)
        tasks[broken]["findings"] = []

    runner.edit(remove)
    code, out, err = runner.cached()
    assert (code, out) == expected, "the emptied record is checked afresh: the error is still reported"
    _only_warning(err, 1)
    code, out, err = runner.cached()
    assert (code, out, err) == (*expected, ""), "the record was rewritten, signed: no more warning"


def test_added_findings_are_not_trusted(runner: Runner) -> None:
    expected = runner.fresh()

    def add(tasks: dict[str, Any]) -> None:
        for rel in sorted(tasks)[:3]:
            tasks[rel]["findings"].append(["OKS001", "error", f"{rel}/made-up.json", "planted", None])

    runner.edit(add)
    code, out, err = runner.cached()
    assert (code, out) == expected and "planted" not in out
    _only_warning(err, 3)  # one line for the run, whatever the number of records


def test_records_swapped_between_tasks_are_not_trusted(runner: Runner) -> None:
    expected = runner.fresh()

    def swap(tasks: dict[str, Any]) -> None:
        (broken,) = _with_errors(tasks)
        clean = next(rel for rel in sorted(tasks) if rel != broken)
        tasks[broken], tasks[clean] = tasks[clean], tasks[broken]

    runner.edit(swap)
    code, out, err = runner.cached()
    assert (code, out) == expected
    _only_warning(err, 2)


def test_a_cache_signed_with_another_key_is_not_trusted(
    runner: Runner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    expected = runner.fresh()
    # Every task's record and the project part's.
    entries = len(kept_records(runner.cache)) + 1
    monkeypatch.setenv(cache_module.KEY_ENV, "a CI secret")
    code, out, err = runner.cached()
    assert (code, out) == expected
    _only_warning(err, entries)
    code, out, err = runner.cached()
    assert (code, out, err) == (*expected, ""), "the same key reads what it signed"
    shared = kept_records(runner.cache)
    monkeypatch.setenv(cache_module.KEY_ENV, "another secret")
    code, out, err = runner.cached()
    assert (code, out) == expected
    _only_warning(err, len(shared) + 1)


def test_the_key_lives_in_the_state_folder_with_mode_0600(runner: Runner) -> None:
    key = Path(os.environ["OKSTRA_STATE_DIR"]) / layout.CACHE_KEY_FILE
    st = os.lstat(key)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert len(key.read_bytes().strip()) == 2 * cache_module.KEY_BYTES
    kept = (".sqlite", ".sqlite-wal", ".sqlite-shm", layout.CHECK_VERDICT_SUFFIX)
    assert not [p for p in runner.cache.rglob("*") if p.is_file() and p.suffix not in kept], "no key in the cache"
    before = key.read_bytes()
    runner.cached()
    assert key.read_bytes() == before, "made once, then reused"


def test_the_state_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OKSTRA_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert layout.okstra_state_dir() == tmp_path / "xdg" / "okstra"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert layout.okstra_state_dir() == tmp_path / "home" / ".local" / "state" / "okstra"


@pytest.mark.parametrize("spoil", ["open to others", "symlink", "not a key"])
def test_a_key_that_cannot_be_trusted_turns_the_cache_off(runner: Runner, tmp_path: Path, spoil: str) -> None:
    expected = runner.fresh()
    key = Path(os.environ["OKSTRA_STATE_DIR"]) / layout.CACHE_KEY_FILE
    if spoil == "open to others":
        key.chmod(0o644)
    elif spoil == "symlink":
        elsewhere = tmp_path / "elsewhere.key"
        elsewhere.write_bytes(key.read_bytes())
        elsewhere.chmod(0o600)
        key.unlink()
        key.symlink_to(elsewhere)
    else:
        key.write_bytes(b"short\n")
    cached_before = runner.file().read_bytes()
    code, out, err = runner.cached()
    assert (code, out) == expected
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{WARNING}cache not used: {key}: "), err
    assert runner.file().read_bytes() == cached_before, "neither read nor rewritten"


def test_a_key_that_cannot_be_made_turns_the_cache_off(
    runner: Runner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    expected = runner.fresh()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    monkeypatch.setenv("OKSTRA_STATE_DIR", str(blocker / "state"))
    code, out, err = runner.cached()
    assert (code, out) == expected
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{WARNING}cache not used: "), err
    assert blocker.read_text() == "not a folder\n"
