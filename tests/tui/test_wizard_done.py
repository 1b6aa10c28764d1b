"""After a write the wizard offers Done (Enter) and Esc closes it: no word of cancelling, the write stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button

from okstra_core import layout
from okstra_tui.screens.wizard import WizardScreen
from okstra_tui.screenshots import WRITING_SCENES, settle
from okstra_tui.widgets.footer import BindingsFooter

from .conftest import SIZE, make_app, plain


def _footer_and_buttons(wizard: WizardScreen) -> str:
    buttons = " ".join(str(b.label) for b in wizard.query(Button) if b.display and b.visible)
    return plain(wizard.query_one(BindingsFooter).render()) + " " + buttons


@pytest.mark.parametrize("key", ["enter", "escape"])
async def test_after_a_write_enter_is_done_and_escape_closes_keeping_the_write(
    key: str, fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OKSTRA_HOME", str(layout.demo_home(fresh_demo)))
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await WRITING_SCENES["wizard-direction-written"](pilot)
        wizard = app.screen
        assert isinstance(wizard, WizardScreen) and wizard.written is not None
        said = _footer_and_buttons(wizard)
        assert "⏎ Done" in said and "esc Close" in said, said
        assert "cancel" not in said.lower(), said
        await pilot.press(key)
        await settle(pilot)
        assert not isinstance(app.screen, WizardScreen)
        assert wizard.written.path.is_file()


async def test_before_a_write_escape_cancels(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OKSTRA_HOME", str(layout.demo_home(fresh_demo)))
    from okstra_tui.screenshots import SCENES

    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await SCENES["wizard-direction-review"](pilot)
        wizard = app.screen
        assert isinstance(wizard, WizardScreen) and wizard.written is None
        said = _footer_and_buttons(wizard)
        assert "esc Cancel" in said and "Done" not in said, said
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, WizardScreen)
