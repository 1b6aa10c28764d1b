"""``okstra-tui --demo --discard-demo`` removes its demo when the terminal closes (SIGHUP) or it is stopped
(SIGTERM), as when it quits."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest


def _drain(fd: int, seconds: float) -> bytes:
    out = b""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
def test_demo_folder_is_removed_on_signal(tmp_path: Path, sig: int) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    pid, fd = pty.fork()
    if pid == 0:  # the child runs the workbench on the pty, as a terminal would
        os.execve(sys.executable, [sys.executable, "-m", "okstra_tui", "--demo", "--discard-demo"], env)
    try:
        deadline = time.monotonic() + 120
        shown = b""
        # Wait until the app has drawn the catalog of the generated demo.
        while b"catalog" not in shown.lower() and time.monotonic() < deadline:
            shown += _drain(fd, 1.0)
        assert list(tmp_path.glob("okstra-demo-*")), "the demo was generated under TMPDIR"
        os.kill(pid, sig)
        # Keep reading what the app writes while it cleans up (a full terminal buffer would block it) until it
        # has exited; the bound only keeps a hung app from hanging the test run.
        deadline = time.monotonic() + 120
        done, status = 0, 0
        while not done and time.monotonic() < deadline:
            _drain(fd, 0.5)
            done, status = os.waitpid(pid, os.WNOHANG)
        assert done, "the workbench exited after the signal"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.close(fd)
    assert os.WIFEXITED(status) or os.WIFSIGNALED(status)
    assert list(tmp_path.glob("okstra-demo-*")) == [], "the temporary demo was removed"


def test_the_workbench_leaves_when_its_terminal_goes_without_a_signal(fresh_demo: Path) -> None:
    """A terminal closed under a wrapper that keeps SIGHUP to itself (``make demo``): the workbench gets no
    signal, and must still leave rather than read end-of-file in a loop for ever."""
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    pid, fd = pty.fork()
    if pid == 0:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # ignored across exec, as if a wrapper had it
        os.execve(sys.executable, [sys.executable, "-m", "okstra_tui", str(fresh_demo)], env)
    closed = False
    try:
        deadline = time.monotonic() + 120
        shown = b""
        while b"catalog" not in shown.lower() and time.monotonic() < deadline:
            shown += _drain(fd, 1.0)
        assert b"catalog" in shown.lower(), "the workbench drew its catalog"
        os.close(fd)  # the terminal goes away
        closed = True
        deadline = time.monotonic() + 60
        done, status = 0, 0
        while not done and time.monotonic() < deadline:
            time.sleep(0.2)
            done, status = os.waitpid(pid, os.WNOHANG)
        assert done, "the workbench left after its terminal went away"
        assert os.WIFEXITED(status), status
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        if not closed:
            os.close(fd)
