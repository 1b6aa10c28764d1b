"""Who gets into ``okstra-tui --serve``, and how many: plain HTTP and websocket clients against a real server.

Every server binds a free loopback port, every wait is bounded, and each test
ends with no workbench process left behind.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest
from serve_helpers import WAIT, Served, children_of, serving, session_workbench, wait_until

from okstra_tui.serve import (
    MIN_TOKEN_CHARS,
    ServeRefused,
    choose_token,
    cookie_value,
    read_token_file,
    same_secret,
)
from okstra_tui.serve_server import HEARTBEAT, HEARTBEAT_ENV, MIN_HEARTBEAT, heartbeat


def _get(url: str, **kwargs: object) -> tuple[int, dict[str, str], str, list[str]]:
    """A GET that does not follow redirects: status, headers, body, Set-Cookie lines."""

    async def go() -> tuple[int, dict[str, str], str, list[str]]:
        async with (
            aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client,
            client.get(url, allow_redirects=False, **kwargs) as r,  # type: ignore[arg-type]
        ):
            return r.status, dict(r.headers), await r.text(), r.headers.getall("Set-Cookie", [])

    return asyncio.run(go())


def _ws_status(url: str, headers: dict[str, str] | None = None) -> int:
    """The websocket handshake's status: 101 when it opened (closed again at once), else the refusal's."""

    async def go() -> int:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
            try:
                ws = await client.ws_connect(
                    url, headers=headers or {}, timeout=aiohttp.ClientWSTimeout(ws_receive=WAIT)
                )
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status
            await ws.close()
            return 101

    return asyncio.run(go())


@pytest.fixture
def served(demo_root: Path, tmp_path: Path) -> Iterator[Served]:
    with serving(demo_root, tmp_path) as server:
        yield server
        assert server.output().count(server.token or "?") == 1, "the token is printed once, and never logged"


def _cookie(server: Served) -> dict[str, str]:
    assert server.token is not None
    return {"Cookie": f"{server.cookie_name}={cookie_value(server.token)}"}


def _ws_url(server: Served) -> str:
    return server.url.replace("http:", "ws:") + "/ws?width=80&height=24"


def test_nothing_without_the_token(served: Served) -> None:
    for path in ("/", "/static/js/textual.js", "/static/css/xterm.css", "/download/x", "/nowhere"):
        status, _, body, cookies = _get(served.url + path)
        assert status == 403, path
        assert body.count("\n") == 1 and "?token=" in body and (served.token or "") not in body
        assert cookies == []
    assert _ws_status(_ws_url(served)) == 403
    assert _ws_status(_ws_url(served), {"Origin": served.url}) == 403
    assert served.children() == []


def test_the_token_sets_a_cookie_and_leaves_the_address(served: Served) -> None:
    token = served.token
    assert token is not None and len(token) * 6 >= 128
    status, headers, _, cookies = _get(f"{served.url}/?fontsize=14&token={token}")
    assert status == 303 and headers["Location"] == "/?fontsize=14"
    assert len(cookies) == 1
    cookie = cookies[0]
    assert cookie.startswith(f"{served.cookie_name}={cookie_value(token)};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" not in cookie
    assert token not in cookie
    # The redirect stays on this server, whatever the path looks like.
    for path in ("//elsewhere.example/", "/\\elsewhere.example/", "/static/../x"):
        status, headers, _, _ = _get(f"{served.url}{path}?token={token}")
        location = headers["Location"]
        assert status == 303 and location.startswith("/") and location[1:2] not in ("/", "\\"), location
    # Behind a TLS proxy that says so, the cookie is Secure.
    _, _, _, proxied = _get(f"{served.url}/?token={token}", headers={"X-Forwarded-Proto": "https"})
    assert "Secure" in proxied[0]
    # The cookie alone opens the page (a reload), its assets and the websocket.
    status, headers, body, _ = _get(served.url + "/", headers=_cookie(served))
    assert status == 200 and "textual" in body.lower() and token not in body
    assert headers["X-Frame-Options"] == "DENY" and headers["Referrer-Policy"] == "no-referrer"
    assert _get(served.url + "/static/js/textual.js", headers=_cookie(served))[0] == 200
    assert _ws_status(_ws_url(served), {**_cookie(served), "Origin": served.url}) == 101
    # The token in the websocket's own address works too (as a script would use it).
    assert _ws_status(f"{_ws_url(served)}&token={token}") == 101


def test_a_websocket_from_another_origin_is_refused_even_with_the_cookie(served: Served) -> None:
    for origin in ("http://attacker.example", "null", f"http://127.0.0.1:{served.port + 1}", "https://127.0.0.1"):
        assert _ws_status(_ws_url(served), {**_cookie(served), "Origin": origin}) == 403, origin
    assert _ws_status(f"{_ws_url(served)}&token={served.token}", {"Origin": "http://attacker.example"}) == 403


def test_thirty_wrong_tokens_are_refused_and_the_right_one_gets_in(served: Served) -> None:
    token = served.token
    assert token is not None
    name = served.cookie_name
    twice = quote(quote("".join(f"%{ord(c):02X}" for c in token), safe=""), safe="")
    queries = [
        "",  # missing
        "?token=",
        "?token",
        "?tok=" + token,
        "?TOKEN=" + token,
        "?token=" + token[:-1],  # truncated
        "?token=" + token[: len(token) // 2],
        "?token=" + token[1:],
        "?token=" + token + "x",  # wrong
        "?token=" + token.swapcase(),
        "?token=" + "A" * len(token),
        "?token=wrong&token=" + token,  # ambiguous
        "?token=" + token + "&token=" + token,
        "?token=" + quote(token + "\x00", safe=""),  # URL-encoded, decoding to something else
        "?token=" + quote(token + "\r\nSet-Cookie: a=b", safe=""),
        "?token=%20" + token,
        "?token=" + twice,
        "?token=" + quote(" " + token, safe=""),
        "?token=" + quote(token + "é", safe=""),
        "?token=%FF%FE",
    ]
    smuggled = [
        {"Authorization": f"token {token}"},  # header-smuggled
        {"Authorization": f"Bearer {token}"},
        {"X-Token": token},
        {"Cookie": f"{name}={token}"},  # the token itself is not the cookie
        {"Cookie": f"token={token}"},
        {"Cookie": f"{name}={cookie_value(token)[:-1]}"},
        {"Cookie": f"okstra-serve-{served.port + 1}={cookie_value(token)}"},
        {"X-Original-URL": f"/?token={token}"},
        {"Referer": f"{served.url}/?token={token}"},
        {"Forwarded": f"for=127.0.0.1;token={token}"},
    ]
    attempts = [(served.url + "/" + q, {}) for q in queries] + [(served.url + "/", h) for h in smuggled]
    assert len(attempts) == 30
    for url, headers in attempts:
        status, _, body, cookies = _get(url, headers=headers)
        assert status == 403 and cookies == [], (url, headers)
        assert "?token=" in body
    for url, headers in attempts[:12]:
        path = url.replace(served.url + "/", served.url + "/static/js/textual.js")
        assert _get(path, headers=headers)[0] == 403
        ws = url.replace(served.url + "/", _ws_url(served) + "&").replace("&?", "&")
        assert _ws_status(ws, headers) == 403, ws
    assert served.children() == []
    status, headers, _, cookies = _get(f"{served.url}/?token={token}")
    assert status == 303 and len(cookies) == 1
    # One percent-encoding of the right token is the right token (the browser may encode it).
    assert _get(f"{served.url}/?token=" + "".join(f"%{ord(c):02X}" for c in token))[0] == 303


def test_no_token_is_refused_off_loopback(demo_root: Path) -> None:
    for host in ("0.0.0.0", "::", "192.0.2.1"):
        done = subprocess.run(
            [sys.executable, "-m", "okstra_tui", str(demo_root), "--serve", "--host", host, "--no-token"],
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "loopback" in done.stderr and "Traceback" not in done.stderr


def test_no_token_on_loopback_warns_and_opens(demo_root: Path, tmp_path: Path) -> None:
    with serving(demo_root, tmp_path, "--no-token") as server:
        out = server.output()
        assert "without a token" in out and "no token (--no-token)" in out and server.token is None
        assert _get(server.url + "/")[0] == 200


def test_token_file_must_be_private(demo_root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("a-fixed-token-of-enough-length\n")
    for mode in (0o644, 0o640, 0o604, 0o620):
        os.chmod(secret, mode)
        done = subprocess.run(
            [sys.executable, "-m", "okstra_tui", str(demo_root), "--serve", "--token-file", str(secret)],
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and f"{mode:04o}" in done.stderr and "chmod 600" in done.stderr
        assert "a-fixed-token" not in done.stderr
    os.chmod(secret, 0o600)
    with serving(demo_root, tmp_path, "--token-file", str(secret)) as server:
        assert server.token is None, "a fixed token is not printed"
        assert "a-fixed-token" not in server.output() and "--token-file" in server.output()
        assert _get(server.url + "/?token=a-fixed-token-of-enough-length")[0] == 303
        assert _get(server.url + "/?token=a-fixed-token-of-enough-lengt")[0] == 403
        assert "a-fixed-token" not in server.output()


def test_token_from_the_environment(demo_root: Path, tmp_path: Path) -> None:
    fixed = "environment-token-0123456789"
    with serving(demo_root, tmp_path, env={"OKSTRA_SERVE_TOKEN": fixed}) as server:
        assert fixed not in server.output() and "OKSTRA_SERVE_TOKEN" in server.output()
        assert _get(server.url + "/?token=" + fixed)[0] == 303
        assert _ws_status(f"{server.url.replace('http:', 'ws:')}/ws?token={fixed}") == 101
        wait_until(lambda: server.children() == [], "the session's process is reaped")


def test_token_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OKSTRA_SERVE_TOKEN", raising=False)
    generated = choose_token(None, False, "127.0.0.1")
    assert generated is not None and generated.generated and len(generated.value) >= 43
    assert choose_token(None, True, "127.0.0.1") is None
    with pytest.raises(ServeRefused, match="loopback"):
        choose_token(None, True, "0.0.0.0")
    short = tmp_path / "short"
    short.write_text("x" * (MIN_TOKEN_CHARS - 1))
    short.chmod(0o600)
    with pytest.raises(ServeRefused, match="too short"):
        read_token_file(short)
    (tmp_path / "link").symlink_to(short)
    with pytest.raises(ServeRefused, match="cannot open"):
        read_token_file(tmp_path / "link")
    monkeypatch.setenv("OKSTRA_SERVE_TOKEN", "spaces are not allowed here")
    with pytest.raises(ServeRefused, match="printable ASCII"):
        choose_token(None, False, "127.0.0.1")
    monkeypatch.setenv("OKSTRA_SERVE_TOKEN", "an-environment-token-xyz")
    with pytest.raises(ServeRefused, match="--no-token"):
        choose_token(None, True, "127.0.0.1")
    assert "OKSTRA_SERVE_TOKEN" not in os.environ, "read once and taken out of the environment"
    assert same_secret("abc", "abc") and not same_secret("\udcff", "abc") and not same_secret("é", "e")
    assert stat.S_IMODE(short.stat().st_mode) == 0o600


# ------------------------------------------------------------------ sessions


async def _open_sessions(
    client: aiohttp.ClientSession, server: Served, count: int
) -> tuple[list[aiohttp.ClientWebSocketResponse], list[str]]:
    """Open *count* websockets at once; returns the ones the server kept open and what the others were told."""
    headers = {**_cookie(server), "Origin": server.url}

    async def one() -> tuple[aiohttp.ClientWebSocketResponse, str]:
        ws = await client.ws_connect(_ws_url(server), headers=headers, timeout=aiohttp.ClientWSTimeout(ws_receive=WAIT))
        message = await ws.receive(timeout=WAIT)
        text = message.data.decode("utf-8", "replace") if message.type == aiohttp.WSMsgType.BINARY else ""
        return ws, text

    results = await asyncio.gather(*(one() for _ in range(count)))
    kept = [ws for ws, text in results if "too many open sessions" not in text]
    refused = [text for _, text in results if "too many open sessions" in text]
    return kept, refused


def test_the_session_cap_holds_and_closed_tabs_are_reaped(demo_root: Path, tmp_path: Path) -> None:
    with serving(demo_root, tmp_path, "--max-sessions", "3") as server:
        assert "at most 3 sessions" in server.output()

        async def loads(n: int) -> list[int]:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:

                async def one() -> int:
                    async with client.get(server.url + "/", headers=_cookie(server)) as r:
                        return r.status

                return list(await asyncio.gather(*(one() for _ in range(n))))

        # Twenty page loads at once start no process.
        assert asyncio.run(loads(20)) == [200] * 20
        assert server.children() == []

        async def scenario() -> None:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
                kept, refused = await _open_sessions(client, server, 20)
                assert len(kept) == 3 and len(refused) == 17
                wait_until(lambda: len(server.children()) == 3, "three workbench processes")
                assert await loads(20) == [503] * 20
                assert len(server.children()) == 3
                for ws in kept:  # the tabs close
                    await ws.close()

        asyncio.run(scenario())
        wait_until(lambda: server.children() == [], "every closed tab's process is reaped", timeout=30)
        assert _get(server.url + "/", headers=_cookie(server))[0] == 200
        pid = server.proc.pid
    assert children_of(pid) == []


def test_a_browser_that_went_away_is_reaped(demo_root: Path, tmp_path: Path) -> None:
    """A client that stops answering (no close, no pong) loses its session: within 30 seconds with the default
    heartbeat, within seconds with the 1 s heartbeat this server is given."""
    with serving(demo_root, tmp_path, env={HEARTBEAT_ENV: "1"}) as server:

        async def vanish() -> None:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
                ws = await client.ws_connect(
                    _ws_url(server), headers={**_cookie(server), "Origin": server.url}, autoping=False
                )
                wait_until(lambda: len(server.children()) == 1, "the session's process")
                started = time.monotonic()
                # Never read, never answer a ping: as a laptop closed with the tab open.
                while server.children() and time.monotonic() - started < 45:
                    await asyncio.sleep(0.5)
                assert server.children() == [], "the silent session's process is ended and reaped"
                await ws.close()

        asyncio.run(vanish())


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("", HEARTBEAT), ("1", 1.0), ("0", MIN_HEARTBEAT), ("-3", MIN_HEARTBEAT), ("600", HEARTBEAT), ("nan", HEARTBEAT)],
)
def test_the_heartbeat_can_only_be_shortened(value: str, seconds: float, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HEARTBEAT_ENV, value)
    assert heartbeat() == seconds


def test_idle_sessions_end(demo_root: Path, tmp_path: Path) -> None:
    with serving(demo_root, tmp_path, "--idle-timeout", "2") as server:

        async def idle() -> str:
            async with (
                aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client,
                client.ws_connect(_ws_url(server), headers={**_cookie(server), "Origin": server.url}) as ws,
            ):
                seen = b""
                deadline = time.monotonic() + WAIT
                while time.monotonic() < deadline:
                    message = await ws.receive(timeout=WAIT)
                    if message.type != aiohttp.WSMsgType.BINARY:
                        break
                    seen += message.data
                return seen.decode("utf-8", "replace")

        told = asyncio.run(idle())
        assert "session ended after 2 s without input" in told
        wait_until(lambda: server.children() == [], "the idle session's process is reaped")


def test_read_only_sessions(demo_root: Path, tmp_path: Path) -> None:
    with serving(demo_root, tmp_path, "--read-only") as server:
        assert "read-only: writes refused" in server.output()

        async def one() -> None:
            async with (
                aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client,
                client.ws_connect(_ws_url(server), headers={**_cookie(server), "Origin": server.url}),
            ):
                wait_until(lambda: session_workbench(server) is not None, "the session's process")
                child = server.children()[0]
                argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
                environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
                assert b"--read-only" in argv and b"OKSTRA_READ_ONLY=1" in environ
                assert not any(e.startswith(b"OKSTRA_SERVE_TOKEN=") for e in environ)

        asyncio.run(one())
        wait_until(lambda: server.children() == [], "the session's process is reaped")


def test_behind_a_tls_proxy(demo_root: Path, tmp_path: Path) -> None:
    """A proxy passing its public Host and ``X-Forwarded-Proto: https``: a Secure cookie, a wss:// websocket."""
    public = "workbench.example.org"
    with serving(demo_root, tmp_path, "--allow-host", public) as server:
        proxied = {"Host": public, "X-Forwarded-Proto": "https"}
        status, _, _, cookies = _get(f"{server.url}/?token={server.token}", headers=proxied)
        assert status == 303 and "Secure" in cookies[0]
        status, _, page, _ = _get(server.url + "/", headers={**proxied, **_cookie(server)})
        assert status == 200 and f"wss://{public}/ws" in page
        origin = {**proxied, **_cookie(server), "Origin": f"https://{public}"}
        assert _ws_status(_ws_url(server), origin) == 101
        assert _ws_status(_ws_url(server), {**origin, "Origin": "https://elsewhere.example.org"}) == 403
        assert _get(server.url + "/", headers={**_cookie(server), "Host": "other.example.org"})[0] == 403
        wait_until(lambda: server.children() == [], "the session's process is reaped")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_stopping_the_server_ends_its_sessions(demo_root: Path, tmp_path: Path) -> None:
    import signal

    with serving(demo_root, tmp_path) as server:

        async def open_then_stop() -> list[int]:
            async with (
                aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client,
                client.ws_connect(_ws_url(server), headers={**_cookie(server), "Origin": server.url}),
            ):
                wait_until(lambda: len(server.children()) == 1, "the session's process")
                sessions = server.children()
                os.kill(server.proc.pid, signal.SIGTERM)  # the server alone, as Ctrl+C or a service manager
                await asyncio.to_thread(server.proc.wait, WAIT)
                return sessions

        sessions = asyncio.run(open_then_stop())
        assert server.proc.returncode == 0
        wait_until(lambda: not any(_alive(pid) for pid in sessions), "the session's process ended with the server")


