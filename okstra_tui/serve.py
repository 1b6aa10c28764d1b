"""``okstra-tui PROJECT --serve``: the workbench in a web browser, through textual-serve.

Each browser tab that opens the page starts its own workbench process on the
project, drawn in the page by xterm.js. The server binds to 127.0.0.1 unless
``--host`` names another address; it then warns that whoever can reach the
port can use the workbench, writes included. Requests naming another host
than the one served (a page on another site that resolves its name to this
machine: DNS rebinding) and websockets opened from another origin are refused.
"""

from __future__ import annotations

import ipaddress
import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def is_loopback(host: str) -> bool:
    """Whether *host* only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, port: int) -> str | None:
    """The warning printed when the workbench is served beyond this machine, or None for a loopback address."""
    if is_loopback(host):
        return None
    return (
        f"okstra-tui: warning: serving on {host}:{port}: whoever can reach this port can use the workbench, "
        "including its writes (responses, confirmations) to the project's store"
    )


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """Host headers accepted when bound to a loopback address (None: any, for a deliberately exposed server)."""
    if not is_loopback(host):
        return None
    names = {"localhost", "127.0.0.1", "[::1]"}
    if ":" in host and not host.startswith("["):
        names.add(f"[{host}]")
    else:
        names.add(host.lower())
    return frozenset({*(f"{n}:{port}" for n in names), *(names if port == 80 else ())})


def command_for(project: Path) -> str:
    """The shell command textual-serve runs for each browser session: this interpreter's workbench on *project*."""
    return f"{shlex.quote(sys.executable)} -m okstra_tui {shlex.quote(str(project))}"


def serve(project: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> int:
    """Serve the workbench on *project* until interrupted; returns the exit status."""
    try:
        from aiohttp import web
        from textual_serve.server import Server
    except ImportError as exc:
        print(
            f"okstra-tui: --serve needs textual-serve ({exc.name} is missing): pip install 'okstra-workbench[serve]'",
            file=sys.stderr,
        )
        return 2
    warning = exposure_warning(host, port)
    if warning is not None:
        print(warning, file=sys.stderr)
    accepted = allowed_hosts(host, port)
    Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if accepted is not None and request.host.lower() not in accepted:
            raise web.HTTPForbidden(text="okstra workbench: this server answers only to its own address\n")
        origin = request.headers.get("Origin")
        if request.path == "/ws" and origin is not None and urlsplit(origin).netloc.lower() != request.host.lower():
            raise web.HTTPForbidden(text="okstra workbench: websocket from another origin\n")
        return await handler(request)

    class WorkbenchServer(Server):
        async def _make_app(self) -> web.Application:
            app: web.Application = await super()._make_app()
            app.middlewares.append(guard)
            return app

        async def handle_index(self, request: web.Request) -> Any:
            # The page's links and websocket follow the address the browser used (an exposed server is
            # reached by a name other than the address it binds); the guard has vetted that address.
            self.public_url = f"{request.scheme}://{request.host}"
            return await super().handle_index(request)

    server = WorkbenchServer(command_for(project), host=host, port=port, title=f"okstra {project.name}")
    try:
        server.serve()
    except OSError as exc:  # the port is taken, the address is not this machine's, ...
        print(f"okstra-tui: cannot serve on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0
