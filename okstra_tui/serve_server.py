"""The web server behind ``--serve``: textual-serve's, with a gate, a cap on sessions and reaping.

* **The gate** (an aiohttp middleware, before every route: page, assets,
  websocket, downloads): the ``Host`` must be this server's when it is bound to
  a loopback address; then the token is needed, as ``?token=…`` (the right one
  sets the cookie and redirects to the same address without it) or as the
  cookie; anything else gets a one-line 403. A websocket opened from another
  origin is refused even with the cookie.
* **Sessions.** Each websocket is one workbench process. At most
  ``max_sessions`` run at once: a page load beyond that gets a "too many open
  sessions" page, and a websocket beyond it gets that line in its terminal and
  no process. A session ends when its browser goes away (the websocket closes,
  or stops answering the heartbeat), after ``idle_timeout`` seconds without
  input, or when the server stops; its process is asked to quit, then
  terminated, then killed, and always waited for (reaped). A process that
  stops reading its input never holds its session past its tab. Its terminal
  size is bounded (:func:`~okstra_tui.serve.terminal_size`), and so is its
  memory (:func:`~okstra_tui.serve.bounded`).
* **Logs** name the method, the path and the status, never the query string
  (where the token travels).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSCloseCode, WSMsgType, web
from aiohttp.abc import AbstractAccessLogger
from textual_serve.app_service import AppService
from textual_serve.server import Server
from yarl import URL

from okstra_core.text import visible

from .serve import (
    ServeOptions,
    allowed_hosts,
    command_for,
    cookie_name,
    cookie_value,
    exposure_warning,
    same_secret,
    startup_lines,
    terminal_size,
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: Seconds between websocket pings; a browser that misses a pong for half of it is gone.
HEARTBEAT = 10.0
#: An environment variable that shortens the heartbeat (seconds, at least :data:`MIN_HEARTBEAT`, never longer
#: than :data:`HEARTBEAT`): the test suite's servers notice a silent browser within seconds with it.
HEARTBEAT_ENV = "OKSTRA_SERVE_HEARTBEAT"
MIN_HEARTBEAT = 0.5
#: Seconds a session's process has to quit when asked, then again after SIGTERM, before SIGKILL. With the
#: heartbeat, the process of a browser that went silent is gone within 10 + 5 + 3 * 3 seconds (under 30).
QUIT_GRACE = 3.0

#: Bytes of browser messages that may wait for a session's process to read them; past that, the process has
#: stopped reading its input and the session ends (its process is then ended as any other).
INPUT_BACKLOG = 1 << 20

WEBSOCKET_PATH = "/ws"
LOGIN_HINT = (
    "okstra workbench: forbidden. Open the address okstra-tui printed when it started, with its ?token=… "
    "(or the token from its --token-file or OKSTRA_SERVE_TOKEN); the browser then keeps a cookie.\n"
)
OTHER_HOST = "okstra workbench: forbidden. This server answers only to its own address.\n"
OTHER_ORIGIN = "okstra workbench: forbidden. A websocket from another origin is refused.\n"


def heartbeat() -> float:
    """Seconds between websocket pings: :data:`HEARTBEAT`, or the shorter one :data:`HEARTBEAT_ENV` names."""
    try:
        wanted = float(os.environ.get(HEARTBEAT_ENV, ""))
    except ValueError:
        return HEARTBEAT
    return min(max(wanted, MIN_HEARTBEAT), HEARTBEAT) if math.isfinite(wanted) else HEARTBEAT


def too_many(limit: int) -> str:
    return (
        f"okstra workbench: too many open sessions ({limit} of {limit}). "
        "Close another tab of this workbench (or wait for an idle one to end), then reload.\n"
    )


def _refuse(text: str, status: int = 403) -> web.Response:
    response = web.Response(status=status, text=text, content_type="text/plain")
    response.headers["Cache-Control"] = "no-store"
    return response


def _https(request: web.Request) -> bool:
    """Served over https: directly, or behind a proxy that says so (``X-Forwarded-Proto: https``)."""
    return request.secure or request.headers.get("X-Forwarded-Proto", "").strip().lower() == "https"


def _without_token(request: web.Request) -> str:
    """The address the browser used, without the token (other query parameters kept), on this server.

    Leading slashes and backslashes are folded into one slash, so ``//elsewhere.example`` stays a path here.
    """
    query = request.rel_url.query.copy()
    query.popall("token", None)
    path = "/" + request.rel_url.path.lstrip("/\\")
    return str(URL.build(path=path, query=query))


def make_gate(options: ServeOptions) -> Any:
    """The middleware that admits a request: right host, right token or cookie, same origin for the websocket."""
    accepted = allowed_hosts(options.host, options.port, options.extra_hosts)
    name = cookie_name(options.port)
    token = options.token.value if options.token is not None else None
    expected_cookie = cookie_value(token) if token is not None else ""

    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        if accepted is not None and request.host.lower() not in accepted:
            return _refuse(OTHER_HOST)
        if request.path == WEBSOCKET_PATH:
            origin = request.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc.lower() != request.host.lower():
                return _refuse(OTHER_ORIGIN)
        if token is None:
            return await handler(request)
        given = request.rel_url.query.getall("token", [])
        if given:
            if len(given) != 1 or not same_secret(given[0], token):
                return _refuse(LOGIN_HINT)
            if request.path == WEBSOCKET_PATH:
                return await handler(request)
            # The right token: the cookie stands for it from now on, and the address loses it.
            response = web.HTTPSeeOther(_without_token(request))
            response.headers["Cache-Control"] = "no-store"
            response.set_cookie(
                name, expected_cookie, httponly=True, samesite="Strict", secure=_https(request), path="/"
            )
            return response
        if same_secret(request.cookies.get(name, ""), expected_cookie):
            return await handler(request)
        return _refuse(LOGIN_HINT)

    return gate


async def _safety_headers(request: web.Request, response: web.StreamResponse) -> None:
    """No framing by other sites, no address in a Referer, no sniffing."""
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Content-Security-Policy", "frame-ancestors 'none'")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")


class PathOnlyAccessLog(AbstractAccessLogger):
    """One access line per request: method, path and status; never the query string (it may hold the token)."""

    def log(self, request: Any, response: Any, time: float) -> None:
        self.logger.info("%s %s %s", request.method, visible(request.path), response.status)


class Session:
    """One browser tab's workbench: its websocket, its process, and when it last had input."""

    def __init__(self, websocket: web.WebSocketResponse, service: AppService) -> None:
        self.websocket = websocket
        self.service = service
        self.last_input = time.monotonic()


