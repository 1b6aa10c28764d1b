"""The demo's history is spread out: its runs fall on many days, last minutes or hours, and end in every way."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from okstra_core.demo import generate
from okstra_core.demo.bulk import BULK_TYPES, _bulk_template_name
from okstra_core.demo.schedule import FIRST_DAY, bulk_pace
from okstra_core.stats import Stats, compute
from okstra_core.store import Project

ORIGIN = dt.datetime(2026, 10, 1, 9, tzinfo=dt.UTC)


def _days(stats: Stats) -> list[dt.date]:
    return sorted(dt.date.fromisoformat(day) for day in stats.runs_per_day)


def _outcomes(stats: Stats) -> set[str]:
    return {outcome for counts in stats.runs_per_day.values() for outcome, n in counts.items() if n}


def _assert_varied(stats: Stats, min_days: int) -> None:
    days = _days(stats)
    assert len(days) >= min_days, f"runs on {len(days)} days only"
    assert (days[-1] - days[0]).days >= 12, "the history spans about two weeks"
    assert len(days) < (days[-1] - days[0]).days + 1, "some days have no run"
    per_day = [sum(counts.values()) for counts in stats.runs_per_day.values()]
    assert max(per_day) > min(per_day), "the days differ in how many runs they hold"
    assert {"completed", "error", "in-progress"} <= _outcomes(stats)
    medians = {round(spread.median) for spread in stats.phases}
    assert len(stats.phases) == len(BULK_TYPES) and len(medians) == len(stats.phases), "each phase takes its time"
    assert any(spread.least < spread.most for spread in stats.phases), "runs of a phase differ in duration"
    assert len([c for c in stats.fix_cycles if c > 0]) >= 2, "tasks with different numbers of fix cycles"
    assert len(stats.rounds) >= 2 and stats.not_converged, "convergences of different lengths, one without agreement"


def test_the_rich_demo_history_is_varied(demo_root: Path) -> None:
    stats = compute(Project(demo_root))
    _assert_varied(stats, min_days=10)
    # The demo's legacy flat run (dated a month before the rest) counts as a run, as the catalog counts it.
    assert _days(stats)[0] == dt.date(2026, 10, 1) and _days(stats)[1] == FIRST_DAY
    assert all(day.weekday() < 5 for day in _days(stats)), "nobody works at weekends"


def test_the_bulk_demo_history_is_varied(tmp_path: Path) -> None:
    root = generate(tmp_path / "project", tasks=60, jobs=1, seed=7)
    stats = compute(Project(root))
    _assert_varied(stats, min_days=8)
    bulk = [t for t in stats.tasks if t.key.startswith("demo-shop:bulk-")]
    assert len(bulk) == 60 - 13


def test_bulk_tasks_follow_their_seed() -> None:
    first = [bulk_pace(0, i, ORIGIN) for i in range(200)]
    assert first == [bulk_pace(0, i, ORIGIN) for i in range(200)], "the same seed, the same history"
    assert first != [bulk_pace(1, i, ORIGIN) for i in range(200)], "another seed, another history"
    assert [_bulk_template_name(i, 0) for i in range(200)] == [_bulk_template_name(i, 0) for i in range(200)]
    days = {pace.start.date() for pace in first}
    assert len(days) >= 10 and all(day.weekday() < 5 for day in days)
    assert len({round(pace.scale, 1) for pace in first}) > 10, "tasks work at different paces"
    templates = {_bulk_template_name(i, 0)[1] for i in range(1000)}
    assert {"analysis-error", "implementation-running", "final-verification-fix-2", "analysis-converged-3"} <= templates


@pytest.mark.parametrize("seed", [0, 3])
def test_a_bulk_task_keeps_its_type_whatever_the_seed(seed: int) -> None:
    # The catalog's task type of bulk task i does not depend on the seed, so the inbox's counts stay put.
    assert [_bulk_template_name(i, seed)[0] for i in range(50)] == [BULK_TYPES[i % 5] for i in range(50)]
