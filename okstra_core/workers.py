"""Worker processes that end with the process that started them.

A check of many tasks and a search's look at a large store fork workers
(:func:`worker_pool`). Killed (SIGKILL, or SIGTERM and SIGHUP, which end it
without running its clean-up), the parent cannot stop them, and a worker
holding the parent's standard output keeps the pipe open: ``timeout 5 okstra
check . --format json | jq`` would wait for ever. So every worker, as it
starts (:func:`end_with_parent`):

* asks Linux to kill it when its parent ends (``prctl(PR_SET_PDEATHSIG,
  SIGKILL)``, called through :mod:`ctypes`);
* then checks that its parent is still the process that started the pool,
  since the parent may have ended before the request was made;
* where ``prctl`` is not available, watches instead: a thread looks every
  :data:`WATCH_SECONDS` whether its parent changed, and ends the worker when
  it has.

Linux sends the signal when the *thread* that forked the worker ends; the pool
is made and first used by the thread that runs the check or the search.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Final

#: How often a worker without ``prctl`` looks whether its parent is gone.
WATCH_SECONDS: Final = 0.5
_PR_SET_PDEATHSIG: Final = 1


def _parent_death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent ends; whether it agreed."""
    from .libc import libc

    loaded = libc()
    if loaded is None:
        return False
    try:
        return int(loaded.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except AttributeError:
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)


def end_with_parent(parent: int) -> None:
    """Bind this worker to *parent* (the pid that started it): it ends when *parent* does (see the module doc)."""
    bound = _parent_death_signal()
    if os.getppid() != parent:  # the parent ended before the kernel was asked
        os._exit(1)
    if not bound:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="okstra-parent-watch").start()


def worker_pool(jobs: int) -> ProcessPoolExecutor:
    """A pool of *jobs* worker processes, each bound to this process by :func:`end_with_parent`.

    Forked where the platform can (the workers inherit what is loaded), else started as the platform does
    by default (``spawn``: their parent is this process too).
    """
    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=end_with_parent, initargs=(os.getpid(),))
