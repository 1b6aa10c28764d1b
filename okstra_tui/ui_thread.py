"""Handing a worker thread's result to the UI thread, typed end to end."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec

from textual.app import App

P = ParamSpec("P")


def call_ui(app: App[Any], callback: Callable[P, Awaitable[None] | None], *args: P.args, **kwargs: P.kwargs) -> None:
    """Run *callback* (plain or async) on the UI thread and wait until it has finished.

    ``App.call_from_thread`` accepts both kinds, but its signature leaves an
    async callback's result type unsolvable for a type checker; this wrapper
    pins it to ``None`` and checks the arguments against the callback.
    """
    target: Callable[..., Awaitable[None] | None] = callback
    app.call_from_thread(target, *args, **kwargs)