def test_the_startup_lines_say_address_token_and_writes() -> None:
    from okstra_tui.serve import ServeOptions, Token, startup_lines

    project = Path("/srv/shop")
    generated = Token("g" * 43, "generated")
    lines = startup_lines(project, ServeOptions(token=generated))
    assert lines[0].startswith("okstra-tui: serving /srv/shop on 127.0.0.1:8000 · token required · writes possible")
    assert lines[1] == f"open http://127.0.0.1:8000/?token={'g' * 43}"
    fixed = startup_lines(project, ServeOptions(token=Token("f" * 20, "OKSTRA_SERVE_TOKEN"), read_only=True))
    assert "read-only: writes refused" in fixed[0] and all("f" * 20 not in line for line in fixed)
    assert "no token (--no-token)" in startup_lines(project, ServeOptions(token=None))[0]
    wild = startup_lines(project, ServeOptions(host="0.0.0.0", port=9000, token=generated))
    assert wild[2] == f"  or http://127.0.0.1:9000/?token={'g' * 43}"


def test_a_process_that_ignores_quit_and_sigterm_is_killed_and_reaped() -> None:
    from okstra_tui.serve_server import end_process

    class Stuck:
        """A session whose process ignores the quit message and SIGTERM."""

        _process: asyncio.subprocess.Process | None = None

        async def stop(self) -> None:
            await asyncio.sleep(3600)  # never answers the quit

    async def scenario() -> int | None:
        stuck = Stuck()
        stuck._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(1, flush=True); time.sleep(600)",
            stdout=asyncio.subprocess.PIPE,
        )
        assert stuck._process.stdout is not None
        await stuck._process.stdout.readline()  # SIGTERM is ignored from here on
        await end_process(stuck)  # type: ignore[arg-type]
        return stuck._process.returncode

    assert asyncio.run(scenario()) == -9
