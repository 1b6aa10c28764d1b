"""Helpers for driving the workbench with Pilot over demo projects."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from okstra_core.store import Project
from okstra_tui.app import OkstraApp

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


async def settle(pilot: Pilot[None]) -> None:
    """Let workers finish and their results paint."""
    from textual.worker import WorkerCancelled

    for _ in range(3):
        # An exclusive worker replaced by a newer one ends cancelled.
        with contextlib.suppress(WorkerCancelled):
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()


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
