"""Helpers for driving the workbench with Pilot over demo projects."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from textual.pilot import Pilot
from textual.screen import Screen

from okstra_core.store import Project
from okstra_tui.app import OkstraApp
from okstra_tui.screenshots import settle

SIZE = (120, 40)


@pytest.fixture
def demo_home(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the manager home at the demo's own (read-only use)."""
    home = demo_root / ".okstra-home"
    monkeypatch.setenv("OKSTRA_HOME", str(home))
    return home


def make_app(root: Path) -> OkstraApp:
    project = Project.open(root)
    assert isinstance(project, Project), project
    return OkstraApp(project)


#: How long a test waits for the app to reach a state before it fails. Generous on purpose: only a state that
#: never comes should fail a test, never a slow or loaded machine (CI runs on 2 shared cores).
WAIT_SECONDS = float(os.environ.get("OKSTRA_TEST_WAIT", "120"))


S = TypeVar("S", bound=Screen[Any])


async def open_view(pilot: Pilot[None], key: str, kind: type[S]) -> S:
    """Settle, press *key*, settle: the screen it opened, which must be a *kind*."""
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, kind), screen
    return screen


async def wait_until(pilot: Pilot[None], predicate: Callable[[], object], what: str) -> None:
    """Let the app run until *predicate* holds; fail naming *what* after :data:`WAIT_SECONDS`.

    Between two looks the app handles what is pending (worker results, live-refresh polls); workers are not
    waited for, so a worker the test holds back does not hold the wait.
    """
    deadline = time.monotonic() + WAIT_SECONDS
    while not predicate():
        assert time.monotonic() < deadline, f"still not the case after {WAIT_SECONDS:.0f} s: {what}"
        await pilot.pause(0.1)


def task_roots(root: Path) -> Iterator[Path]:
    project = Project.open(root)
    assert isinstance(project, Project)
    for ref in project.task_refs:
        yield ref.root


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run this folder's ``async def`` tests in a fresh event loop (no asyncio plugin needed)."""
    import asyncio
    import functools
    import inspect

    for item in items:
        if not isinstance(item, pytest.Function) or "tests/tui" not in str(item.path).replace("\\", "/"):
            continue
        fn = item.obj
        if inspect.iscoroutinefunction(fn):

            def make(f):  # type: ignore[no-untyped-def]
                @functools.wraps(f)
                def sync(*args, **kwargs):  # type: ignore[no-untyped-def]
                    return asyncio.run(f(*args, **kwargs))

                return sync

            item.obj = make(fn)


def plain(widget: object) -> str:
    """The text a ``Static`` shows, rendered without styles."""
    import io

    from rich.console import Console

    content = getattr(widget, "content", widget)
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(content)
    return console.file.getvalue()  # type: ignore[attr-defined]
