"""SIGKILL a writer at random moments: no partial file is ever visible, every artifact parses,
and a retry completes to exactly the outcome of an uninterrupted run."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .scenario import error_findings, prepare_pending_work, unparseable, visible_files, writer

KILLS = 200
#: The kills are split into parts run as separate tests (in parallel under xdist), each with its own seed.
PARTS = 4
#: Kills in one cycle before its writer is let run to the end. The kill delays are drawn from the length of one
#: uninterrupted run; on a loaded machine every retry can take longer than that, and the cycle would never end.
KILLS_PER_CYCLE = 10
#: How long a writer let run to the end may take before the test fails (a bound against a hang, not a timing).
FINISH_SECONDS = 600.0
_ctx = multiprocessing.get_context("fork")


@pytest.mark.timeout(FINISH_SECONDS + 120)
@pytest.mark.parametrize("part", range(PARTS))
def test_sigkill_loop(slim_factory: Callable[[str], Path], part: int) -> None:
    reference = slim_factory("reference")
    baseline = error_findings(reference)
    prepare_pending_work(reference)
    started = time.perf_counter()
    writer(reference)
    full = time.perf_counter() - started
    expected = visible_files(reference)
    assert unparseable(reference) == []

    rng = random.Random(20261201 + part)
    kills = cycles = 0
    while kills < KILLS // PARTS:
        cycles += 1
        root = slim_factory(f"cycle-{cycles}")
        prepare_pending_work(root)
        for attempt in range(KILLS_PER_CYCLE + 1):
            last = attempt == KILLS_PER_CYCLE
            child = _ctx.Process(target=writer, args=(root,))
            child.start()
            child.join(FINISH_SECONDS if last else rng.uniform(0.0, full * 1.2))
            if child.exitcode is not None:
                assert child.exitcode == 0, f"writer failed in cycle {cycles}"
                break
            os.kill(child.pid, signal.SIGKILL)
            child.join()
            assert not last, f"writer still running after {FINISH_SECONDS:.0f} s in cycle {cycles}"
            kills += 1
            assert unparseable(root) == [], f"after kill {kills}"
        # the retry completed: same visible bytes as the uninterrupted run, and no new checker error
        assert visible_files(root) == expected, f"cycle {cycles} ended differently"
        assert error_findings(root) - baseline == set()
    assert kills >= KILLS // PARTS
