"""Home's overview of a project (its runs in progress, its last activity, its task folders) through the store
index is the overview read afresh, whatever happens to the store, and each part is its owner's answer.

The steps of the inbox's state machine (:class:`~tests.workflows.test_inbox_index.StoreSteps`: decisions
made by the verbs, writes as an agent makes them, a file written twice within one clock tick) change the
store; after each, the overview is read through an index opened anew (a new process), through one kept
open across steps and told what changed (a long-lived one), and afresh: the three are equal.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from conftest import PrivateWatchman
from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant

from okstra_core.store import Project
from okstra_core.store_index import StoreIndex
from okstra_core.workflows.activity import activity
from okstra_core.workflows.overview import read_overview
from okstra_core.workflows.running import running_runs

from . import test_inbox_index
from .test_inbox_index import KEY, SCOPE, StoreSteps


def test_the_overview_is_its_owners_answer(demo_root: Path, tmp_path: Path) -> None:
    project = Project(demo_root)
    fresh = read_overview(project)
    assert list(fresh.running) == running_runs(project)
    assert fresh.running, "the demo has a run in progress"
    assert fresh.last_activity == activity(project)[0].at
    assert list(fresh.task_roots) == [ref.root for ref in project.task_refs]
    with StoreIndex(demo_root, tmp_path, key=KEY, scope=SCOPE) as index:
        assert read_overview(Project(demo_root), index) == fresh
    with StoreIndex(demo_root, tmp_path, key=KEY, scope=SCOPE) as index:
        assert read_overview(Project(demo_root), index) == fresh
        assert index.computed == 0, "a warm look computes nothing again"


class OverviewThroughIndex(StoreSteps):
    def look_between(self) -> None:
        with StoreIndex(self.root, self.work / "cache-overview", key=KEY, scope=SCOPE) as index:
            read_overview(Project(self.root), index)

    @invariant()
    def same_as_a_fresh_look(self) -> None:
        if not hasattr(self, "root"):
            return
        fresh = read_overview(Project(self.root))
        with StoreIndex(self.root, self.work / "cache-overview", key=KEY, scope=SCOPE) as index:
            assert read_overview(Project(self.root), index) == fresh
        self.kept.look = self.changed_since_last_look()
        assert read_overview(Project(self.root), self.kept) == fresh
        self.kept.flush()
        self.step_started = time.time()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_overview_through_the_index_is_a_fresh_look(
    demo_root: Path, tmp_path: Path, watchman_on: PrivateWatchman
) -> None:
    test_inbox_index.DEMO[:] = [demo_root]
    test_inbox_index.WORK[:] = [str(tmp_path)]
    machine: Any = OverviewThroughIndex
    machine.TestCase.settings = settings(
        max_examples=4,
        stateful_step_count=12,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    machine.TestCase().runTest()
