"""What changed under a project's ``.okstra/`` since a clock, asked of the user's watchman daemon.

The store index (:mod:`okstra_core.store_index`) keeps a watchman *clock* with
its facts; the next process asks watchman which files and folders under
``.okstra/`` changed since that clock and looks only at those. The daemon is
reached as Mercurial's fsmonitor and Jest reach it: ``watchman get-sockname``
starts it for the user when it is not running, and the project root is
watched with ``watch-project``.

An answer is trusted only when watchman can vouch that it saw every change
since the clock. Each of these means "cannot say" (``changed`` None: look at
every path):

* no clock kept yet, or a clock of another daemon (a *fresh instance*: the
  daemon restarted, the watch was dropped and made again);
* a recrawl since the clock (watchman lost events, after a kernel queue
  overflow for instance, and crawled the tree again): its warning counts the
  recrawls, and a count other than the one kept with the clock is not trusted;
* any other warning, an error, a timeout (every call is bounded by
  :data:`CALL_SECONDS`), a daemon that cannot be started or reached, an answer
  of an unexpected shape, or more than :data:`MAX_CHANGED` paths.

Without the ``watchman`` program or the ``pywatchman`` client the caller looks
at every path, as it does without watchman; ``OKSTRA_WATCHMAN=off`` turns
watchman off, ``on`` asks for it and says why when it cannot be used.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from . import layout

#: Environment variable: ``off`` turns watchman off; ``on`` asks for it (a failure is said); unset: used if there.
WATCHMAN_ENV: Final = "OKSTRA_WATCHMAN"
#: Every exchange with the daemon (starting it included) ends within this many seconds, or watchman is not used.
CALL_SECONDS: float = 3.0
#: An answer naming more paths than this is not used: looking at every path is as fast.
MAX_CHANGED: int = 20_000

Setting = Literal["off", "auto", "on"]

_RECRAWLED: Final = re.compile(r"Recrawled this watch (\d+) times?")
#: A clock no daemon ever gave: asking since it gets the current clock and a fresh-instance answer.
_NO_CLOCK: Final = "c:0:0"


class Unusable(Exception):
    """Watchman cannot answer (the reason, one line)."""


@dataclass(frozen=True)
class Since:
    """Watchman's answer for a project.

    *changed*: absolute paths of the files and folders under ``.okstra/`` that changed since the clock asked
    about (None: every path must be looked at). *token*: the clock to keep for the next question, taken before
    the caller reads anything (None: watchman could not be asked). *problem*: why watchman could not be asked.
    """

    changed: set[str] | None
    token: str | None
    problem: str | None = None


def setting(value: str | None = None) -> Setting:
    """The watchman setting from :data:`WATCHMAN_ENV` (or *value*)."""
    text = (os.environ.get(WATCHMAN_ENV, "") if value is None else value).strip().lower()
    if text in ("off", "0", "no", "false", "never"):
        return "off"
    if text in ("on", "1", "yes", "true", "always"):
        return "on"
    return "auto"


def installed() -> bool:
    """Whether watchman can be asked here: the ``pywatchman`` client imports and the daemon's socket is named or the
    ``watchman`` program is on the ``PATH`` (whether the daemon answers is known only once asked)."""
    import importlib.util

    if importlib.util.find_spec("pywatchman") is None:
        return False
    return bool(os.environ.get("WATCHMAN_SOCK")) or shutil.which("watchman") is not None


#: Why watchman is not asked about a store that is a symlink.
LINKED_STORE: Final = "the store is a symlink: watchman names its changes under the folder it leads to"


def changed_since(root: Path, token: str | None) -> Since:
    """What changed under *root*'s ``.okstra/`` since the clock in *token* (a :attr:`Since.token` kept from an
    earlier answer, or None), never raising. A store that is a symlink is not asked about (:data:`LINKED_STORE`):
    what changes in it is named under the real folder, which the answer's paths would never match."""
    if layout.store_is_link(root):
        return Since(None, None, LINKED_STORE)
    reused = _reusable()
    try:
        try:
            return _ask(root, token, _sockname(reuse=True))
        except Unusable:
            if not reused:
                raise
            # The daemon this process was told of went away: asking for its socket afresh starts it again.
            return _ask(root, token, _sockname())
    except Unusable as exc:
        return Since(None, None, str(exc))


