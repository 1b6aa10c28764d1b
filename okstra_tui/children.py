"""Child processes for the store's long readings, so that the workbench's interpreter and memory hold none of it.

A reading of every task (the inbox's scan, the notices' pulse, a check) takes
seconds and tens of megabytes on a large store; in a thread of the workbench it
would hold the interpreter lock against the keys the person presses and leave
its peak in the workbench's memory. A child runs it instead and ends as soon
as the workbench that started it is gone, however that ended.
"""

from __future__ import annotations

import os
import subprocess
import sys


def library_child(code: str) -> str:
    """Python code for ``python -c`` that runs *code* at a lower priority (``nice`` 10: the workbench's keys
    come first) and ends as soon as the process named by its last argument (``sys.argv[-1]``, the parent's
    pid) is gone: a long reading of a large store outlives a killed parent otherwise."""
    return (
        "import os, sys, threading, time\n"
        "os.nice(10)\n"  # background work: the person's keys in the workbench come first
        "parent = int(sys.argv[-1])\n"
        "def _orphaned():\n"
        "    while os.getppid() == parent:\n"
        "        time.sleep(0.5)\n"
        "    os._exit(0)\n"
        "threading.Thread(target=_orphaned, daemon=True).start()\n" + code
    )


def run_child(code: str, args: list[str], ok: tuple[int, ...] = (0,)) -> str | None:
    """The standard output of *code* run with *args* in a child bound to this process (:func:`library_child`),
    or ``None`` when it could not run or ended with an exit status not in *ok*."""
    command = [sys.executable, "-c", library_child(code), *args, str(os.getpid())]
    try:
        done = subprocess.run(command, capture_output=True, stdin=subprocess.DEVNULL, text=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode in ok else None
