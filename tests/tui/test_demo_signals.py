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

from okstra_tui.__main__ import _Leave

from .conftest import make_app


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
    assert os.WIFEXITED(status), status
    assert os.WEXITSTATUS(status) == 128 + sig, "the status says which signal stopped it"
    assert list(tmp_path.glob("okstra-demo-*")) == [], "the temporary demo was removed"


async def test_a_signal_asks_the_running_workbench_to_leave(demo_root: Path) -> None:
    """The demo's handler raises nothing into the running app (a raise can land inside a lock or a queue's
    operation and leave it taken, so that the app never leaves): it asks the app to leave, as ``q`` does."""
    app = make_app(demo_root)
    leave = _Leave()
    earlier = signal.signal(signal.SIGTERM, leave)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            leave.app = app
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(100):
                await pilot.pause(0.05)
                if app.return_code is not None:
                    break
        assert app.return_code == 128 + signal.SIGTERM
        with pytest.raises(SystemExit) as left:
            leave(signal.SIGTERM, None)  # the app has left: the next signal unwinds where it lands
        assert left.value.code == 128 + signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, earlier)


def test_a_signal_before_the_workbench_runs_unwinds() -> None:
    """While the demo is written (no app yet), the signal unwinds to the demo's removal."""
    with pytest.raises(SystemExit) as left:
        _Leave()(signal.SIGHUP, None)
    assert left.value.code == 128 + signal.SIGHUP


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
