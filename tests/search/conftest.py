"""Fixtures of the search tests: an index kept in the test's own cache folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from okstra_core.search import index as search_index
from okstra_core.search.index import SearchIndex


@pytest.fixture(autouse=True)
def _settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by a test are trusted at once (the racy window is for real clocks, not asserted on)."""
    monkeypatch.setattr(search_index, "RACY_NS", 0)


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture(params=[1, 2], ids=["look-here", "look-shared-out"])
def fresh_index(
    fresh_demo: Path, cache_dir: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SearchIndex]:
    """An up-to-date index of a private copy of the demo, whose look at the store and reading run in this process
    or are shared out between two forked workers."""
    if request.param > 1:
        monkeypatch.setattr(search_index, "SHARED_READ_FROM", 1)
    with SearchIndex(fresh_demo, cache_dir, jobs=request.param) as index:
        index.update()
        yield index
