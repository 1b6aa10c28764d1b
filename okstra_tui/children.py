"""Child processes for the store's long readings, so that the workbench's interpreter and memory hold none of it.

A reading of every task (the inbox's scan, the notices' pulse, a check) takes
seconds and tens of megabytes on a large store; in a thread of the workbench it
would hold the interpreter lock against the keys the person presses and leave
its peak in the workbench's memory. A child (:mod:`okstra_tui.child`) runs it
instead and ends as soon as the workbench that started it is gone, however
that ended.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

#: The children :func:`run_child` waits for, so that a workbench that leaves ends them (:func:`end_children`).
_running: set[subprocess.Popen[str]] = set()
_running_lock = threading.Lock()


def child_command(job: str, root: Path, *options: str) -> list[str]:
    """The command line of the child that runs *job* (a name in :data:`okstra_tui.child.JOBS`, or with *options*
    in :data:`okstra_tui.child.JOBS_WITH_OPTIONS`) on *root*."""
    return [sys.executable, "-m", "okstra_tui.child", job, str(root), str(os.getpid()), *options]


def run_child(job: str, root: Path, ok: tuple[int, ...] = (0,)) -> str | None:
    """The standard output of the child running *job* on *root*, or ``None`` when it could not run or ended with
    an exit status not in *ok*."""
    try:
        child = subprocess.Popen(
            child_command(job, root),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    except OSError:
        return None
    with _running_lock:
        _running.add(child)
    try:
        out, _ = child.communicate()
    finally:
        with _running_lock:
            _running.discard(child)
    return out if child.returncode in ok else None


def end_children() -> None:
    """End every child :func:`run_child` still waits for: the workbench is leaving, and nothing will read them."""
    with _running_lock:
        children = list(_running)
    for child in children:
        end_child(child)


def end_child(child: subprocess.Popen[Any] | None) -> None:
    """Kill *child* if it still runs, and reap it."""
    if child is not None and child.poll() is None:
        child.kill()
        child.wait()