class WorkbenchServer(Server):
    """textual-serve's server with the gate, the session cap and the reaping."""

    def __init__(self, command: str, project: Path, options: ServeOptions) -> None:
        super().__init__(command, host=options.host, port=options.port, title=f"okstra {project.name}")
        self.project = project
        self.options = options
        self.sessions: set[Session] = set()
        #: Sessions counted from the moment a websocket is accepted, before its process starts.
        self.open_count = 0

    async def _make_app(self) -> web.Application:
        app: web.Application = await super()._make_app()
        app.middlewares.append(make_gate(self.options))
        app.on_response_prepare.append(_safety_headers)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """Nothing to say yet: the address is announced once it is bound (:meth:`announce`)."""

    def announce(self, *_: object) -> None:
        """The startup lines, printed once the server listens."""
        for line in startup_lines(self.project, self.options):
            print(line, flush=True)

    async def on_shutdown(self, app: web.Application) -> None:
        """Stopping the server ends every session and reaps its process."""
        for session in list(self.sessions):
            with contextlib.suppress(Exception):
                await session.websocket.close(code=WSCloseCode.GOING_AWAY, message=b"server stopping")
        for session in list(self.sessions):
            await end_process(session.service)

    def initialize_logging(self) -> None:
        super().initialize_logging()
        logging.getLogger("aiohttp.access").setLevel(logging.INFO)

    def serve(self, debug: bool = False) -> None:
        """Run until interrupted (Ctrl+C or SIGTERM), logging requests without their query strings."""
        import signal

        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.add_signal_handler(signal.SIGINT, self.request_exit)
        loop.add_signal_handler(signal.SIGTERM, self.request_exit)
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            handle_signals=False,
            loop=loop,
            print=self.announce,
            access_log_class=PathOnlyAccessLog,
            shutdown_timeout=QUIT_GRACE * 3,
        )

    async def handle_index(self, request: web.Request) -> Any:
        if self.open_count >= self.options.max_sessions:
            return _refuse(too_many(self.options.max_sessions), status=503)
        # The page's links and websocket follow the address the browser used (an exposed server is
        # reached by a name other than the address it binds); the gate has vetted that address.
        scheme = "https" if _https(request) else "http"
        self.public_url = f"{scheme}://{request.host}"
        return await super().handle_index(request)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One session: refused beyond the cap (no process), else a workbench process until the browser goes."""
        websocket = web.WebSocketResponse(heartbeat=heartbeat())
        if self.open_count >= self.options.max_sessions:
            await websocket.prepare(request)
            await websocket.send_bytes(("\r\n" + too_many(self.options.max_sessions)).encode("utf-8"))
            await websocket.close(code=WSCloseCode.TRY_AGAIN_LATER, message=b"too many open sessions")
            return websocket
        self.open_count += 1  # counted before the first await: parallel requests cannot all pass the cap
        try:
            await self._run_session(request, websocket)
        finally:
            self.open_count -= 1
        return websocket

    async def _run_session(self, request: web.Request, websocket: web.WebSocketResponse) -> None:
        await websocket.prepare(request)

        # Once the browser is gone its output is dropped, not an error: the process's output is still read to
        # its end, so a process quitting never blocks on a full pipe.
        async def send_bytes(data: bytes) -> None:
            if not websocket.closed:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await websocket.send_bytes(data)

        async def send_str(data: str) -> None:
            if not websocket.closed:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await websocket.send_str(data)

        async def close() -> None:
            await websocket.close()

        service = AppService(
            self.command,
            write_bytes=send_bytes,
            write_str=send_str,
            close=close,
            download_manager=self.download_manager,
            debug=self.debug,
        )
        session = Session(websocket, service)
        self.sessions.add(session)
        idle: asyncio.Task[None] | None = None
        try:
            await service.start(*terminal_size(request.query.get("width", "80"), request.query.get("height", "24")))
            if self.options.idle_timeout is not None:
                idle = asyncio.create_task(self._end_when_idle(session, self.options.idle_timeout))
            await self._relay(session)
        except Exception as exc:  # a process that cannot start, a broken pipe: the session ends, the server stays
            logging.getLogger("okstra-serve").warning("session ended: %s", visible(str(exc)))
        finally:
            if idle is not None:
                idle.cancel()
            self.sessions.discard(session)
            await end_process(service)
            with contextlib.suppress(Exception):
                await websocket.close()

    async def _relay(self, session: Session) -> None:
        """The browser's messages to the process; typing and resizing count as input.

        A task of its own hands them to the process, so that a process which stops reading its input (stuck,
        or busy) never keeps this loop from seeing the tab close; past :data:`INPUT_BACKLOG` bytes waiting
        for it, the session ends.
        """
        pending: asyncio.Queue[tuple[Callable[[], Awaitable[object]], int]] = asyncio.Queue()
        waiting = [0]  # bytes queued and not yet handed to the process

        async def feed() -> None:
            while True:
                send, size = await pending.get()
                await send()
                waiting[0] -= size

        feeder = asyncio.create_task(feed())
        try:
            async for message in session.websocket:
                if message.type != WSMsgType.TEXT:
                    continue
                envelope = message.json()
                if not isinstance(envelope, list) or not envelope:
                    continue
                if envelope[0] == "ping" and len(envelope) > 1:
                    await session.websocket.send_json(["pong", envelope[1]])
                    continue
                send = _to_process(session, envelope)
                if send is None:
                    continue
                waiting[0] += len(message.data)
                if waiting[0] > INPUT_BACKLOG:
                    logging.getLogger("okstra-serve").warning("session ended: its process stopped reading its input")
                    return
                pending.put_nowait((send, len(message.data)))
        finally:
            feeder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await feeder

    async def _end_when_idle(self, session: Session, timeout: float) -> None:
        while True:
            left = session.last_input + timeout - time.monotonic()
            if left <= 0:
                break
            await asyncio.sleep(min(left, 5.0))
        with contextlib.suppress(Exception):
            ended = f"okstra workbench: session ended after {timeout:g} s without input; reload to start another."
            await session.websocket.send_bytes(f"\r\n{ended}\r\n".encode())
            await session.websocket.close(code=WSCloseCode.GOING_AWAY, message=b"idle")


def _to_process(session: Session, envelope: list[Any]) -> Callable[[], Awaitable[object]] | None:
    """What a browser message asks of the session's process (None: nothing); typing and resizing are input."""
    service = session.service
    kind = envelope[0]
    if kind == "stdin" and len(envelope) > 1 and isinstance(envelope[1], str):
        session.last_input = time.monotonic()
        data = envelope[1].encode("utf-8")
        return lambda: service.send_bytes(data)
    if kind == "resize" and len(envelope) > 1 and isinstance(envelope[1], dict):
        session.last_input = time.monotonic()
        width, height = terminal_size(envelope[1].get("width"), envelope[1].get("height"))
        return lambda: service.set_terminal_size(width, height)
    if kind == "blur":
        return service.blur
    if kind == "focus":
        return service.focus
    return None


