"""The design-prep confirmation form: answers go through the core's confirm and append the next revision."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from okstra_core import names
from okstra_core.store import Project
from okstra_core.workflows.design_prep import parse_answers, resolve
from okstra_tui.navigation import Location, View
from okstra_tui.screens.confirm_design import ConfirmDesignScreen
from okstra_tui.screens.design_prep import DesignPrepScreen

from .conftest import SIZE, make_app, plain, settle

TASK = Path(".okstra/tasks/payments/retry-policy")
INPUTS = TASK / "runs/implementation-planning/design-prep-inputs"


def _inputs(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / INPUTS).iterdir()) if p.suffix == ".md"}


async def _open_form(app, pilot, root: Path) -> ConfirmDesignScreen:  # type: ignore[no-untyped-def]
    app.navigate(Location(View.DESIGN_PREP, root / TASK))
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, DesignPrepScreen)
    table = screen.query_one("#dp-table", DataTable)
    table.focus()
    table.move_cursor(row=1)  # the request row under PREP-001: the form is for the item above it
    await pilot.press("a")
    await settle(pilot)
    form = app.screen
    assert isinstance(form, ConfirmDesignScreen) and form.item.prep_id == "PREP-001"
    return form


async def test_confirming_appends_the_next_revision_and_it_becomes_authoritative(fresh_demo: Path) -> None:
    before = _inputs(fresh_demo)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await _open_form(app, pilot, fresh_demo)
        answers = {name: f"{name} chosen in the form" for name in form.fields}
        for name, value in answers.items():
            form.field_area(name).text = value
        await pilot.click("#form-submit")
        await settle(pilot)
        assert isinstance(app.screen, DesignPrepScreen)
    after = _inputs(fresh_demo)
    new = [name for name in after if name not in before]
    assert len(new) == 1 and all(after[k] == v for k, v in before.items())
    parsed = names.parse_in_category("design-prep-inputs", new[0])
    assert parsed is not None and parsed.prep_id == "PREP-001"
    assert parse_answers(after[new[0]].decode("utf-8")) == answers
    task = Project(fresh_demo).find_task("demo-shop:payments:retry-policy")
    assert task is not None
    item = next(i for i in resolve(task).items if i.prep_id == "PREP-001")
    assert item.authoritative is not None and item.authoritative.path.name == new[0]


async def test_an_unanswered_field_is_refused_in_one_line_and_nothing_is_written(fresh_demo: Path) -> None:
    before = _inputs(fresh_demo)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await _open_form(app, pilot, fresh_demo)
        first, *rest = form.fields
        form.field_area(first).text = "only this one"
        await pilot.click("#form-submit")
        await settle(pilot)
        assert app.screen is form
        error = plain(form.query_one("#form-error", Static))
        assert "unanswered" in error and all(name in error for name in rest)
    assert _inputs(fresh_demo) == before


async def test_field_names_and_questions_from_the_report_are_shown_as_text(fresh_demo: Path) -> None:
    # Field names and questions are report data: spaces, slashes and markup-like brackets must not break the form.
    import json

    report = (
        fresh_demo / TASK / "runs/implementation-planning/reports/final-report-implementation-planning-002.data.json"
    )
    doc = json.loads(report.read_text(encoding="utf-8"))
    item = next(i for i in doc["implementationPlan"]["designItems"] if i["prepId"] == "PREP-001")
    item["fields"] = ["key format [v1]", "why / rationale"]
    item["question"] = "Use [bold]this[/] or [that?"
    report.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await _open_form(app, pilot, fresh_demo)
        assert form.fields == ["key format [v1]", "why / rationale"]
        shown = " ".join(plain(label) for label in form.query("Label"))
        assert "key format [v1]" in shown and "why / rationale" in shown
        assert "Use [bold]this[/] or [that?" in " ".join(plain(s) for s in form.query(Static))
        answers = {"key format [v1]": "uuid v7", "why / rationale": "sortable"}
        for name, value in answers.items():
            form.field_area(name).text = value
        await pilot.click("#form-submit")
        await settle(pilot)
        assert isinstance(app.screen, DesignPrepScreen), plain(form.query_one("#form-error", Static))
    newest = max((fresh_demo / INPUTS).glob("design-prep-input-*-PREP-001-r*.md"), key=lambda p: p.stat().st_mtime_ns)
    assert parse_answers(newest.read_text(encoding="utf-8")) == answers
