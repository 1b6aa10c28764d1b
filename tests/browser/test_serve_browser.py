"""``okstra-tui PROJECT --serve`` in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

The server runs on 127.0.0.1 only, every wait is bounded, and the server is
always stopped. The page draws on a canvas, so what it shows is read from the
terminal output the page receives over its websocket (escape sequences
removed); the key press goes through the page's own keyboard handling.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_report_browser import browser  # noqa: F401 - the shared Chromium fixture (this folder is on sys.path)

from okstra_core.store import Project
from okstra_tui.serve import allowed_hosts, command_for, exposure_warning, is_loopback

WAIT = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(demo_root: Path, tmp_path: Path) -> Iterator[str]:
    """The demo's workbench served on 127.0.0.1; yields its URL and always stops the server."""
    port = _free_port()
    env = {**os.environ, "OKSTRA_HOME": str(demo_root / ".okstra-home"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "okstra_tui", str(demo_root), "--serve", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + WAIT
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text(errors="replace")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start listening"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        # The server and the workbench processes it started for the browser.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
        log.close()


def _screen_text(frames: list[bytes]) -> str:
    """What the terminal was sent, without escape sequences."""
    raw = b"".join(frames).decode("utf-8", "replace")
    return re.sub(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])", "", raw)


def _wait_for(frames: list[bytes], page: Any, pattern: str, start: int = 0) -> str:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        text = _screen_text(frames[start:])
        if re.search(pattern, text):
            return text
        page.wait_for_timeout(200)
    raise AssertionError(f"{pattern!r} never shown; last output: {_screen_text(frames[start:])[-2000:]!r}")


def _shots_dir(tmp_path: Path) -> Path:
    """Where the browser screenshots go: the README's folder only when asked, so a test run leaves the tree alone."""
    wanted = os.environ.get("OKSTRA_WRITE_SCREENSHOTS")
    return Path(__file__).resolve().parents[2] / "screenshots" if wanted else tmp_path


def test_workbench_in_the_browser(browser: Any, served: str, demo_root: Path, tmp_path: Path) -> None:  # noqa: F811
    project = Project.open(demo_root)
    assert isinstance(project, Project)
    task_ids = sorted(ref.root.name for ref in project.task_refs)
    frames: list[bytes] = []

    def on_socket(ws: Any) -> None:
        ws.on("framereceived", lambda payload: frames.append(payload if isinstance(payload, bytes) else b""))

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        # The page asks Google for a font; the test machine is offline, and nothing waits on it.
        page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())
        page.on("websocket", on_socket)
        page.goto(served + "/", wait_until="domcontentloaded", timeout=WAIT * 1000)
        page.wait_for_selector(".textual-terminal canvas, .xterm-screen", timeout=WAIT * 1000)
        catalog = _wait_for(frames, page, re.escape(task_ids[0]))
        shown = [t for t in task_ids if t in catalog]
        assert len(shown) >= len(task_ids) - 1, f"the catalog shows the demo's tasks: {shown} of {task_ids}"
        page.screenshot(path=str(_shots_dir(tmp_path) / "serve-catalog.png"))
        before = len(frames)
        page.locator(".textual-terminal").click()
        page.keyboard.press("Enter")
        # The task view: its breadcrumb names the task's group/task folder, its panels are the task's.
        opened = _wait_for(frames, page, r"Catalog\s*›\s*[a-z0-9-]+/[a-z0-9-]+", before)
        opened = _wait_for(frames, page, r"Timeline of runs", before)
        crumb = re.search(r"Catalog\s*›\s*([a-z0-9-]+)/([a-z0-9-]+)", opened)
        assert crumb is not None and crumb.group(2) in task_ids, "the task opened is one of the demo's"
        page.wait_for_timeout(500)
        page.screenshot(path=str(_shots_dir(tmp_path) / "serve-task.png"))
    finally:
        page.close()


def test_other_hosts_and_origins_are_refused(served: str) -> None:
    port = served.rsplit(":", 1)[1]
    ok = urllib.request.urlopen(urllib.request.Request(served + "/"), timeout=WAIT)
    assert ok.status == 200 and b"textual" in ok.read().lower()
    rebinding = urllib.request.Request(served + "/", headers={"Host": f"attacker.example:{port}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(rebinding, timeout=WAIT)
    assert refused.value.code == 403
    cross = urllib.request.Request(
        served + "/ws",
        headers={"Origin": "http://attacker.example", "Connection": "Upgrade", "Upgrade": "websocket"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused_ws:
        urllib.request.urlopen(cross, timeout=WAIT)
    assert refused_ws.value.code == 403


def test_exposure_rules() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1") and is_loopback("127.0.0.2")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.org")
    assert exposure_warning("127.0.0.1", 8000) is None
    warning = exposure_warning("0.0.0.0", 8000)
    assert warning is not None and "0.0.0.0:8000" in warning and "writes" in warning
    assert allowed_hosts("0.0.0.0", 8000) is None
    hosts = allowed_hosts("127.0.0.1", 8123)
    assert hosts is not None and "localhost:8123" in hosts and "127.0.0.1:8123" in hosts and "evil:8123" not in hosts
    assert command_for(Path("/tmp/a b; rm -rf x")).endswith("'/tmp/a b; rm -rf x'")


def test_serve_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from okstra_tui.__main__ import main

    with pytest.raises(SystemExit):
        main([str(tmp_path), "--port", "8000"])
    assert "--serve" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--serve", "--port", "0"])
    assert "not a port" in capsys.readouterr().err


def test_port_taken_is_one_line(demo_root: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "okstra_tui", str(demo_root), "--serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in done.stderr and "Traceback" not in done.stderr
