"""Leave when the terminal goes away, even when no SIGHUP says so.

A terminal closed under ``make demo`` (or any wrapper that keeps SIGHUP to
itself) leaves the workbench without a terminal and without a signal: its
input thread then reads end-of-file in a loop, a whole core for as long as
nobody kills it. One thread here waits, without a timeout and without
reading, for the terminal to hang up (``poll`` reports ``POLLHUP`` whatever
events are asked for), then asks the app to exit.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable

#: What ``poll`` says of a terminal that is gone.
_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


def watch_hangup(fd: int, leave: Callable[[], None]) -> threading.Thread | None:
    """Call *leave* (from a thread of its own) once the terminal on *fd* hangs up; None, and nothing watched,
    when *fd* is not a terminal."""
    try:
        if not os.isatty(fd):
            return None
    except (OSError, ValueError):
        return None
    thread = threading.Thread(target=_wait, args=(fd, leave), name="okstra-hangup", daemon=True)
    thread.start()
    return thread


def _wait(fd: int, leave: Callable[[], None]) -> None:
    poller = select.poll()
    poller.register(fd, 0)  # no event asked for: only the hang-up, an error or a closed descriptor wake it
    while True:
        try:
            events = poller.poll()
        except InterruptedError:
            continue
        except OSError:
            break
        if any(mask & _GONE for _, mask in events):
            break
    leave()
