"""``okstra-tui PROJECT --serve``: the workbench in a web browser, through textual-serve.

Each browser tab that opens the page starts its own workbench process on the
project, drawn in the page by xterm.js (:mod:`okstra_tui.serve_server`). This
module holds what is decided before the server starts: the address and its
exposure, the token (generated, from ``--token-file`` or from
``OKSTRA_SERVE_TOKEN``), the cookie that stands for it, and the startup lines.

A token is required by default, as in Jupyter: the page, its assets and the
websocket need the token (``?token=…``) or the cookie its first use sets.
``--no-token`` is accepted only on a loopback address. Requests naming another
host than the one served (DNS rebinding) and websockets opened from another
origin are refused.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
import shlex
import socket
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from okstra_core.text import visible

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 8
#: The environment variable that can hold a fixed token (removed from the environment once read).
TOKEN_ENV = "OKSTRA_SERVE_TOKEN"
#: Bytes of randomness in a generated token (256 bits; at least 128 are required).
TOKEN_BYTES = 32
#: A fixed token shorter than this is refused: it could be guessed.
MIN_TOKEN_CHARS = 16
#: A token file larger than this is not a token.
MAX_TOKEN_FILE = 4096
#: A session's terminal is at most this many columns and rows, whatever the browser asks for: a larger one
#: costs the workbench memory in proportion (100000x100000 grew a session to 19.5 GB).
MAX_COLUMNS = 500
MAX_ROWS = 200
#: Memory a session's process (and the readings it starts) may allocate, in MiB (``ulimit -d``, RLIMIT_DATA):
#: a workbench on a large store uses a few hundred; past the limit an allocation fails and the session ends.
SESSION_MEMORY_MIB = 2048


class ServeRefused(Exception):
    """A serving option that cannot be honoured; the message is one line."""


@dataclass(frozen=True)
class Token:
    """The secret that opens the workbench, and where it came from (``generated``, a file, the environment)."""

    value: str
    source: str

    @property
    def generated(self) -> bool:
        return self.source == "generated"


@dataclass(frozen=True)
class ServeOptions:
    """How the workbench is served."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: Token | None = None
    read_only: bool = False
    max_sessions: int = DEFAULT_MAX_SESSIONS
    #: Seconds without input after which a session is ended (None: never).
    idle_timeout: float | None = None
    #: More names the ``Host`` header may give on a loopback address (a reverse proxy's public name).
    extra_hosts: tuple[str, ...] = ()


