"""The respond form: choose a direction and answer, written through the core's user-response owner."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, DataTable, RadioButton, Static

from okstra_core.store import Project
from okstra_core.workflows.reports import report_by_path
from okstra_core.workflows.user_response import ExportInput, render_sidecar
from okstra_tui.navigation import Location, View
from okstra_tui.screens.reports import ReportsScreen
from okstra_tui.screens.respond import RespondScreen

from .conftest import SIZE, make_app, plain, settle


def _tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


async def _open_form(app, pilot, task_root: Path, report: Path) -> RespondScreen:  # type: ignore[no-untyped-def]
    app.navigate(Location(View.REPORTS, task_root, report))
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, ReportsScreen) and screen.current_path() == report
    screen.query_one("#rep-table", DataTable).focus()
    await pilot.press("a")
    await settle(pilot)
    form = app.screen
    assert isinstance(form, RespondScreen)
    return form


def _core_sidecar(root: Path, key: str, report: Path, answers: dict[str, str], option: str | None = None) -> bytes:
    """The bytes the core's owner renders for these answers (what the CLI and the HTML page write)."""
    task = Project(root).find_task(key)
    assert task is not None
    loaded = report_by_path(task, report)
    inp = ExportInput(loaded.model, loaded.rel(), loaded.stem, loaded.sha256)
    return render_sidecar(inp, answers, option).encode("utf-8")


async def _submit(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.click("#form-submit")
    await settle(pilot)


def _choose(form: RespondScreen, option: str) -> None:
    button = next(b for b in form.query(RadioButton) if b.name == option)
    button.value = True


async def test_choosing_the_direction_writes_the_same_bytes_as_the_core(fresh_demo: Path) -> None:
    task_root = fresh_demo / ".okstra/tasks/payments/retry-policy"
    report = task_root / "runs/option-selection/reports/final-report-option-selection-001.data.json"
    sidecar = task_root / "runs/option-selection/user-responses/user-response-option-selection-001.md"
    sidecar.unlink()
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await _open_form(app, pilot, task_root, report)
        _choose(form, "IO-001")
        await _submit(pilot)
        assert isinstance(app.screen, ReportsScreen), "the form closes once the response is written"
    assert sidecar.read_bytes() == _core_sidecar(fresh_demo, "demo-shop:payments:retry-policy", report, {}, "IO-001")


async def test_a_choice_planning_already_consumed_cannot_change(fresh_demo: Path) -> None:
    task_root = fresh_demo / ".okstra/tasks/payments/retry-policy"
    report = task_root / "runs/option-selection/reports/final-report-option-selection-001.data.json"
    responses = task_root / "runs/option-selection/user-responses"
    before = _tree_bytes(responses)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await _open_form(app, pilot, task_root, report)
        _choose(form, "IO-002")
        await _submit(pilot)
        assert app.screen is form, "a refusal keeps the form open"
        error = plain(form.query_one("#form-error", Static))
        assert error.startswith(".okstra/tasks/payments/retry-policy/instruction-set/selected-direction.json: ")
        assert "IO-001" in error and "can no longer change" in error
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ReportsScreen)
    assert _tree_bytes(responses) == before


async def test_a_report_with_nothing_to_answer_offers_no_write(fresh_demo: Path) -> None:
    task_root = fresh_demo / ".okstra/tasks/payments/currency-rounding"
    report = task_root / "runs/option-selection/reports/final-report-option-selection-001.data.json"
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await _open_form(app, pilot, task_root, report)
        assert form.query_one("#form-submit", Button).disabled
        assert "asks no clarification questions" in plain(form.query_one("#form-body").query(Static).first())


async def test_answers_typed_in_the_form_are_the_sidecar_the_core_writes(fresh_demo: Path) -> None:
    from textual.widgets import TextArea

    task_root = fresh_demo / ".okstra/tasks/payments/refund-ledger"
    report = task_root / "runs/analysis/reports/final-report-analysis-001.data.json"
    sidecar = task_root / "runs/analysis/user-responses/user-response-analysis-001.md"
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await _open_form(app, pilot, task_root, report)
        areas = list(form.query(TextArea))
        assert areas and not form.query(RadioButton)  # clarification mode: questions, no direction
        answers = {}
        for i, area in enumerate(areas):
            item_id = (area.id or "").removeprefix("answer-")
            area.focus()
            await pilot.press(*f"answer {i}", "enter", *"second line  ")
            answers[item_id] = f"answer {i}\nsecond line  "
        await _submit(pilot)
        assert isinstance(app.screen, ReportsScreen)
    assert sidecar.read_bytes() == _core_sidecar(fresh_demo, "demo-shop:payments:refund-ledger", report, answers)
    assert "second line" in sidecar.read_text(encoding="utf-8")


async def test_a_broken_report_is_named_and_no_form_opens(fresh_demo: Path) -> None:
    task_root = fresh_demo / ".okstra/tasks/payments/refund-ledger"
    report = task_root / "runs/analysis/reports/final-report-analysis-001.data.json"
    report.write_text("{ not json", encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.navigate(Location(View.REPORTS, task_root, report))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReportsScreen) and screen.current_path() == report
        screen.query_one("#rep-table", DataTable).focus()
        await pilot.press("a")
        await settle(pilot)
        assert app.screen is screen
        messages = [str(n.message) for n in app._notifications]
        assert any("final-report-analysis-001.data.json" in m and "invalid JSON" in m for m in messages), messages
