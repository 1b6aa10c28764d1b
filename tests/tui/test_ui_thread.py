"""A worker's result reaches the UI thread only while no newer worker of its exclusive group has started."""

from __future__ import annotations

import threading

from textual import work
from textual.app import App

from okstra_tui.screenshots import workers_done
from okstra_tui.ui_thread import call_ui

from .conftest import WAIT_SECONDS, wait_until


class Reader(App[None]):
    """Readings of one exclusive group; a held one waits for ``hold`` before it hands its result over."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []
        self.holding = threading.Event()
        self.hold = threading.Event()
        self.handed_over = threading.Event()

    @work(thread=True, exclusive=True, group="read")
    def read(self, what: str, held: bool) -> None:
        if held:
            self.holding.set()
            self.hold.wait(WAIT_SECONDS)
        call_ui(self, self.shown.append, what)
        if held:
            self.handed_over.set()


async def test_a_superseded_reading_is_dropped() -> None:
    app = Reader()
    async with app.run_test() as pilot:
        app.read("old state", True)
        await wait_until(pilot, app.holding.is_set, "the old reading is under way")
        app.read("new state", False)  # cancels the first one; its thread runs on
        await workers_done(app)
        assert app.shown == ["new state"]
        app.hold.set()  # the old reading ends after the new one was shown
        await wait_until(pilot, app.handed_over.is_set, "the old reading has handed its result over")
    assert app.shown == ["new state"], "the old state never comes back over the new one"


async def test_a_current_reading_is_shown() -> None:
    app = Reader()
    async with app.run_test():
        app.read("state", False)
        await workers_done(app)
    assert app.shown == ["state"]


def test_every_worker_is_described_by_its_name_not_by_its_arguments() -> None:
    """Textual describes a worker without a description by the ``repr`` of its arguments, made on the UI's thread
    as the worker starts: every row of a large catalog (60 ms at 10,000 tasks, on each count of what waits)."""
    import ast
    from pathlib import Path

    import okstra_tui

    undescribed = []
    for source in sorted(Path(okstra_tui.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                if (
                    isinstance(decorator, ast.Call)
                    and isinstance(decorator.func, ast.Name)
                    and decorator.func.id == "work"
                    and not any(k.arg == "description" for k in decorator.keywords)
                ):
                    undescribed.append(f"{source.name}:{node.lineno} {node.name}")
    assert undescribed == []
