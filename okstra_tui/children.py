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
from pathlib import Path
from typing import Any


def child_command(job: str, root: Path, *options: str) -> list[str]:
    """The command line of the child that runs *job* (a name in :data:`okstra_tui.child.JOBS`, or with *options*
    in :data:`okstra_tui.child.JOBS_WITH_OPTIONS`) on *root*."""
    return [sys.executable, "-m", "okstra_tui.child", job, str(root), str(os.getpid()), *options]


def run_child(job: str, root: Path, ok: tuple[int, ...] = (0,)) -> str | None:
    """The standard output of the child running *job* on *root*, or ``None`` when it could not run or ended with
    an exit status not in *ok*."""
    try:
        done = subprocess.run(
            child_command(job, root), capture_output=True, stdin=subprocess.DEVNULL, text=True, check=False
        )
    except OSError:
        return None
    return done.stdout if done.returncode in ok else None


def end_child(child: subprocess.Popen[Any] | None) -> None:
    """Kill *child* if it still runs, and reap it."""
    if child is not None and child.poll() is None:
        child.kill()
        child.wait()