def _ask(root: Path, token: str | None, sockpath: str) -> Since:
    try:
        import pywatchman
    except ImportError:
        raise Unusable("the pywatchman client is not installed") from None
    client = pywatchman.client(sockpath=sockpath, timeout=CALL_SECONDS)
    try:
        watched = _call(client, "watch-project", os.path.realpath(root))
        watch_root, relative = watched.get("watch"), watched.get("relative_path")
        if not isinstance(watch_root, str):
            raise Unusable("watchman gave no watch root")
        kept = _parse_token(token)
        clock = kept[0] if kept is not None and kept[2] == watch_root else _NO_CLOCK
        answer = _call(client, "query", watch_root, _query(clock, relative))
    finally:
        client.close()
    recrawls = _recrawls(answer)
    new_clock = answer.get("clock")
    if not isinstance(new_clock, str):
        raise Unusable("watchman gave no clock")
    new_token = json.dumps([new_clock, recrawls, watch_root])
    trusted = (
        kept is not None and kept[1] == recrawls and clock != _NO_CLOCK and answer.get("is_fresh_instance") is False
    )
    files = answer.get("files")
    if not trusted or not isinstance(files, list) or len(files) > MAX_CHANGED:
        return Since(None, new_token)
    base = os.fspath(root)
    changed = {os.path.join(base, name) for name in files if isinstance(name, str)}
    if len(changed) != len(files):
        return Since(None, new_token)
    return Since(changed, new_token)


#: The name of the subscription a :class:`Subscription` makes (one per connection: each watcher has its own).
SUBSCRIPTION: Final = "okstra-store"


class Subscription:
    """The changes under one project's ``.okstra/`` as the user's watchman daemon sends them: file events for a
    long-running watcher that keeps no watch of its own (the daemon's are shared by every process asking).

    Made connected and subscribed (or raising :class:`Unusable`). :meth:`take` waits for the daemon's next
    word: the paths it names, or None for "look at everything" (a fresh instance, a recrawl, a canceled
    watch). A daemon that dies or cannot be reached raises :class:`Unusable`; the caller looks at everything
    and subscribes again.
    """

    def __init__(self, root: Path, wait_seconds: float, *, start: bool = False) -> None:
        """*start*: ask for the daemon's socket afresh (``get-sockname`` starts a daemon that went away); else the
        socket this process was last told is reused, so that a process watching many stores asks once."""
        try:
            import pywatchman
        except ImportError:
            raise Unusable("the pywatchman client is not installed") from None
        self.root = root
        self._base = os.fspath(root)
        reused = not start and _reusable()
        try:
            self._subscribe(pywatchman, _sockname(reuse=not start), wait_seconds)
        except Unusable:
            if not reused:
                raise
            self._subscribe(pywatchman, _sockname(), wait_seconds)  # the daemon went away: start it again

    def _subscribe(self, pywatchman: Any, sockpath: str, wait_seconds: float) -> None:
        self._client = pywatchman.client(sockpath=sockpath, timeout=CALL_SECONDS)
        try:
            watched = _call(self._client, "watch-project", os.path.realpath(self.root))
            watch_root, relative = watched.get("watch"), watched.get("relative_path")
            if not isinstance(watch_root, str):
                raise Unusable("watchman gave no watch root")
            # Subscribed since the clock of now (synced: every change made before this call is in it), so that a
            # change made before the daemon's first word is in that word, not taken for the store as it was.
            clock = _call(self._client, "clock", watch_root, {"sync_timeout": int(CALL_SECONDS * 1000 * 2 / 3)})
            if not isinstance(clock.get("clock"), str):
                raise Unusable("watchman gave no clock")
            query = _query(clock["clock"], relative)
            del query["sync_timeout"]
            query["defer_vcs"] = False  # a store changes while git works in the checkout: say so at once
            _call(self._client, "subscribe", watch_root, SUBSCRIPTION, query)
            self._client.setTimeout(wait_seconds)
        except BaseException:
            self.close()
            raise
        #: The daemon's count of recrawls of the watch when subscribed (-1: a warning of another kind).
        self._recrawls = _recrawls(clock)

    def take(self) -> tuple[bool, set[str] | None]:
        """Wait at most the wait given for what the daemon says: (False, set()) when it said nothing, else (True,
        the absolute paths that changed, or None: look at everything)."""
        import pywatchman

        try:
            pdu = self._client.receive()
        except pywatchman.SocketTimeout:
            return False, set()
        except (pywatchman.WatchmanError, OSError, ValueError) as exc:
            raise Unusable(f"watchman subscription: {_one_line(exc)}") from None
        if not isinstance(pdu, dict) or pdu.get("subscription") != SUBSCRIPTION:
            return False, set()  # a log line or another unilateral word: nothing about the store
        self._client.getSubscription(SUBSCRIPTION)  # what receive() kept of it: not kept growing
        if pdu.get("canceled"):
            raise Unusable("watchman canceled the subscription (the watch was removed)")
        if "state-enter" in pdu or "state-leave" in pdu:
            return False, set()  # another client's state (a version control operation): no file named
        files = pdu.get("files")
        recrawls, self._recrawls = self._recrawls, _recrawls(pdu)
        if pdu.get("is_fresh_instance") or recrawls != self._recrawls or self._recrawls < 0:
            return True, None  # the daemon lost track (restarted, recrawled after losing events): everything
        if not isinstance(files, list):
            return True, None
        if not files:
            return False, set()  # the first word when nothing changed since subscribing
        changed = {os.path.join(self._base, name) for name in files if isinstance(name, str)}
        return True, (changed if len(changed) == len(files) else None)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()


