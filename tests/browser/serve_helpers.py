"""Starting ``okstra-tui PROJECT --serve`` for a test: loopback only, bounded waits, always stopped."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

WAIT = 60.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    """A running server: its address, the token it printed (None without one), its process and its log."""

    url: str
    port: int
    token: str | None
    proc: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def children(self) -> list[int]:
        """The processes the server started (one workbench per session) that still exist."""
        return children_of(self.proc.pid)

    @property
    def cookie_name(self) -> str:
        return f"okstra-serve-{self.port}"


def children_of(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: the fields after it are split.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def session_workbench(server: Served) -> int | None:
    """The pid of the server's one session once it runs the workbench itself, else None.

    A session's process is first a fork of the server (the server's command line, ``--serve`` in it), then
    the shell that bounds it (``sh -c "ulimit ...; exec ... -m okstra_tui ..."``: okstra_tui inside its one
    argument, its limits not yet set), and only after ``exec`` the workbench, with the same pid.
    """
    kids = server.children()
    if len(kids) != 1:
        return None
    try:
        argv = Path(f"/proc/{kids[0]}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    return kids[0] if argv[1:3] == [b"-m", b"okstra_tui"] and b"--serve" not in argv else None


def wait_until(condition: object, what: str, timeout: float = WAIT) -> None:
    """Poll *condition* (a callable) until true, at most *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what} within {timeout:g} s"
        time.sleep(0.2)


@contextlib.contextmanager
def serving(root: Path, tmp_path: Path, *flags: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """Serve *root* on a free loopback port with *flags*; yields once it listens and has printed its lines."""
    port = free_port()
    full_env = {
        **os.environ,
        "OKSTRA_HOME": str(root / ".okstra-home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        **(env or {}),
    }
    if "OKSTRA_READ_ONLY" not in (env or {}):
        full_env.pop("OKSTRA_READ_ONLY", None)
    log_path = tmp_path / f"server-{port}.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "okstra_tui", str(root), "--serve", "--port", str(port), *flags],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=full_env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + WAIT
        while "Ctrl+C stops the server" not in log_path.read_text(errors="replace"):
            assert proc.poll() is None, log_path.read_text(errors="replace")
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT):
            pass
        printed = re.search(r"\?token=([A-Za-z0-9_-]+)", log_path.read_text(errors="replace"))
        yield Served(f"http://127.0.0.1:{port}", port, printed.group(1) if printed else None, proc, log_path)
    finally:
        stop(proc)
        log.close()


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server alone (it ends its sessions); SIGKILL to the whole group only if it hangs."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=15)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # nothing of the group outlives the test
