"""Worker processes end with the command that forked them, however it ends, and release its standard output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

#: Generous: how long a test waits for something that happens at once when it works, before failing.
DEADLINE = 20.0

# The command, with its per-task work slowed down so that it is killed while its workers run; each worker
# says its pid on stderr first. Forked workers inherit the slowed function. It ends on SIGTERM and SIGHUP as a
# command started from a shell does, also when the suite runs where they are ignored (under nohup, or a runner
# that ignores SIGHUP): an ignored disposition is inherited through exec, and such a command rightly lives on.
CHECK = """
import os, signal, sys, time
for sig in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(sig, signal.SIG_DFL)
from okstra_core.check import engine
engine.PARALLEL_MIN_TASKS = 1
engine.CHUNK_TASKS = 1
engine.cores = lambda: 2
def _task_chunk(*args):
    os.write(2, f"worker {os.getpid()}\\n".encode())  # one write: lines of two workers never mix
    time.sleep(120)
engine._task_chunk = _task_chunk
from okstra_core import workers
if sys.argv[3] == "watch":  # as where prctl is missing: the workers watch their parent instead
    workers._parent_death_signal = lambda: False
from okstra_core.commands.check import main_check
main_check([sys.argv[1], "--home", sys.argv[2], "--no-cache", "-j", "2", "--format", "json"])
"""

SEARCH = """
import os, sys, time
from okstra_core.search import index
def _walk_range(start, stop):
    os.write(2, f"worker {os.getpid()}\\n".encode())  # one write: lines of two workers never mix
    time.sleep(120)
index._walk_range = _walk_range
from okstra_core.cli import main
main(["search", sys.argv[1], "retry", "-q", "--jobs", "2", "--cache-dir", sys.argv[2]])
"""


def _gone(pid: int) -> bool:
    """Whether *pid* has ended (a zombie left for its new parent to reap counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _kill_while_working(script: str, args: list[str], sig: signal.Signals) -> tuple[list[int], bool]:
    """Run *script*, wait for two workers to start, send *sig* to the command alone; the workers' pids and
    whether its standard output closed (every holder gone) within the deadline."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    assert proc.stdout is not None and proc.stderr is not None
    workers: list[int] = []
    try:
        while len(workers) < 2:
            line = proc.stderr.readline().decode()
            assert line, "the command ended before its workers started"
            if line.startswith("worker "):
                workers.append(int(line.split()[1]))
        proc.send_signal(sig)
        proc.wait(timeout=DEADLINE)
        closed = threading.Event()
        reader = threading.Thread(target=lambda: (proc.stdout.read(), closed.set()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        closed.wait(DEADLINE)
        return workers, closed.is_set()
    finally:
        for pid in workers:  # leave nothing behind, whatever the outcome
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _all_gone(pids: list[int]) -> bool:
    end = time.monotonic() + DEADLINE
    while not all(_gone(pid) for pid in pids):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    ("sig", "bound"),
    [(signal.SIGKILL, "prctl"), (signal.SIGTERM, "prctl"), (signal.SIGHUP, "prctl"), (signal.SIGKILL, "watch")],
    ids=["SIGKILL", "SIGTERM", "SIGHUP", "SIGKILL-without-prctl"],
)
def test_killed_check_leaves_no_worker_and_closes_stdout(fresh_demo: Path, sig: signal.Signals, bound: str) -> None:
    workers, closed = _kill_while_working(CHECK, [str(fresh_demo), str(fresh_demo / ".okstra-home"), bound], sig)
    assert closed, "a worker still holds the command's standard output"
    assert _all_gone(workers), [pid for pid in workers if not _gone(pid)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killed_search_leaves_no_worker_and_closes_stdout(fresh_demo: Path, tmp_path: Path) -> None:
    workers, closed = _kill_while_working(SEARCH, [str(fresh_demo), str(tmp_path / "cache")], signal.SIGKILL)
    assert closed, "a worker still holds the command's standard output"
    assert _all_gone(workers), [pid for pid in workers if not _gone(pid)]