def _query(clock: str, relative: object) -> dict[str, Any]:
    """The since-query for the files and folders of ``.okstra/`` (and the folder itself), named from the root."""
    query: dict[str, Any] = {
        "since": clock,
        "fields": ["name"],
        "empty_on_fresh_instance": True,
        "sync_timeout": int(CALL_SECONDS * 1000 * 2 / 3),
        "expression": ["anyof", ["dirname", layout.OKSTRA_DIR], ["name", layout.OKSTRA_DIR, "wholename"]],
    }
    if isinstance(relative, str) and relative:
        query["relative_root"] = relative
    return query


def _recrawls(answer: dict[str, Any]) -> int:
    """How many times watchman recrawled the watch (its warning counts them); any other warning is not trusted."""
    warning = answer.get("warning")
    if warning is None:
        return 0
    found = _RECRAWLED.search(str(warning))
    return int(found.group(1)) if found else -1


def _parse_token(token: str | None) -> tuple[str, int, str] | None:
    if token is None:
        return None
    try:
        clock, recrawls, watch_root = json.loads(token)
    except (ValueError, TypeError):
        return None
    if not (isinstance(clock, str) and isinstance(recrawls, int) and isinstance(watch_root, str)) or recrawls < 0:
        return None
    return clock, recrawls, watch_root


def _call(client: Any, *command: object) -> dict[str, Any]:
    import pywatchman

    try:
        answer = client.query(*command)
    except (pywatchman.WatchmanError, OSError, ValueError) as exc:
        raise Unusable(f"watchman {command[0]}: {_one_line(exc)}") from None
    if not isinstance(answer, dict):
        raise Unusable(f"watchman {command[0]}: an answer of an unexpected shape")
    return answer


#: The socket ``get-sockname`` last gave, by the ``watchman`` program asked.
_SOCKETS: dict[str, str] = {}


def _reusable() -> bool:
    """Whether :func:`_sockname` would answer with a socket told before (not asking ``get-sockname``)."""
    if os.environ.get("WATCHMAN_SOCK"):
        return False
    program = shutil.which("watchman")
    return program is not None and program in _SOCKETS


def _sockname(*, reuse: bool = False) -> str:
    """The daemon's socket (``WATCHMAN_SOCK`` when set, else from ``watchman get-sockname``, which starts the
    daemon when it is not running); *reuse*: the socket the same program gave this process before, if any."""
    path = os.environ.get("WATCHMAN_SOCK")
    if path:
        return path
    program = shutil.which("watchman")
    if program is None:
        raise Unusable("watchman is not installed (no watchman on PATH)")
    if reuse and program in _SOCKETS:
        return _SOCKETS[program]
    try:
        done = subprocess.run(
            [program, "--output-encoding=json", "--no-pretty", "get-sockname"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=CALL_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise Unusable(f"watchman get-sockname took more than {CALL_SECONDS:g} s") from None
    except OSError as exc:
        raise Unusable(f"cannot run {program}: {exc.strerror or exc}") from None
    try:
        found = json.loads(done.stdout)
    except ValueError:
        found = None
    if done.returncode != 0 or not isinstance(found, dict) or not isinstance(found.get("sockname"), str):
        detail = done.stderr.decode("utf-8", "replace") or done.stdout.decode("utf-8", "replace")
        raise Unusable(f"watchman get-sockname failed: {_one_line(detail) or f'exit {done.returncode}'}")
    _SOCKETS[program] = str(found["sockname"])
    return _SOCKETS[program]


def _one_line(value: object) -> str:
    text = " ".join(str(value).split())
    return text[:200]
