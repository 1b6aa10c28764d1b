"""The verbs that answer through the store index print what they print without it, whatever happens to the store.

The steps of the inbox's state machine (:class:`~tests.workflows.test_inbox_index.StoreSteps`: decisions
made by the verbs, writes as an agent makes them, a file written twice within one clock tick) change the
store; after each, every verb below (``stats``, ``check``, ``search`` for words the steps write) is run as
a person runs it (the ``okstra`` entry, in this process) through its cache with the stat pass, through it
with watchman (each in a cache folder of its own), and with ``--no-cache``: the three print the same bytes.
The statistics are also counted through an index kept open across steps and told what changed (a
long-lived process), with a filter.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import PrivateWatchman
from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant

from okstra_core import cli
from okstra_core.stats import Filters, compute
from okstra_core.store import Project
from okstra_core.store_index import StoreIndex

from . import test_inbox_index
from .test_inbox_index import StoreSteps

#: The verbs compared, each as its arguments after the project.
VERBS: tuple[tuple[str, ...], ...] = (
    ("stats", "--json"),
    ("check", "--format", "json"),
    # Words the steps write: a second run's report title, a confirmed design input (which the demo holds too).
    ("search", "second", "--json", "--jobs", "1"),
    ("search", "vault", "--json", "--jobs", "1"),
)


def _printed(*argv: str | Path) -> str:
    """What the ``okstra`` verb *argv* prints on standard output (run in this process)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main([str(a) for a in argv])
    return out.getvalue()


def _stats(root: Path, index: StoreIndex | None, filters: Filters) -> str:
    return json.dumps(compute(Project(root), filters, index).to_json(), sort_keys=True)


class VerbsThroughIndex(StoreSteps):
    def look_between(self) -> None:
        for verb, *rest in VERBS:
            _printed(verb, self.root, *rest, "--no-watchman", "--cache-dir", self.work / "cache-cli")

    @invariant()
    def same_as_a_fresh_look(self) -> None:
        if not hasattr(self, "root"):
            return
        for verb, *rest in VERBS:
            fresh = _printed(verb, self.root, *rest, "--no-cache")
            stat_pass = _printed(verb, self.root, *rest, "--no-watchman", "--cache-dir", self.work / "cache-cli")
            assert stat_pass == fresh, verb
            asked = _printed(verb, self.root, *rest, "--cache-dir", self.work / "cache-cli-watchman")
            assert asked == fresh, verb
        self.kept.look = self.changed_since_last_look()
        narrowed = Filters(task_type="analysis")
        assert _stats(self.root, self.kept, narrowed) == _stats(self.root, None, narrowed)
        self.kept.flush()
        self.step_started = time.time()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_verbs_through_the_index_print_what_a_fresh_look_prints(
    demo_root: Path, tmp_path: Path, watchman_on: PrivateWatchman
) -> None:
    test_inbox_index.DEMO[:] = [demo_root]
    test_inbox_index.WORK[:] = [str(tmp_path)]
    machine: Any = VerbsThroughIndex
    machine.TestCase.settings = settings(
        max_examples=6,
        stateful_step_count=15,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    machine.TestCase().runTest()
