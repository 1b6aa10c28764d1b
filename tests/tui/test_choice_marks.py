"""A chosen option reads without colour: "(•)"/"( )" on radio buttons, "[x]"/"[ ]" on checkboxes."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import RadioButton

from okstra_tui.screens.wizard_direction import CandidateCard, ChooseStep
from okstra_tui.screenshots import SCENES
from okstra_tui.widgets.choice import CHOSEN, NOT_CHOSEN, NOT_TICKED, TICKED, Tick

from .conftest import SIZE, make_app


async def test_the_chosen_direction_is_marked_in_its_text(demo_root: Path, demo_home: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await SCENES["wizard-direction-chosen"](pilot)
        step = app.screen.query_one(ChooseStep)
        marks = {}
        for button in step.query(RadioButton):
            text = str(button.render())
            marks[button.name] = text[:3]
            assert text.count(CHOSEN) + text.count(NOT_CHOSEN) == 1, text
        chosen = step.oc.recommendation
        assert marks == {c.option_id: CHOSEN if c.option_id == chosen else NOT_CHOSEN for c in step.oc.candidates}
        titles = {card.candidate.option_id: str(card.border_title) for card in step.query(CandidateCard)}
        assert [k for k, t in titles.items() if CHOSEN in t and "chosen" in t] == [chosen]


async def test_a_checkbox_says_whether_it_is_ticked(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        box = Tick("Leave unanswered")
        await app.screen.mount(box)
        await pilot.pause()
        assert str(box.render()).startswith(NOT_TICKED)
        box.toggle()
        await pilot.pause()
        assert str(box.render()).startswith(TICKED)
