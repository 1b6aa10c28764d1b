"""What one authenticated browser can make a ``--serve`` session cost: a bounded terminal, bounded memory, and a
process that ends with its tab even when it stopped reading its input."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
from serve_helpers import WAIT, children_of, free_port, serving, session_workbench, stop, wait_until

from okstra_tui.serve import MAX_COLUMNS, MAX_ROWS, SESSION_MEMORY_MIB, cookie_value, terminal_size

HUGE = 100_000
#: What docs/serve.md promises: a session's process is gone within this many seconds of its end.
PROMISED = 25

# A server like --serve's whose sessions run *command* instead of the workbench (no token: loopback only).
SERVER = """
import sys
from pathlib import Path
from okstra_tui.serve import ServeOptions, bounded
from okstra_tui.serve_server import WorkbenchServer
WorkbenchServer(bounded(sys.argv[2]), Path(sys.argv[3]), ServeOptions(port=int(sys.argv[1]), token=None)).serve()
"""


@contextlib.contextmanager
def _serving_command(command: str, tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(port), command, str(tmp_path)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_until(lambda: "Ctrl+C stops the server" in log.read_text(errors="replace"), "the server listens")
            yield f"127.0.0.1:{port}", proc
        finally:
            stop(proc)


def _limits(pid: int) -> str:
    return next(line for line in Path(f"/proc/{pid}/limits").read_text().splitlines() if "data size" in line)


def test_terminal_sizes_are_bounded() -> None:
    assert terminal_size(HUGE, HUGE) == (MAX_COLUMNS, MAX_ROWS) == (500, 200)
    assert terminal_size("120", "40") == (120, 40)
    assert terminal_size("-5", "0") == (1, 1)
    assert terminal_size("9" * 5000, None) == (80, 24)  # not a number Python reads: the default
    assert terminal_size(" 3", "x") == (3, 24)


def test_a_huge_size_opens_a_bounded_session_with_bounded_memory(demo_root: Path, tmp_path: Path) -> None:
    with serving(demo_root, tmp_path, "--read-only") as server:
        assert server.token is not None
        url = server.url.replace("http:", "ws:") + f"/ws?width={HUGE}&height={HUGE}"
        headers = {"Cookie": f"{server.cookie_name}={cookie_value(server.token)}", "Origin": server.url}

        async def one() -> None:
            async with (
                aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client,
                client.ws_connect(url, headers=headers),
            ):
                wait_until(lambda: session_workbench(server) is not None, "the session's workbench")
                child = server.children()[0]
                environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
                assert b"COLUMNS=500" in environ and b"ROWS=200" in environ
                assert _limits(child).split()[3] == str(SESSION_MEMORY_MIB * 1024 * 1024), _limits(child)

        asyncio.run(one())
        wait_until(lambda: server.children() == [], "the session's process is reaped")


def test_a_huge_resize_reaches_the_process_bounded(tmp_path: Path) -> None:
    received = tmp_path / "stdin"
    record = f"import os; f = open({str(received)!r}, 'wb', buffering=0)\nwhile b := os.read(0, 65536): f.write(b)"
    with _serving_command(f"exec {shlex.quote(sys.executable)} -c {shlex.quote(record)}", tmp_path) as (host, proc):

        async def resize() -> None:
            async with (
                aiohttp.ClientSession() as client,
                client.ws_connect(f"ws://{host}/ws", headers={"Origin": f"http://{host}"}) as ws,
            ):
                wait_until(lambda: received.exists(), "the session's process")
                await ws.send_json(["resize", {"width": HUGE, "height": HUGE}])
                await ws.send_json(["stdin", "done"])
                await asyncio.to_thread(wait_until, lambda: b"done" in received.read_bytes(), "the input arrives")

        asyncio.run(resize())
        data = received.read_bytes()
        assert b'"width": 500, "height": 200' in data and str(HUGE).encode() not in data, data
        wait_until(lambda: children_of(proc.pid) == [], "the session's process is reaped")


def test_a_process_that_stops_reading_ends_with_its_tab(tmp_path: Path) -> None:
    """As a session busy past its memory: it reads nothing, and its input piles up until the tab closes."""
    with _serving_command("exec sleep 600", tmp_path) as (host, proc):

        async def type_then_close() -> None:
            async with aiohttp.ClientSession() as client:
                ws = await client.ws_connect(f"ws://{host}/ws", headers={"Origin": f"http://{host}"})
                await asyncio.to_thread(wait_until, lambda: len(children_of(proc.pid)) == 1, "the session")
                for _ in range(100):  # 400 kB: more than the process's input pipe holds
                    await ws.send_json(["stdin", "x" * 4000])
                await ws.close()

        asyncio.run(type_then_close())
        wait_until(lambda: children_of(proc.pid) == [], "the closed tab's process is ended", timeout=PROMISED)
        assert proc.poll() is None, "the server keeps serving"
    assert WAIT >= PROMISED


def test_a_quit_that_swallows_its_cancellation_does_not_hold_the_reaping() -> None:
    """textual-serve's reader swallows a cancellation and waits on: the process is still ended and reaped."""
    from okstra_tui.serve_server import end_process

    class Swallowing:
        _process: asyncio.subprocess.Process | None = None

        async def stop(self) -> None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(3600)  # never answers the quit, and goes on when cancelled

    async def scenario() -> tuple[bool, int | None]:
        session = Swallowing()
        session._process = process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import time; time.sleep(600)"
        )
        ending = asyncio.ensure_future(end_process(session))  # type: ignore[arg-type]
        await asyncio.wait({ending}, timeout=PROMISED)
        done = ending.done()
        if process.returncode is None:  # leave nothing behind, whatever the outcome
            process.kill()
            await process.wait()
            ending.cancel()
        return done, process.returncode

    done, returncode = asyncio.run(scenario())
    assert done, f"the session's process was not ended within {PROMISED} s"
    assert returncode == -15
