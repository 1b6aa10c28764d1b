"""Leave when the terminal goes away, even when no SIGHUP says so.

A terminal closed under ``make demo`` (or any wrapper that keeps SIGHUP to
itself) leaves the workbench without a terminal and without a signal: its
input thread then reads end-of-file in a loop, a whole core for as long as
nobody kills it. One thread here waits, without a timeout and without
reading, for the terminal to hang up (``poll`` reports ``POLLHUP`` whatever
events are asked for), then asks the app to exit.

Leaving must not then wait for the terminal. Textual's driver writes through a
thread fed by a queue of thirty writes: a write to a terminal that hung up
fails (``EIO``), which ended that thread, so the app's next thirty writes (its
last frames, the sequences that leave application mode) filled the queue and
the app waited on it for ever. And the kernel sends ``SIGCONT`` with the
hang-up, on which the driver resumed application mode: a second writer, on a
terminal that is gone, set up by a signal handler in the middle of whatever
the app was doing. :func:`driver_class` is the driver that does neither: its
writes to a terminal that is gone are dropped, and it resumes only on a
terminal that is still there.
"""

from __future__ import annotations

import os
import select
import sys
import threading
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import io

    from textual.driver import Driver

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


def hung_up(fd: int) -> bool:
    """Whether the terminal on *fd* is gone (hung up, in error or closed), without waiting."""
    poller = select.poll()
    try:
        poller.register(fd, 0)
        events = poller.poll(0)
    except (OSError, ValueError):
        return True
    return any(mask & _GONE for _, mask in events)


class DroppingFile:
    """The terminal's output file for the driver's writer thread: a write or flush that fails is dropped, and once
    one fails on a terminal that is gone every later one is, so that the thread goes on taking writes off its
    queue until the app has left (a write that fails on a terminal still there, one another program left
    non-blocking, loses that write only)."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.failed = False

    def write(self, text: str) -> int:
        if not self.failed:
            try:
                self._file.write(text)
            except (OSError, ValueError):
                self.failed = self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.failed:
            try:
                self._file.flush()
            except (OSError, ValueError):
                self.failed = self._gone()

    def _gone(self) -> bool:
        try:
            return hung_up(self._file.fileno())
        except (OSError, ValueError):
            return True

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return True


def driver_class(default: type[Driver]) -> type[Driver]:
    """The driver the workbench runs on a terminal: *default* (Textual's choice) when it is not Textual's own
    terminal driver (headless, in a browser, on Windows, or chosen in the environment), else that driver with
    its output dropped once the terminal is gone and no resuming on a terminal that is gone."""
    if sys.platform == "win32":
        return default
    from textual.drivers.linux_driver import LinuxDriver

    if default is not LinuxDriver:
        return default

    class TerminalDriver(LinuxDriver):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if self._file is not None:
                # The driver's writer thread calls write, flush and fileno only.
                self._file = cast("io.TextIOWrapper", DroppingFile(self._file))

        def _sigcont_application(self, *args: Any) -> None:
            if not hung_up(self.fileno):
                super()._sigcont_application(*args)

    return TerminalDriver


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
