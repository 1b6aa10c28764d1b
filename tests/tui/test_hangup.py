"""The terminal coming and going: the driver neither waits on a terminal that is gone nor resumes on it, and a
terminal given back after a suspension is painted whole."""

from __future__ import annotations

import io
import os
import pty
import threading
from pathlib import Path

from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver
from textual.geometry import Region

from okstra_tui.hangup import DroppingFile, driver_class, hung_up

from .conftest import make_app


class GoneTerminal(io.StringIO):
    """A terminal that hung up: every write and flush fails as a pty's slave does once its master is closed."""

    def write(self, text: str) -> int:
        raise OSError(5, "Input/output error")

    def flush(self) -> None:
        raise OSError(5, "Input/output error")


def test_a_terminal_is_hung_up_once_its_other_end_is_closed() -> None:
    master, slave = pty.openpty()
    try:
        assert not hung_up(slave)
        os.close(master)
        assert hung_up(slave)
    finally:
        os.close(slave)


def test_writes_to_a_terminal_that_is_gone_are_dropped() -> None:
    kept = io.StringIO()
    out = DroppingFile(kept)
    assert out.write("frame") == len("frame")
    out.flush()
    assert kept.getvalue() == "frame"
    gone = DroppingFile(GoneTerminal())
    assert gone.write("frame") == len("frame")
    assert gone.failed
    gone.flush()
    assert gone.write("more") == len("more")


class Refusing(io.StringIO):
    """A terminal still there that refuses one write (another program left it non-blocking, and it was full)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd, self.refused = fd, False

    def write(self, text: str) -> int:
        if not self.refused:
            self.refused = True
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return super().write(text)

    def fileno(self) -> int:
        return self.fd


def test_a_write_refused_by_a_terminal_still_there_loses_that_write_only() -> None:
    master, slave = pty.openpty()
    try:
        refusing = Refusing(slave)
        out = DroppingFile(refusing)
        out.write("lost")
        out.write("frame")
        assert not out.failed and refusing.getvalue() == "frame"
    finally:
        os.close(master)
        os.close(slave)


def test_the_writer_thread_takes_every_write_after_the_terminal_went() -> None:
    """The app writes its last frames and leaves application mode after the terminal went: more writes than the
    writer's queue holds, then a stop that waits for the writer."""
    writer = WriterThread(DroppingFile(GoneTerminal()))  # type: ignore[arg-type]
    writer.start()

    def leave() -> None:
        for n in range(MAX_QUEUED_WRITES * 3):
            writer.write(f"frame {n}")
        writer.stop()

    leaving = threading.Thread(target=leave, daemon=True)
    leaving.start()
    leaving.join(30)
    assert not leaving.is_alive(), "the app's writes waited on a writer that had stopped"


def test_the_guarded_driver_stands_in_for_textual_s_terminal_driver_only() -> None:
    """Headless (tests, screenshots) and other drivers are left as Textual chose them; its terminal driver gets
    the guards (the resume and the dropped writes are tested on their own above and below)."""
    assert driver_class(HeadlessDriver) is HeadlessDriver
    terminal = driver_class(LinuxDriver)
    assert issubclass(terminal, LinuxDriver) and terminal is not LinuxDriver
    assert terminal._sigcont_application is not LinuxDriver._sigcont_application
    assert terminal.__init__ is not LinuxDriver.__init__


def test_the_driver_resumes_on_sigcont_only_on_a_terminal_still_there() -> None:
    """The kernel sends SIGCONT with a hang-up: resuming then would start a second writer on a terminal that
    is gone, from a signal handler."""
    terminal = driver_class(LinuxDriver)
    master, slave = pty.openpty()
    resumed: list[bool] = []
    driver = object.__new__(terminal)
    driver.fileno = slave
    driver._auto_restart = True
    driver.resume_application_mode = lambda: resumed.append(True)  # type: ignore[method-assign]
    try:
        driver._sigcont_application()
        assert resumed == [True], "a terminal still there is resumed (after Ctrl+Z and fg)"
        os.close(master)
        driver._sigcont_application()
        assert resumed == [True], "a terminal that is gone is not"
    finally:
        os.close(slave)


async def test_all_of_the_screen_is_painted_again_after_a_suspension(demo_root: Path) -> None:
    """Back from Ctrl+Z and ``fg`` the terminal shows nothing of the app: a repaint of only what changed would
    leave it blank."""
    app = make_app(demo_root)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        asked: list[tuple[object, ...]] = []
        refresh = screen.refresh

        def spied(*regions: Region, **options: bool) -> object:
            asked.append(regions)
            return refresh(*regions, **options)

        screen.refresh = spied  # type: ignore[method-assign]
        app.app_resume_signal.publish(app)
        await pilot.pause()
        assert (screen.region,) in asked
