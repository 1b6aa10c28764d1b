"""``okstra-tui PROJECT --serve`` in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

The server runs on 127.0.0.1 only, every wait is bounded, and the server is
always stopped. The page draws on a canvas, so what it shows is read from the
terminal output the page receives over its websocket (escape sequences
removed); the key press goes through the page's own keyboard handling.
The browser gets in the way a person does: the printed address with its
token, then the cookie. Served read-only, every wizard walks to its write
step from the palette and the store keeps every byte.
"""

from __future__ import annotations

import os
import re
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
from serve_helpers import WAIT, Served, serving, wait_until
from test_report_browser import browser  # noqa: F401 - the shared Chromium fixture (this folder is on sys.path)

from okstra_core.store import Project
from okstra_tui.serve import allowed_hosts, command_for, cookie_value, exposure_warning, is_loopback


@pytest.fixture
def served(demo_root: Path, tmp_path: Path) -> Iterator[Served]:
    """The demo's workbench served on 127.0.0.1 with a generated token; always stopped."""
    with serving(demo_root, tmp_path) as server:
        yield server


def _screen_text(frames: list[bytes]) -> str:
    """What the terminal was sent, without escape sequences."""
    raw = b"".join(frames).decode("utf-8", "replace")
    return re.sub(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])", "", raw)


def _wait_for(frames: list[bytes], page: Any, pattern: str, start: int = 0, what: str = "") -> str:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        text = _screen_text(frames[start:])
        if re.search(pattern, text):
            return text
        page.wait_for_timeout(200)
    raise AssertionError(f"{what}{pattern!r} never shown; last output: {_screen_text(frames[start:])[-2000:]!r}")


def _shots_dir(tmp_path: Path) -> Path:
    """Where the browser screenshots go: the README's folder only when asked, so a test run leaves the tree alone."""
    wanted = os.environ.get("OKSTRA_WRITE_SCREENSHOTS")
    return Path(__file__).resolve().parents[2] / "screenshots" if wanted else tmp_path


def _open_page(chromium: Any, frames: list[bytes]) -> Any:
    """A new page that records what its websockets receive and asks nothing of other hosts."""

    def on_socket(ws: Any) -> None:
        ws.on("framereceived", lambda payload: frames.append(payload if isinstance(payload, bytes) else b""))

    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    # The page asks Google for a font; the test machine is offline, and nothing waits on it.
    page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())
    page.on("websocket", on_socket)
    return page


#: A test that drives the workbench in Chromium waits for a browser, a server and a session process, each
#: bounded by WAIT: more than the suite's default limit on 2 loaded cores.
BROWSER_SECONDS = 300


def _catalog_shown(page: Any, frames: list[bytes], task_ids: list[str], start: int = 0) -> None:
    page.wait_for_selector(".textual-terminal canvas, .xterm-screen", timeout=WAIT * 1000)
    catalog = _wait_for(frames, page, re.escape(task_ids[0]), start)
    shown = [t for t in task_ids if t in catalog]
    assert len(shown) >= len(task_ids) - 1, f"the catalog shows the demo's tasks: {shown} of {task_ids}"


@pytest.mark.timeout(BROWSER_SECONDS)
def test_workbench_in_the_browser(browser: Any, served: Served, demo_root: Path, tmp_path: Path) -> None:  # noqa: F811
    project = Project.open(demo_root)
    assert isinstance(project, Project)
    task_ids = sorted(ref.root.name for ref in project.task_refs)
    frames: list[bytes] = []
    page = _open_page(browser, frames)
    try:
        # Without the token: the one-line page saying how to get in, and no session.
        refused = page.goto(served.url + "/", wait_until="domcontentloaded", timeout=WAIT * 1000)
        assert refused is not None and refused.status == 403
        assert "?token=" in page.inner_text("body") and served.children() == []
        # With it: redirected to the address without it, the cookie set, the catalog shown.
        opened = page.goto(f"{served.url}/?token={served.token}", wait_until="domcontentloaded", timeout=WAIT * 1000)
        assert opened is not None and opened.status == 200 and page.url == served.url + "/"
        assert opened.request.redirected_from is not None
        cookies = {c["name"]: c for c in page.context.cookies()}
        cookie = cookies[served.cookie_name]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and served.token not in cookie["value"]
        assert served.token not in page.content()
        _catalog_shown(page, frames, task_ids)
        page.screenshot(path=str(_shots_dir(tmp_path) / "serve-catalog.png"))
        before = len(frames)
        page.locator(".textual-terminal").click()
        page.keyboard.press("Enter")
        # The task view: its breadcrumb names the task's group/task folder, its panels are the task's.
        opened_text = _wait_for(frames, page, r"Catalog\s*›\s*[a-z0-9-]+/[a-z0-9-]+", before)
        opened_text = _wait_for(frames, page, r"Timeline of runs", before)
        crumb = re.search(r"Catalog\s*›\s*([a-z0-9-]+)/([a-z0-9-]+)", opened_text)
        assert crumb is not None and crumb.group(2) in task_ids, "the task opened is one of the demo's"
        page.wait_for_timeout(500)
        page.screenshot(path=str(_shots_dir(tmp_path) / "serve-task.png"))
        # A reload: the cookie alone opens a new session.
        before = len(frames)
        reloaded = page.reload(wait_until="domcontentloaded", timeout=WAIT * 1000)
        assert reloaded is not None and reloaded.status == 200
        _catalog_shown(page, frames, task_ids, before)
    finally:
        page.close()
    wait_until(lambda: served.children() == [], "the closed tab's process is reaped", timeout=30)


