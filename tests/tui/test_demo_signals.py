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