def is_loopback(host: str) -> bool:
    """Whether *host* only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, port: int, *, token: bool = True, read_only: bool = False) -> str | None:
    """The warning printed when the workbench is reachable by others, or None when it is not."""
    writes = "" if read_only else ", including its writes (responses, confirmations) to the project's store"
    if not token:
        # --no-token is only accepted on a loopback address.
        return (
            f"okstra-tui: warning: serving on {host}:{port} without a token: every user of this machine "
            f"can use the workbench{writes}"
        )
    if is_loopback(host):
        return None
    return (
        f"okstra-tui: warning: serving on {host}:{port}: whoever can reach this port and holds the token "
        f"can use the workbench{writes}; put TLS in front of it (see docs/serve.md)"
    )


def allowed_hosts(host: str, port: int, extra: tuple[str, ...] = ()) -> frozenset[str] | None:
    """Host headers accepted when bound to a loopback address (None: any, for a deliberately exposed server).

    *extra* are names a reverse proxy passes on (``--allow-host``), accepted as given.
    """
    if not is_loopback(host):
        return None
    names = {"localhost", "127.0.0.1", "[::1]"}
    if ":" in host and not host.startswith("["):
        names.add(f"[{host}]")
    else:
        names.add(host.lower())
    given = {name.lower() for name in extra}
    return frozenset({*(f"{n}:{port}" for n in names), *(names if port == 80 else ()), *given})


def command_for(project: Path, *, read_only: bool = False) -> str:
    """The shell command textual-serve runs for each browser session: this interpreter's workbench on *project*.

    ``exec`` makes the shell become the workbench, so ending the session's process ends the workbench itself;
    its memory is bounded first (:func:`bounded`).
    """
    command = f"exec {shlex.quote(sys.executable)} -m okstra_tui {shlex.quote(str(project))}"
    return bounded(command + " --read-only" if read_only else command)


def bounded(command: str) -> str:
    """*command* (a shell command) run with its data memory bounded to :data:`SESSION_MEMORY_MIB`.

    It sets the soft limit: where the hard limit is lower already, ``ulimit`` fails and the hard one holds.
    """
    return f"ulimit -S -d {SESSION_MEMORY_MIB * 1024} 2>/dev/null; {command}"


def terminal_size(width: object, height: object) -> tuple[int, int]:
    """The columns and rows a browser asked for (text, a number, anything) as a session's terminal size:
    80x24 for what is not a whole number, else bounded to 1..:data:`MAX_COLUMNS` and 1..:data:`MAX_ROWS`."""

    def whole(value: object, default: int, most: int) -> int:
        try:
            number = int(str(value), 10)
        except ValueError:
            return default
        return max(1, min(number, most))

    return whole(width, 80, MAX_COLUMNS), whole(height, 24, MAX_ROWS)


# ------------------------------------------------------------------- tokens


def new_token() -> Token:
    """A fresh random token from :mod:`secrets` (URL-safe, 256 bits)."""
    return Token(secrets.token_urlsafe(TOKEN_BYTES), "generated")


def _checked(value: str, where: str) -> str:
    value = value.strip()
    if not value:
        raise ServeRefused(f"{where}: the token is empty")
    if any(not (0x21 <= ord(c) <= 0x7E) for c in value):
        raise ServeRefused(f"{where}: the token must be printable ASCII without spaces")
    if len(value) < MIN_TOKEN_CHARS:
        raise ServeRefused(f"{where}: the token is too short (at least {MIN_TOKEN_CHARS} characters)")
    return value


def read_token_file(path: Path) -> Token:
    """The token held by *path*; refused when the file is readable or writable by group or others."""
    where = visible(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise ServeRefused(f"{where}: cannot open the token file: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ServeRefused(f"{where}: the token file is not a regular file")
        if st.st_mode & 0o077:
            raise ServeRefused(
                f"{where}: the token file is open to group or others (mode {stat.S_IMODE(st.st_mode):04o}); "
                f"chmod 600 it"
            )
        data = os.read(fd, MAX_TOKEN_FILE + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_TOKEN_FILE:
        raise ServeRefused(f"{where}: the token file is larger than {MAX_TOKEN_FILE} bytes")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise ServeRefused(f"{where}: the token must be printable ASCII without spaces") from None
    return Token(_checked(text, where), f"--token-file {where}")


def token_from_environment() -> Token | None:
    """The token in ``OKSTRA_SERVE_TOKEN``, taken out of the environment so no session process inherits it."""
    value = os.environ.pop(TOKEN_ENV, None)
    if value is None:
        return None
    return Token(_checked(value, TOKEN_ENV), TOKEN_ENV)


def choose_token(token_file: Path | None, no_token: bool, host: str) -> Token | None:
    """The token the server requires (None with ``--no-token``), or :class:`ServeRefused`."""
    from_env = token_from_environment()
    if no_token:
        if token_file is not None or from_env is not None:
            raise ServeRefused(f"--no-token cannot go with --token-file or {TOKEN_ENV}")
        if not is_loopback(host):
            raise ServeRefused(
                f"--no-token is only accepted on a loopback address (127.0.0.1, ::1, localhost), not {visible(host)}"
            )
        return None
    if token_file is not None:
        return read_token_file(token_file)
    return from_env or new_token()


def cookie_name(port: int) -> str:
    """The cookie's name; it names the port, since browsers share cookies between ports of one host."""
    return f"okstra-serve-{port}"


def cookie_value(token: str) -> str:
    """What the cookie holds: a digest of the token (the cookie never carries the token itself)."""
    return hmac.new(token.encode("ascii"), b"okstra-serve-cookie", hashlib.sha256).hexdigest()


def same_secret(given: str, expected: str) -> bool:
    """Whether *given* is *expected*, compared in constant time (any text, never an exception)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8"))


# ------------------------------------------------------------------ startup


def url_host(host: str) -> str:
    """The host part of the URL to open: this machine's name for a wildcard address, brackets for IPv6."""
    if host in ("0.0.0.0", "::", ""):
        return socket.gethostname()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def startup_lines(project: Path, options: ServeOptions) -> list[str]:
    """What the server prints once it listens: the address, the token rule, whether writes are possible."""
    base = f"http://{url_host(options.host)}:{options.port}/"
    token = options.token
    access = "token required" if token is not None else "no token (--no-token)"
    writes = "read-only: writes refused" if options.read_only else "writes possible"
    lines = [
        f"okstra-tui: serving {visible(str(project))} on {options.host}:{options.port} · {access} · {writes} · "
        f"at most {options.max_sessions} sessions",
    ]
    bases = [base]
    if options.host in ("0.0.0.0", "::"):  # a wildcard address: this machine's own address works too
        bases.append(
            f"http://127.0.0.1:{options.port}/" if options.host == "0.0.0.0" else f"http://[::1]:{options.port}/"
        )
    for i, address in enumerate(bases):
        prefix = "open" if i == 0 else "  or"
        if token is None:
            lines.append(f"{prefix} {address}")
        elif token.generated:
            lines.append(f"{prefix} {address}?token={quote(token.value, safe='')}")
        else:
            lines.append(f"{prefix} {address}?token=… (the token from {token.source})")
    lines.append("Ctrl+C stops the server")
    return lines
