"""``okstra-tui --read-only``: every wizard walks to its write step and writes nothing; writing keys are disabled.

The guard is the core's (``okstra_core.writes``); the workbench says so: a
READ-ONLY badge on every view and wizard, the write step's button disabled
with the reason, the editor key and its palette entry disabled with the reason.
Each wizard's own write, called directly, is refused by the core as well.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Static

from okstra_core import read_only as guard
from okstra_core import writes
from okstra_core.errors import ReadOnly
from okstra_core.store import Project
from okstra_core.workflows.inbox import PendingDecision, pending_decisions
from okstra_tui.app import OkstraApp
from okstra_tui.screens.base import Breadcrumbs
from okstra_tui.screens.decisions import wizard_for_decision
from okstra_tui.screens.help import help_rows
from okstra_tui.screens.wizard import WizardScreen
from okstra_tui.screens.wizard_design import FieldStep
from okstra_tui.screens.wizard_direction import ChooseStep
from okstra_tui.screens.wizard_steps import QuestionStep
from okstra_tui.screenshots import settle
from okstra_tui.widgets.read_only import REASON
from okstra_tui.widgets.text_lines import TextLines

from .conftest import SIZE, make_app, plain
from .test_wizards import answer_question, error_line, next_step, tree, verb


@pytest.fixture
def read_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The guard on for this test only (the product can only switch it on, for good)."""
    monkeypatch.setattr(guard, "_read_only", True)
    monkeypatch.setenv(writes.READ_ONLY_ENV, "1")
    yield


def _attach_pending(root: Path) -> None:
    """Answer the demo's clarification with the verb, so an attach decision (the Attach wizard) waits too."""
    wanted = next(d for d in pending_decisions(Project(root)) if d.kind == "clarification")
    answers = root.parent / "answers.json"
    answers.write_text(json.dumps({}), encoding="utf-8")
    report = Path(wanted.report_path or "").relative_to(root).as_posix()
    verb("user-response", "export", str(root), "--task", wanted.task, "--report", report, "--answers", str(answers))


async def _to_write_step(pilot: Pilot[None], wanted: PendingDecision) -> WizardScreen:
    """Open the decision's wizard (as the inbox and the palette do) and fill every step up to the write."""
    app = pilot.app
    assert isinstance(app, OkstraApp)
    await settle(pilot)
    app.open_decision(wanted)
    await settle(pilot)
    wizard = app.screen
    assert isinstance(wizard, WizardScreen)
    while not wizard.step.WRITES:
        step = wizard.step
        if isinstance(step, ChooseStep):
            step.choose(step.oc.candidates[0].option_id)
        elif isinstance(step, QuestionStep):
            await answer_question(pilot, step, {})
        elif isinstance(step, FieldStep):
            await pilot.press(*"an answer")
        await next_step(pilot)
    return wizard


async def test_every_wizard_walks_to_its_write_step_and_writes_nothing(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decisions = pending_decisions(Project(fresh_demo))
    _attach_pending(fresh_demo)
    decisions += [d for d in pending_decisions(Project(fresh_demo)) if d.detail == "attach-pending"]
    monkeypatch.setattr(guard, "_read_only", True)
    monkeypatch.setenv(writes.READ_ONLY_ENV, "1")
    before = tree(fresh_demo)
    walked: set[str] = set()
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        for wanted in decisions:
            if isinstance(wizard_for_decision(fresh_demo, wanted), str):
                assert wanted.kind == "approval", wanted  # the workbench writes no approval
                continue
            wizard = await _to_write_step(pilot, wanted)
            walked.add(type(wizard).__name__)
            assert "READ-ONLY" in plain(wizard.query_one("#wiz-subject", Static))
            assert "read-only" in error_line(wizard)
            assert wizard.query_one("#review-bytes", TextLines).text.strip(), "the review shows the bytes"
            write = wizard.query_one("#wiz-next", Button)
            assert write.disabled and "Read-only" in str(write.label)
            step = wizard.step
            await pilot.press("ctrl+n")
            await settle(pilot)
            await pilot.click("#wiz-next")
            await settle(pilot)
            assert wizard.step is step and wizard.written is None and "read-only" in error_line(wizard)
            with pytest.raises(ReadOnly):  # the core refuses the wizard's own write too
                wizard.write(dict(wizard.values))
            await pilot.press("escape")
            await settle(pilot)
            assert not isinstance(app.screen, WizardScreen)
            assert tree(fresh_demo) == before, f"{type(wizard).__name__} changed the store"
    assert walked == {"DirectionWizard", "PrepareWizard", "ClarificationWizard", "AttachWizard", "DesignPrepWizard"}
    assert tree(fresh_demo) == before


async def test_writing_keys_are_disabled_with_the_reason(
    demo_root: Path, read_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    ran: list[object] = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: ran.append(a))
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        line = app.screen.query_one(Breadcrumbs).line(120)
        assert line.plain.startswith(" READ-ONLY ")
        assert app.check_action("editor", ()) is None
        rows = {row.shown: row.description for row in help_rows(app.screen)}
        assert rows["e"].endswith(f"(disabled: {REASON})")
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        editor = next(title for title in commands if title.startswith("Open in $EDITOR"))
        assert editor.endswith(f"(disabled: {REASON})")
        assert all(t.endswith("(read-only: review only)") for t in commands if t.startswith("Decide:"))
        assert f"Screenshot (disabled: {REASON})" in commands, "Textual's screenshot would save a file"
        await pilot.press("e")
        await settle(pilot)
        commands[editor].callback()
        await settle(pilot)
        assert ran == [], "no editor is started"


async def test_no_badge_when_writes_are_possible(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(writes.READ_ONLY_ENV, raising=False)
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "READ-ONLY" not in app.screen.query_one(Breadcrumbs).line(120).plain
        assert app.check_action("editor", ()) is True
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Screenshot" in titles and not any("disabled" in t for t in titles)


def test_the_flag_switches_the_guard_on(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``okstra-tui PROJECT --read-only`` enables the core's guard before the app starts."""
    from okstra_tui import __main__ as entry

    seen: list[bool] = []
    monkeypatch.setattr(guard, "_read_only", False)
    # setenv first, so the variable's absence is what the test's end restores (the flag sets it).
    monkeypatch.setenv(writes.READ_ONLY_ENV, "")
    monkeypatch.delenv(writes.READ_ONLY_ENV)
    monkeypatch.setattr("okstra_tui.app.OkstraApp.run", lambda self: seen.append(writes.read_only()))
    assert entry.main([str(demo_root), "--read-only"]) == 0
    assert seen == [True]
    assert os.environ[writes.READ_ONLY_ENV] == "1", "inherited by what the workbench starts"
