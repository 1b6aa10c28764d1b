"""The write log view (W): the workbench's writes, newest first, their files and command lines; y, Enter."""

from __future__ import annotations

import datetime as dt
import os
import shlex
from pathlib import Path

from textual.widgets import Static

from okstra_core import write_log
from okstra_core.store import Project
from okstra_core.workflows.inbox import pending_decisions
from okstra_core.write_log import Input, Verb
from okstra_tui.screens.file import FileScreen
from okstra_tui.screens.write_log import WriteLogScreen
from okstra_tui.screenshots import settle

from .conftest import SIZE, make_app, open_view, plain, wait_until
from .test_wizards import decision, next_step, wizard_on

MOMENT = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC)


def _logged(root: Path) -> tuple[write_log.Entry, write_log.Entry]:
    manifest = root / ".okstra/tasks/checkout/fraud-rules/task-manifest.json"
    first = write_log.record(
        root, MOMENT, "selected IO-002", "checkout/fraud-rules", [manifest], [Verb(("planning", "prepare"))]
    )
    verb = Verb(("design-prep", "confirm"), (("--task", "checkout/fraud-rules"),), (Input("--input", ".md", "x\n"),))
    second = write_log.record(
        root, MOMENT + dt.timedelta(minutes=5), "confirmed\x1b[2J PREP-001", "checkout/fraud-rules", [manifest], [verb]
    )
    return first, second


async def test_the_write_log_lists_the_writes_newest_first_and_copies_their_commands(fresh_demo: Path) -> None:
    first, second = _logged(fresh_demo)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "W", WriteLogScreen)
        await wait_until(pilot, lambda: screen.entries is not None, "the log read")
        assert screen.table.rows == [second, first]
        detail = plain(screen.query_one("#wlog-lines", Static))
        assert "\x1b" not in detail and "confirmed␛[2J PREP-001" in detail, "store-bound text is shown inert"
        assert "$ okstra design-prep confirm . --task checkout/fraud-rules --input …/inputs/" in detail
        assert "wrote .okstra/tasks/checkout/fraud-rules/task-manifest.json" in detail
        await pilot.press("y")
        await settle(pilot)
        copied = shlex.split(app.clipboard)
        assert copied == list(second.commands[0]) and copied[3] == os.path.realpath(fresh_demo)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, FileScreen)


async def test_an_empty_log_says_where_writes_appear(fresh_demo: Path) -> None:
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "W", WriteLogScreen)
        await wait_until(pilot, lambda: screen.entries is not None, "the log read")
        assert "0 writes logged" in plain(screen.query_one("#wlog-summary"))


async def test_a_write_whose_log_cannot_be_written_still_stands_and_says_so(fresh_demo: Path) -> None:
    os.makedirs(write_log.log_path(fresh_demo))  # a folder where the log should be: refused even as root
    wanted = decision(fresh_demo, "planning-prepare")
    async with wizard_on(fresh_demo, wanted) as (pilot, wizard):
        await next_step(pilot)
        assert wizard.step.FINAL and wizard.written is not None
        warnings = [n.message for n in pilot.app._notifications if n.severity == "warning"]
        assert any("log.jsonl" in m and "cannot be written" in m for m in warnings), warnings
    assert not [
        d for d in pending_decisions(Project(fresh_demo)) if d.kind == "planning-prepare" and d.task == wanted.task
    ]


async def test_a_logged_file_outside_the_store_is_never_opened(fresh_demo: Path) -> None:
    outside = fresh_demo.parent / "secret.txt"
    outside.write_text("not the store's\n", encoding="utf-8")
    write_log.record(fresh_demo, MOMENT, "odd", "checkout/fraud-rules", [outside], [Verb(("planning", "prepare"))])
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "W", WriteLogScreen)
        await wait_until(pilot, lambda: screen.entries is not None, "the log read")
        assert screen.table.rows and screen.table.rows[0].files == (str(outside),)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen, "nothing outside .okstra/ is opened"


async def test_a_log_that_is_a_folder_is_named_in_one_line(fresh_demo: Path) -> None:
    path = write_log.log_path(fresh_demo)
    os.makedirs(path)  # refused even as root
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "W", WriteLogScreen)
        summary = screen.query_one("#wlog-summary")
        await wait_until(pilot, lambda: "not a regular file" in plain(summary), "the log's refusal shown")
        assert plain(summary).strip() == f"{path}: is a directory, not a regular file"
        assert app.is_running