async def end_process(service: AppService) -> None:
    """End a session's process: ask it to quit, then SIGTERM, then SIGKILL; always wait for it (reaped)."""
    process = service._process

    async def quit_and_wait() -> None:
        await service.stop()  # the quit message; returns once the process closed its output
        if process is not None:
            await process.wait()

    # Waited for without cancelling it: textual-serve's reader swallows a cancellation and goes on waiting for
    # the process, so a cancelled quit could hold this coroutine for as long as the process lives.
    quitting = asyncio.ensure_future(quit_and_wait())
    quitting.add_done_callback(lambda task: task.cancelled() or task.exception())
    await asyncio.wait({quitting}, timeout=QUIT_GRACE)
    if process is not None:
        for stop in (process.terminate, process.kill):
            if process.returncode is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                stop()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), QUIT_GRACE)
        if process.returncode is None:  # pragma: no cover - SIGKILL always ends a process
            print(f"okstra-tui: session process {process.pid} did not end", file=sys.stderr)
    if not quitting.done():  # the process is gone: its output has ended, and the quit with it
        await asyncio.wait({quitting}, timeout=QUIT_GRACE)
        quitting.cancel()


def serve(project: Path, options: ServeOptions) -> int:
    """Serve the workbench on *project* until interrupted; returns the exit status."""
    if options.read_only:
        from okstra_core.writes import enable_read_only

        enable_read_only()  # this process and, through the environment, every session's process
    warning = exposure_warning(options.host, options.port, token=options.token is not None, read_only=options.read_only)
    if warning is not None:
        print(warning, file=sys.stderr)
    server = WorkbenchServer(command_for(project, read_only=options.read_only), project, options)
    try:
        server.serve()
    except OSError as exc:  # the port is taken, the address is not this machine's, ...
        print(f"okstra-tui: cannot serve on {options.host}:{options.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0
