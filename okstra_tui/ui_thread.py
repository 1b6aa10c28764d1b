"""Handing a worker thread's result to the UI thread, typed end to end."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec

from textual.app import App
from textual.worker import NoActiveWorker, Worker, get_current_worker

P = ParamSpec("P")


def call_ui(app: App[Any], callback: Callable[P, Awaitable[None] | None], *args: P.args, **kwargs: P.kwargs) -> None:
    """Run *callback* (plain or async) on the UI thread and wait until it has finished.

    Called from a worker that has been cancelled by the time the UI thread
    gets to it, the callback is dropped: an exclusive worker is cancelled when
    a newer one of its group starts, and a thread cannot be stopped, so
    without this check a slow reading started before a change could land
    after the reading that saw the change and put the old state back on
    screen. The check runs on the UI thread, where workers are started and
    cancelled, so a result is either dropped or shown before the newer
    worker's.

    ``App.call_from_thread`` accepts both kinds, but its signature leaves an
    async callback's result type unsolvable for a type checker; this wrapper
    pins it to ``None`` and checks the arguments against the callback.
    """
    try:
        worker: Worker[Any] | None = get_current_worker()
    except NoActiveWorker:
        worker = None

    def unless_superseded() -> Awaitable[None] | None:
        if worker is not None and worker.is_cancelled:
            return None
        return callback(*args, **kwargs)

    app.call_from_thread(unless_superseded)
