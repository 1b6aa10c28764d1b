"""Keys pressed while a wizard builds a step reach no button and do not move it: Enter pressed again does not cancel it.

A wizard opens in a worker, and each step is built when it comes on screen. Until the step takes the focus
nothing has it, so a key typed ahead (a second Enter on the inbox's row, Enter right after Ctrl+N) is not
taken by the button the focus would otherwise fall back on (Enter on Cancel closed the wizard), and Next or
Back pressed again before the step is built do nothing (Next wrote a review that was never shown). An option
chosen and left at once (Enter, then Ctrl+N before the option set has heard of the choice) is the one chosen.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Button, RadioButton, RadioSet

from okstra_tui.screens.wizard_direction import ChooseStep
from okstra_tui.screens.wizard_report import ClarificationWizard
from okstra_tui.screenshots import settle
from okstra_tui.widgets.choice import Choice, index_chosen, option_chosen

from .conftest import SIZE, WAIT_SECONDS, make_app, wait_until
from .test_wizards import decision, select_in_inbox, wizard_on


async def test_enter_while_the_wizard_opens_or_builds_a_step_leaves_it_open(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wanted = decision(fresh_demo, "clarification")
    read = threading.Event()
    load = ClarificationWizard.load

    def held_load(self: ClarificationWizard) -> None:
        read.wait(WAIT_SECONDS)
        load(self)

    monkeypatch.setattr(ClarificationWizard, "load", held_load)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        try:
            await select_in_inbox(pilot, wanted)
            await pilot.press("enter")
            wizard = app.screen
            assert isinstance(wizard, ClarificationWizard) and wizard.opening
            assert not isinstance(app.focused, Button), "no button has the focus while the wizard opens"
            await pilot.press("enter")  # pressed again, impatiently
            assert app.screen is wizard and not wizard.closed, "Enter while it opens does not cancel the wizard"
            read.set()
            await settle(pilot)
            await wait_until(pilot, lambda: wizard.current is not None, "the first step")
            step = wizard.step
            assert app.focused is not None and step in app.focused.ancestors_with_self, "the first step takes the focus"
            # The review is built on screen: until then the focus is nowhere, not on a button, and the wizard
            # does not move; Ctrl+N pressed again does not write what was never shown.
            review = next(i for i, s in enumerate(wizard.steps) if s.writes)
            wizard.go(review)
            assert app.focused is None, "no button has the focus while the next step is built"
            wizard.action_next_step()
            assert not wizard.busy and wizard.written is None, "the review not yet shown is not written"
            wizard.action_back_step()
            assert wizard.index == review and not wizard.check_action("next_step", ())
            await settle(pilot)
            assert app.screen is wizard and wizard.index == review and wizard.written is None
            assert app.focused is not None and wizard.step in app.focused.ancestors_with_self
            assert wizard.check_action("next_step", ()) is not False

        finally:
            read.set()  # a failing assert leaves no worker waiting


class _Options(App[None]):
    def compose(self) -> ComposeResult:
        with RadioSet():
            for name in ("a", "b", "c"):
                yield Choice(name, name=name)


async def test_the_option_chosen_is_the_last_switched_on_before_the_set_hears_of_it() -> None:
    """A button switched on reaches its set by a message; until then the set still names the one before."""
    app = _Options()
    async with app.run_test() as pilot:
        options = app.query_one(RadioSet)
        a, b, _ = options.query(RadioButton)
        assert option_chosen(options) is None and index_chosen(options) == -1
        a.toggle()
        assert option_chosen(options) is a and index_chosen(options) == 0
        await pilot.pause()
        b.toggle()  # a is still on, and still the set's
        assert a.value and options.pressed_button is a
        assert option_chosen(options) is b and index_chosen(options) == 1
        await pilot.pause()
        assert not a.value and options.pressed_button is b
        b.toggle()  # switched off for a moment: the set switches it on again
        assert option_chosen(options) is b
        await pilot.pause()
        assert b.value and option_chosen(options) is b


async def test_a_direction_chosen_and_left_at_once_is_the_one_chosen(fresh_demo: Path) -> None:
    wanted = decision(fresh_demo, "direction-choice")
    async with wizard_on(fresh_demo, wanted) as (pilot, wizard):
        step = wizard.step
        assert isinstance(step, ChooseStep)
        buttons = list(step.query(RadioButton))
        buttons[-1].toggle()  # Enter on the last candidate, then Ctrl+N before the set heard of it
        assert step.validate() is None and step.current() == buttons[-1].name
        await pilot.pause()
        assert step.current() == buttons[-1].name
