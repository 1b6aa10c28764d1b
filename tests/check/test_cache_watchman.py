"""The incremental check asks watchman what changed: a task whose tree watchman vouches for is reused without a
look, every other task is looked at as before, and the report is the one a fresh check gives."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import PrivateWatchman

from okstra_core.check import cache as cache_module
from okstra_core.check.cache import CheckCache
from okstra_core.check.formats import render

from .helpers import TASK, check, edit_records, kept_records, one


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


def _same_as_fresh(root: Path, check_cache: CheckCache) -> None:
    cached = check(root, check_cache=check_cache, watchman=True)
    assert check_cache.watchman_problem is None
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
    first = kept_records(tmp_path / "cache")
    report = one(fresh_demo, f"{TASK}/runs/*/reports/*.data.json")
    report.write_text("{}", encoding="utf-8")
    _same_as_fresh(fresh_demo, CheckCache(tmp_path / "cache"))
    assert kept_records(tmp_path / "cache") != first

    def restore(records: dict[str, dict[str, Any]]) -> None:
        records.clear()
        records.update(first)

    # The old records with the newer clock: the change to the report would be hidden if the clock were trusted.
    edit_records(tmp_path / "cache", restore)
    spoiled = CheckCache(tmp_path / "cache")
    _same_as_fresh(fresh_demo, spoiled)
    assert spoiled.rejected == len(first)