def test_other_hosts_and_origins_are_refused(served: Served) -> None:
    port = served.port
    cookie = {"Cookie": f"{served.cookie_name}={cookie_value(served.token or '')}"}
    ok = urllib.request.urlopen(urllib.request.Request(served.url + "/", headers=cookie), timeout=WAIT)
    assert ok.status == 200 and b"textual" in ok.read().lower()
    rebinding = urllib.request.Request(served.url + "/", headers={**cookie, "Host": f"attacker.example:{port}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(rebinding, timeout=WAIT)
    assert refused.value.code == 403
    cross = urllib.request.Request(
        served.url + "/ws",
        headers={**cookie, "Origin": "http://attacker.example", "Connection": "Upgrade", "Upgrade": "websocket"},
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
    for flags, said in (
        (["--token-file", "t"], "--token-file goes with --serve"),
        (["--no-token"], "--no-token goes with --serve"),
        (["--max-sessions", "3"], "--max-sessions goes with --serve"),
        (["--idle-timeout", "60"], "--idle-timeout goes with --serve"),
        (["--serve", "--max-sessions", "0"], "not a number of sessions"),
        (["--serve", "--idle-timeout", "nan"], "not a number of seconds"),
    ):
        with pytest.raises(SystemExit) as usage:
            main([str(tmp_path), *flags])
        assert usage.value.code == 2 and said in capsys.readouterr().err


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
    assert "token=" not in done.stdout, "nothing is announced before the port is bound"


def _tree_digest(root: Path) -> dict[str, str]:
    """Every file and folder under *root*: the SHA-256 of its bytes, or ``dir``."""
    import hashlib

    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(folder, name), root)] = "dir"
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


#: Each wizard's palette entry ("Decide: <kind> · <task> …") is found by these words.
WIZARDS = ("choose a direction", "prepare planning", "answer questions", "confirm design item")
READ_ONLY_LINE = r"read-only: nothing will be written"
#: How long one step of a wizard is given to show the next after Next (a loaded machine draws slowly).
STEP_SECONDS = 4.0


def _palette_query(frames: list[bytes], page: Any, query: str, pattern: str) -> None:
    """Enter *query* into the open palette at once and wait until its list shows *pattern*.

    Each key typed starts a new search, and the list shown stays the previous query's until the new one's hits
    arrive: Enter in between selects a stale hit (the list for "D" starts with another command). The query
    goes in as one input, as a paste does, so the keys reach the palette together.
    """
    start = len(frames)
    page.keyboard.insert_text(query)
    _wait_for(frames, page, re.escape(query), start)
    _wait_for(frames, page, pattern, start, f"the palette's list for {query!r}: ")


def _highest_step(text: str) -> int:
    return max((int(n) for n in re.findall(r"step (\d+) of", text)), default=0)


def _next_step(frames: list[bytes], page: Any, start: int) -> None:
    """Answer the step shown (choose, type, Next) and wait until the wizard shows a later step or its read-only
    line; a step that does not move on (its answer refused) is left after :data:`STEP_SECONDS`."""
    before = _highest_step(_screen_text(frames[start:]))
    page.keyboard.press("Enter")
    page.keyboard.type("answer")
    page.keyboard.press("Control+n")
    deadline = time.monotonic() + STEP_SECONDS
    last = time.monotonic() + WAIT
    drawn = len(frames)
    while time.monotonic() < min(deadline, last):
        page.wait_for_timeout(200)
        text = _screen_text(frames[start:])
        if _highest_step(text) > before or re.search(READ_ONLY_LINE, text):
            return
        if len(frames) != drawn:  # still drawing what the keys did: give it the time it takes
            drawn = len(frames)
            deadline = max(deadline, time.monotonic() + 1.0)


@pytest.mark.timeout(BROWSER_SECONDS)
def test_read_only_in_the_browser(browser: Any, fresh_demo: Path, tmp_path: Path) -> None:  # noqa: F811
    """Served read-only: every wizard opens from the palette and walks to its write step; no byte changes."""
    before = _tree_digest(fresh_demo)
    frames: list[bytes] = []
    with serving(fresh_demo, tmp_path, "--read-only") as server:
        assert "read-only: writes refused" in server.output()
        page = _open_page(browser, frames)
        try:
            page.goto(f"{server.url}/?token={server.token}", wait_until="domcontentloaded", timeout=WAIT * 1000)
            _wait_for(frames, page, r"READ-ONLY")
            page.locator(".textual-terminal").click()
            for words in WIZARDS:
                start = len(frames)
                page.keyboard.press("Control+p")
                _wait_for(frames, page, r"Search for commands|🔎", start)
                _palette_query(frames, page, f"Decide {words}", r"review only")
                page.keyboard.press("Enter")
                _wait_for(frames, page, r"step 1 of", start)
                for _ in range(12):  # every step: choose (Enter), answer (typed), Next
                    if re.search(READ_ONLY_LINE, _screen_text(frames[start:])):
                        break
                    _next_step(frames, page, start)
                _wait_for(frames, page, READ_ONLY_LINE, start, f"the wizard to {words}: ")
                page.keyboard.press("Control+n")  # the write step's Next: nothing happens
                page.wait_for_timeout(500)
                page.screenshot(path=str(tmp_path / f"read-only-{words.replace(' ', '-')}.png"))
                assert "wrote " not in _screen_text(frames[start:]).lower()
                page.keyboard.press("Escape")
                _wait_for(frames, page, r"Catalog|Inbox", len(frames) - 1)
        finally:
            page.close()
        wait_until(lambda: server.children() == [], "the closed tab's process is reaped", timeout=30)
    assert _tree_digest(fresh_demo) == before, "a read-only session changed the store"
