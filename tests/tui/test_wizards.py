"""The decision wizards, driven end to end with Pilot on the default demo's open decisions.

Each wizard is opened from the inbox (Enter on the decision), walked step by
step with keys and clicks, and what it writes is compared byte for byte with
what the matching ``okstra`` verb writes for the same input on a copy of the
same demo; the command lines the wizard entered in the write log, run on a
copy taken before the wizard wrote, give the same tree byte for byte.
Cancelling at any step leaves the tree byte-identical; a file that changed on
disk under an open wizard is caught at the write.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
from collections.abc import AsyncIterator, Iterator
from functools import partial
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Checkbox, DataTable, RadioButton, RadioSet, Static, TextArea

from okstra_core import layout, times, write_log
from okstra_core.cli import main as okstra
from okstra_core.store import Project
from okstra_core.workflows import common
from okstra_core.workflows.inbox import PendingDecision, pending_decisions
from okstra_tui.app import OkstraApp
from okstra_tui.navigation import Location
from okstra_tui.screens.inbox import InboxScreen
from okstra_tui.screens.wizard import ReviewStep, WizardScreen
from okstra_tui.screens.wizard_design import MAX_ANSWER, DesignPrepWizard, FieldStep
from okstra_tui.screens.wizard_direction import ChooseStep, DirectionWizard
from okstra_tui.screens.wizard_prepare import PrepareWizard
from okstra_tui.screens.wizard_report import ClarificationWizard
from okstra_tui.screens.wizard_steps import QuestionStep
from okstra_tui.screenshots import settle
from okstra_tui.widgets.text_lines import TextLines
from okstra_tui.widgets.virtual_table import VirtualTable

from .conftest import SIZE, WAIT_SECONDS, make_app, open_view, plain, wait_until

START = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


# ------------------------------------------------------------------ helpers


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None) under *root*."""
    out: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        base = Path(folder)
        for name in dirs:
            out[(base / name).relative_to(root).as_posix()] = None
        for name in files:
            path = base / name
            out[path.relative_to(root).as_posix()] = path.read_bytes() if not path.is_symlink() else b"->"
    return out


def decision(root: Path, kind: str) -> PendingDecision:
    """The demo's first open decision of *kind* (a clarification still to answer, not one to attach)."""
    found = [d for d in pending_decisions(Project(root)) if d.kind == kind and d.detail != "attach-pending"]
    assert found, f"the default demo holds an open {kind} decision"
    return found[0]


def copy_of(root: Path, tmp_path: Path, name: str = "verb-copy") -> Path:
    target = tmp_path / name / "project"
    shutil.copytree(root, target, symlinks=True)
    return target


def assert_replays(origin: Path, before: Path, entries: int) -> list[write_log.Entry]:
    """Run the write log's command lines of *origin* on *before* (a copy taken before the wizard wrote).

    The store they give is *origin*'s byte for byte; each entry names files that exist. Returns the entries.
    The system clock is moved years away meanwhile: every time written must come from ``--at``.
    """
    log = write_log.read_log(origin)
    assert len(log.entries) == entries and log.skipped == 0, log
    project = os.path.realpath(origin)
    saved = (common.SYSTEM_CLOCK.start, common.SYSTEM_CLOCK._ticks)
    common.SYSTEM_CLOCK.start, common.SYSTEM_CLOCK._ticks = dt.datetime(2031, 1, 1, tzinfo=dt.UTC), 0
    try:
        for entry in reversed(log.entries):
            assert entry.files and all((origin / name).is_file() for name in entry.files), entry
            for argv in entry.commands:
                assert argv[0] == "okstra" and argv.count(project) == 1, argv
                verb(*(str(before) if word == project else word for word in argv[1:]))
    finally:
        common.SYSTEM_CLOCK.start, common.SYSTEM_CLOCK._ticks = saved
    assert tree(before / ".okstra") == tree(origin / ".okstra")
    return log.entries


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The core's clock steps from a fixed start, so two writes of the same input give the same bytes."""
    monkeypatch.setattr(common.SYSTEM_CLOCK, "start", START)
    monkeypatch.setattr(common.SYSTEM_CLOCK, "_ticks", 0)
    yield


def restart_clock() -> None:
    common.SYSTEM_CLOCK._ticks = 0


def verb(*argv: str) -> None:
    assert okstra(list(argv)) == 0, argv


async def select_in_inbox(pilot: Pilot[None], wanted: PendingDecision) -> None:
    """``i``, then the cursor on *wanted*'s row."""
    inbox = await open_view(pilot, "i", InboxScreen)
    table = inbox.query_one("#inbox-table", DataTable)
    for row in range(table.row_count):
        table.move_cursor(row=row)
        got = inbox.selected()
        if got is not None and (got.kind, got.task, got.item, got.path) == (
            wanted.kind,
            wanted.task,
            wanted.item,
            wanted.path,
        ):
            return
    raise AssertionError(f"{wanted} is not in the inbox")


async def open_from_inbox(pilot: Pilot[None], wanted: PendingDecision) -> WizardScreen:
    """``i``, the decision's row, Enter: the wizard it opens."""
    app = pilot.app
    await select_in_inbox(pilot, wanted)
    await pilot.press("enter")
    await settle(pilot)
    wizard = app.screen
    assert isinstance(wizard, WizardScreen)
    return wizard


@contextlib.asynccontextmanager
async def wizard_on(root: Path, wanted: PendingDecision) -> AsyncIterator[tuple[Pilot[None], WizardScreen]]:
    """The app over *root*, with the wizard of *wanted* opened from the inbox."""
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        yield pilot, await open_from_inbox(pilot, wanted)


def error_line(wizard: WizardScreen) -> str:
    return plain(wizard.query_one("#wiz-error", Static)).strip()


async def next_step(pilot: Pilot[None]) -> None:
    await pilot.press("ctrl+n")
    await settle(pilot)


async def answer_question(pilot: Pilot[None], step: QuestionStep, answers: dict[str, str]) -> None:
    """Options: the first one (a click). Free text: typed. The answer given is recorded in *answers*."""
    item = step.item
    if item.options:
        buttons = list(step.query(RadioButton))
        await pilot.click(buttons[0])
        answers[item.item_id] = item.options[0]
    else:
        step.query_one(TextArea).focus()
        await pilot.press(*"typed in the wizard")
        answers[item.item_id] = "typed in the wizard"
    await pilot.pause()


# ----------------------------------------------------------- clarification


async def test_clarification_wizard_writes_what_the_verbs_write(fresh_demo: Path, tmp_path: Path) -> None:
    wanted = decision(fresh_demo, "clarification")
    copy = copy_of(fresh_demo, tmp_path)
    before = copy_of(fresh_demo, tmp_path, "replay")
    answers: dict[str, str] = {}
    async with wizard_on(fresh_demo, wanted) as (pilot, wizard):
        assert isinstance(wizard, ClarificationWizard)
        count = sum(1 for s in wizard.steps if s.kind is QuestionStep)
        assert count > 1 and any(item.options for item in wizard.report.model.clarification_items), (
            "one question lists options"
        )
        assert f"step 1 of {len(wizard.steps)} " in plain(wizard.query_one("#wiz-progress", Static))
        for i in range(count):
            step = wizard.step
            assert isinstance(step, QuestionStep)
            assert list(wizard.query(QuestionStep)) == [step], "only the step on screen exists as widgets"
            assert pilot.app.focused is not None and step in pilot.app.focused.ancestors_with_self, (
                "the first field has focus"
            )
            # An empty answer is refused until it is left empty on purpose.
            await next_step(pilot)
            assert wizard.step is step and error_line(wizard)
            if i == count - 1 and not step.item.options:
                await pilot.click(step.query_one(Checkbox))
                answers[step.item.item_id] = ""
            elif i == count - 1:
                await pilot.click(list(step.query(RadioButton))[-1])  # "Leave unanswered"
                answers[step.item.item_id] = ""
            else:
                await answer_question(pilot, step, answers)
            await next_step(pilot)
        review = wizard.step
        assert review.WRITES
        report_rel = Path(wanted.report_path or "").relative_to(fresh_demo).as_posix()
        sidecar_rel = report_rel.replace("/reports/final-report-", "/user-responses/user-response-").replace(
            ".data.json", ".md"
        )
        facts = plain(wizard.query_one("#review-facts", Static))
        assert sidecar_rel in facts
        shown = wizard.query_one("#review-bytes", TextLines).text
        await next_step(pilot)  # Write
        assert wizard.step.FINAL and wizard.written is not None
        done = plain(wizard.query_one("#done-result", Static))
        assert sidecar_rel in done and "check of this task: 0 errors" in done
        await pilot.click("#attach")
        await settle(pilot)
        assert "attached" in plain(wizard.query_one("#attach-result", Static))
        await next_step(pilot)  # Close
        assert isinstance(pilot.app.screen, InboxScreen)

    written = (fresh_demo / sidecar_rel).read_bytes()
    assert shown.strip() == written.decode("utf-8").strip(), "the review shows the bytes written"
    answers_file = tmp_path / "answers.json"
    answers_file.write_text(json.dumps(answers), encoding="utf-8")
    verb(
        "user-response",
        "export",
        str(copy),
        "--task",
        wanted.task,
        "--report",
        report_rel,
        "--answers",
        str(answers_file),
    )
    assert (copy / sidecar_rel).read_bytes() == written
    verb("clarification", "attach", str(copy), "--task", wanted.task)
    response = Path(wanted.task_root or "").relative_to(fresh_demo) / "instruction-set/clarification-response.md"
    assert (copy / response).read_bytes() == (fresh_demo / response).read_bytes()
    assert all(d.path != wanted.path for d in pending_decisions(Project(fresh_demo)) if d.kind == "clarification")
    attach, export = assert_replays(fresh_demo, before, entries=2)
    assert [c[1:3] for c in export.commands + attach.commands] == [
        ("user-response", "export"),
        ("clarification", "attach"),
    ]
    assert sidecar_rel in export.files and response.as_posix() in attach.files


async def _open_from_reports(pilot: Pilot[None], wanted: PendingDecision) -> ClarificationWizard:
    """Reports view on the decision's report, ``a``: its clarification wizard."""
    app = pilot.app
    assert isinstance(app, OkstraApp)
    await settle(pilot)
    app.navigate(Location("reports", wanted.task_root, wanted.report_path))
    await settle(pilot)
    await pilot.press("a")
    await settle(pilot)
    wizard = app.screen
    assert isinstance(wizard, ClarificationWizard)
    return wizard


async def _review_unchanged(pilot: Pilot[None], wizard: ClarificationWizard) -> tuple[list[dict[str, object]], str]:
    """Next through every question without touching it: what each showed, and the review's bytes."""
    shown: list[dict[str, object]] = []
    while isinstance(wizard.step, QuestionStep):
        step = wizard.step
        seen: dict[str, object] = {"text": step.query_one(TextArea).text}
        if step.item.options:
            seen["choice"] = step.query_one(RadioSet).pressed_index
        else:
            seen["none"] = step.query_one(Checkbox).value
        shown.append(seen)
        await next_step(pilot)
        assert not error_line(wizard), error_line(wizard)
    assert wizard.step.WRITES
    return shown, wizard.query_one("#review-bytes", TextLines).text.strip()


async def test_clarification_wizard_starts_from_the_newest_sidecar(
    fresh_demo: Path, tmp_path: Path, fixed_clock: None
) -> None:
    wanted = decision(fresh_demo, "clarification")
    report_rel = Path(wanted.report_path or "").relative_to(fresh_demo).as_posix()
    sidecar = fresh_demo / report_rel.replace("/reports/final-report-", "/user-responses/user-response-").replace(
        ".data.json", ".md"
    )
    assert not sidecar.exists()
    exports = [
        {"CQ-001": "gross", "CQ-002": ""},  # an option; left unanswered
        {"CQ-001": "net, with gross in a note", "CQ-002": "The new quarter.\nThey are booked when issued."},
        {"CQ-001": "both, in two columns", "CQ-002": "The old quarter."},
    ]
    for i, answers in enumerate(exports):
        answers_file = tmp_path / f"answers-{i}.json"
        answers_file.write_text(json.dumps(answers), encoding="utf-8")
        verb("user-response", "export", str(fresh_demo), "--task", wanted.task, "--report", report_rel,
             "--answers", str(answers_file))  # fmt: skip
    copies = sorted(sidecar.parent.glob(sidecar.stem + ".superseded-*.md"))
    assert len(copies) == 2  # the first two exports, oldest first

    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        wizard = await _open_from_reports(pilot, wanted)
        assert plain(wizard.query_one("#q-prefilled", Static)).strip().endswith(layout.rel(sidecar, fresh_demo))
        shown, review = await _review_unchanged(pilot, wizard)
        assert shown == [{"text": "", "choice": 2}, {"text": "The old quarter.", "none": False}]
        assert review == sidecar.read_text(encoding="utf-8").strip(), "the same answers give the same bytes"
        assert "identical to the file on disk" in plain(wizard.query_one("#review-facts", Static))
        await pilot.press("escape")
        await settle(pilot)

        # With the sidecar gone, the newest superseded copy (the second export: other + two lines) is the start.
        sidecar.unlink()
        wizard = await _open_from_reports(pilot, wanted)
        shown, review = await _review_unchanged(pilot, wizard)
        assert shown == [
            {"text": "net, with gross in a note", "choice": 3},
            {"text": "The new quarter.\nThey are booked when issued.", "none": False},
        ]
        assert review == copies[-1].read_text(encoding="utf-8").strip()
        await pilot.press("escape")
        await settle(pilot)

        # Only the first export left: an option and a question left unanswered on purpose.
        copies[-1].unlink()
        wizard = await _open_from_reports(pilot, wanted)
        shown, review = await _review_unchanged(pilot, wizard)
        assert shown == [{"text": "", "choice": 1}, {"text": "", "none": True}]
        assert review == copies[0].read_text(encoding="utf-8").strip()


@pytest.mark.parametrize("kind", ["clarification", "direction-choice"])
async def test_a_sidecar_replaced_by_a_wizard_is_kept_under_the_wizards_time(fresh_demo: Path, kind: str) -> None:
    from okstra_tui.screens.wizard_steps import state_for

    moment = dt.datetime(2031, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        wizard = await open_from_inbox(pilot, decision(fresh_demo, kind))
        assert isinstance(wizard, ClarificationWizard | DirectionWizard)
        wizard.clock = common.Clock(start=moment, step=dt.timedelta(0))
        items = list(wizard.report.model.clarification_items)
        options = [c.option_id for c in oc.candidates] if (oc := wizard.report.model.option_candidates) else []
        written = []
        for n in (1, 2):  # the second write replaces the first, which is kept under a time-stamped name
            values: dict[str, object] = {item.item_id: state_for(item, f"answer {n}") for item in items}
            if isinstance(wizard, DirectionWizard):
                values["option"] = options[n - 1]
            written.append(wizard._logged(partial(wizard.write, values)))  # as the write worker runs it
    sidecar = written[-1].path
    kept = sorted(p.name for p in sidecar.parent.glob(sidecar.stem + ".superseded-*.md"))
    assert kept == [sidecar.stem + f".superseded-{times.compact_stamp(moment)}.md"], kept


# --------------------------------------------------------------- direction


async def test_direction_wizard_and_planning_prepare_write_what_the_verbs_write(
    fresh_demo: Path, tmp_path: Path, fixed_clock: None
) -> None:
    wanted = decision(fresh_demo, "direction-choice")
    copy = copy_of(fresh_demo, tmp_path)
    before = copy_of(fresh_demo, tmp_path, "replay")
    answers: dict[str, str] = {}
    async with wizard_on(fresh_demo, wanted) as (pilot, wizard):
        assert isinstance(wizard, DirectionWizard)
        choose = wizard.step
        assert isinstance(choose, ChooseStep)
        oc = wizard.report.model.option_candidates
        cards = " ".join(str(card.border_title) for card in choose.query("CandidateCard"))
        assert f"{oc.recommendation}  ★ recommended" in cards and all(c.option_id in cards for c in oc.candidates)
        await next_step(pilot)
        assert wizard.step is choose and "Choose a direction" in error_line(wizard)
        other = next(c.option_id for c in oc.candidates if c.option_id != oc.recommendation)
        card = next(c for c in choose.query("CandidateCard") if c.candidate.option_id == other)  # type: ignore[attr-defined]
        await pilot.click(card)
        await pilot.pause()
        assert choose.current() == other
        await next_step(pilot)
        while isinstance(wizard.step, QuestionStep):
            await answer_question(pilot, wizard.step, answers)
            await next_step(pilot)
        assert wizard.step.WRITES
        facts = plain(wizard.query_one("#review-facts", Static))
        assert re.search(rf"selected option\s+{other}\b", facts) and wizard.report.sha256 in facts
        await pilot.click("#wiz-next")  # Write, with the mouse
        await settle(pilot)
        assert wizard.step.FINAL and wizard.written is not None
        sidecar = wizard.written.path
        assert "sidecar source-data-sha256  matches the report bytes" in plain(wizard.query_one("#chain", Static))
        restart_clock()
        await pilot.click("#prepare")
        await settle(pilot)
        result = plain(wizard.query_one("#prepare-result", Static))
        assert "selected-direction.json" in result
        assert "check of this task: 0 errors" in result
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(pilot.app.screen, InboxScreen)

    report_rel = Path(wanted.report_path or "").relative_to(fresh_demo).as_posix()
    sidecar_rel = sidecar.relative_to(fresh_demo).as_posix()
    argv = ["direction", "select", str(copy), "--task", wanted.task, "--option", other, "--report", report_rel]
    if answers:
        answers_file = tmp_path / "answers.json"
        answers_file.write_text(json.dumps(answers), encoding="utf-8")
        argv += ["--answers", str(answers_file)]
    verb(*argv)
    assert (copy / sidecar_rel).read_bytes() == sidecar.read_bytes()
    restart_clock()
    verb("planning", "prepare", str(copy), "--task", wanted.task)
    snapshot = Path(wanted.task_root or "").relative_to(fresh_demo) / "instruction-set/selected-direction.json"
    assert (copy / snapshot).read_bytes() == (fresh_demo / snapshot).read_bytes()
    left = [d for d in pending_decisions(Project(fresh_demo)) if d.task == wanted.task]
    assert not [d for d in left if d.kind in ("direction-choice", "planning-prepare")]
    prepared, selected = assert_replays(fresh_demo, before, entries=2)
    assert selected.what == f"selected {other}" and prepared.what == "prepared planning"


async def test_prepare_wizard_for_a_choice_made_but_not_prepared(
    fresh_demo: Path, tmp_path: Path, fixed_clock: None
) -> None:
    wanted = decision(fresh_demo, "planning-prepare")
    copy = copy_of(fresh_demo, tmp_path)
    before = copy_of(fresh_demo, tmp_path, "replay")
    async with wizard_on(fresh_demo, wanted) as (pilot, wizard):
        assert isinstance(wizard, PrepareWizard)
        facts = plain(wizard.query_one("#review-facts", Static))
        assert "sidecar source-data-sha256  matches the report bytes" in facts
        assert "selected-direction snapshot  not written yet" in facts
        restart_clock()
        await next_step(pilot)
        assert wizard.step.FINAL and wizard.written is not None
        done = plain(wizard.query_one("#done-result", Static))
        assert '"sourceDataSha256"' in done and "snapshot sourceDataSha256  matches the report bytes" in done
    restart_clock()
    verb("planning", "prepare", str(copy), "--task", wanted.task)
    snapshot = Path(wanted.task_root or "").relative_to(fresh_demo) / "instruction-set/selected-direction.json"
    assert (copy / snapshot).read_bytes() == (fresh_demo / snapshot).read_bytes()
    assert_replays(fresh_demo, before, entries=1)


# -------------------------------------------------------------- design-prep


async def test_design_prep_wizard_appends_what_the_verb_appends(
    fresh_demo: Path, tmp_path: Path, fixed_clock: None
) -> None:
    wanted = decision(fresh_demo, "design-prep")
    copy = copy_of(fresh_demo, tmp_path)
    before = copy_of(fresh_demo, tmp_path, "replay")
    answers: dict[str, str] = {}
    async with wizard_on(fresh_demo, wanted) as (pilot, wizard):
        assert isinstance(wizard, DesignPrepWizard) and wizard.prep_id == wanted.item
        facts = plain(wizard.query_one("#request-facts", Static))
        state = "on disk, matches the approved snapshot" if wizard.request.exists() else "not materialised yet"
        assert state in " ".join(facts.split()) and wizard.request.name in facts
        text = plain(wizard.query_one("#request-text", Static))
        assert "kind: design-prep-request" in text and f"prep-id: {wanted.item}" in text
        await next_step(pilot)
        while isinstance(wizard.step, FieldStep):
            step = wizard.step
            await next_step(pilot)
            assert wizard.step is step and "needs an answer" in error_line(wizard), "an empty field is refused inline"
            await pilot.press(*f"{step.name_} decided")
            answers[step.name_] = f"{step.name_} decided"
            await next_step(pilot)
        assert wizard.step.WRITES
        facts = plain(wizard.query_one("#review-facts", Static))
        assert f"{wanted.item}-r" in facts and (wizard.item.assessment is not None)
        restart_clock()
        await next_step(pilot)
        assert wizard.step.FINAL and wizard.written is not None
        written = wizard.written.path
        done = plain(wizard.query_one("#done-result", Static))
        assert "is authoritative" in done and written.name in done
    request_rel = wizard.request.relative_to(fresh_demo)
    assert (fresh_demo / request_rel).exists(), "the request is materialised with the confirmation"
    answer_file = tmp_path / "answer.md"
    from okstra_core.workflows.design_prep import answers_text

    answer_file.write_text(answers_text(answers), encoding="utf-8")
    verb("design-prep", "materialize", str(copy), "--task", wanted.task)
    restart_clock()
    verb(
        "design-prep",
        "confirm",
        str(copy),
        "--task",
        wanted.task,
        "--item",
        wanted.item or "",
        "--input",
        str(answer_file),
    )
    rel = written.relative_to(fresh_demo)
    assert (copy / rel).read_bytes() == written.read_bytes()
    assert (copy / request_rel).read_bytes() == (fresh_demo / request_rel).read_bytes()
    assert not [d for d in pending_decisions(Project(fresh_demo)) if d.kind == "design-prep" and d.item == wanted.item]
    (confirmed,) = assert_replays(fresh_demo, before, entries=1)
    assert confirmed.what == f"confirmed {wanted.item}" and rel.as_posix() in confirmed.files


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("fine so far\n## Other field\nsmuggled", "a line may not start with “## ” (it would start another field)."),
        ("## at the start", "a line may not start with “## ” (it would start another field)."),
        ("x" * (MAX_ANSWER + 1), f"at most {MAX_ANSWER:,} characters ({MAX_ANSWER + 1:,} typed)."),
    ],
    ids=["heading-line", "heading-first", "too-long"],
)
async def test_design_prep_wizard_refuses_an_answer_it_could_not_write_back(
    fresh_demo: Path, answer: str, problem: str
) -> None:
    wanted = decision(fresh_demo, "design-prep")
    before = tree(fresh_demo)
    async with wizard_on(fresh_demo, wanted) as (pilot, wizard):
        await next_step(pilot)
        step = wizard.step
        assert isinstance(step, FieldStep)
        area = step.query_one("#field-text", TextArea)
        area.load_text(answer)
        await next_step(pilot)
        assert wizard.step is step, "the step is not left"
        assert error_line(wizard) == f"{step.name_}: {problem}"
        # The same field with the offending part gone is taken (a "##" inside a line, and the limit itself, are fine).
        area.load_text("a ## b\n" + "y" * (MAX_ANSWER - 7))
        await next_step(pilot)
        assert wizard.step is not step and error_line(wizard) == ""
    assert tree(fresh_demo) == before, "nothing is written"


# ------------------------------------------------------------------ cancel


async def _walk_and_cancel(pilot: Pilot[None], wanted: PendingDecision, steps: int, by_button: bool) -> int:
    """Open the decision's wizard, fill and pass *steps* steps, cancel; returns how many steps lead to the write."""
    wizard = await open_from_inbox(pilot, wanted)
    for _ in range(steps):
        step = wizard.step
        if step.WRITES:
            break
        if isinstance(step, ChooseStep):
            step.choose(step.oc.candidates[0].option_id)
        elif isinstance(step, QuestionStep):
            await answer_question(pilot, step, {})
        elif isinstance(step, FieldStep):
            await pilot.press(*"an answer")
        await next_step(pilot)
    before_write = next(i for i, s in enumerate(wizard.steps) if s.writes)
    if by_button:
        await pilot.click("#wiz-cancel")
    else:
        await pilot.press("escape")
    await settle(pilot)
    assert isinstance(pilot.app.screen, InboxScreen)
    return before_write


@pytest.mark.parametrize("kind", ["clarification", "direction-choice", "planning-prepare", "design-prep"])
async def test_cancel_at_every_step_writes_nothing(fresh_demo: Path, kind: str) -> None:
    wanted = decision(fresh_demo, kind)
    before = tree(fresh_demo)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        last = await _walk_and_cancel(pilot, wanted, 0, by_button=False)
        assert tree(fresh_demo) == before
        for steps in range(1, last + 1):
            await _walk_and_cancel(pilot, wanted, steps, by_button=steps % 2 == 1)
            assert tree(fresh_demo) == before, f"cancel at step {steps + 1} wrote nothing"


# ------------------------------------------------------------------- stale


async def _to_review(pilot: Pilot[None], wanted: PendingDecision) -> WizardScreen:
    wizard = await open_from_inbox(pilot, wanted)
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


async def test_the_review_shows_each_line_of_the_file_as_one_line(fresh_demo: Path) -> None:
    """At 120 columns the direction sidecar's ``report:`` line is longer than the box: its continuation is marked."""
    wanted = decision(fresh_demo, "direction-choice")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        wizard = await _to_review(pilot, wanted)
        box = wizard.query_one("#review-bytes")
        rows = [box.render_line(y).text.rstrip() for y in range(box.size.height)]  # as drawn on screen
        lines: list[str] = []
        for row in rows:
            if row.startswith("↪ "):
                lines[-1] += row[2:]
            else:
                assert row[:2].strip() == "", row
                lines.append(row[2:])
        assert isinstance(wizard, DirectionWizard)
        want = wizard.sidecar_text(wizard.values).rstrip("\n").split("\n")
        assert [line.rstrip() for line in lines] == [line.rstrip() for line in want]
        report_row = next(i for i, row in enumerate(rows) if row.startswith("  report: "))
        assert rows[report_row + 1].startswith("↪ "), "the report line goes on past the box, marked as continued"


def _touch_report(path: Path) -> None:
    """Another writer re-publishes the report with the same data (its bytes, and so its digest, change)."""
    value = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(value, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")


# ------------------------------------------------------------ a large report


def _ask_many(report: Path, count: int) -> None:
    """Make *report* ask *count* clarification questions (every other one with options)."""
    value = json.loads(report.read_text(encoding="utf-8"))
    value["clarificationItems"] = [
        {"itemId": f"CQ-{i:03d}", "question": f"Question {i}?", "context": "ledger " * 40}
        | ({"options": ["first", "second"]} if i % 2 else {})
        for i in range(1, count + 1)
    ]
    report.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


async def test_a_large_report_opens_in_a_worker_and_builds_only_the_step_on_screen(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from okstra_tui.screens import wizard_report
    from okstra_tui.screens.wizard_report import load_report

    wanted = decision(fresh_demo, "clarification")
    _ask_many(Path(wanted.report_path or ""), 999)
    release = threading.Event()
    read_on: list[str] = []

    def held_back(task: object, path: Path) -> object:
        read_on.append(threading.current_thread().name)
        if threading.current_thread() is threading.main_thread():
            raise AssertionError("the report is read on the UI thread")
        release.wait(WAIT_SECONDS)
        return load_report(task, path)  # type: ignore[arg-type]

    monkeypatch.setattr(wizard_report, "load_report", held_back)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        inbox = await open_view(pilot, "i", InboxScreen)
        table = inbox.query_one("#inbox-table", DataTable)
        row = next(r for r in range(table.row_count) if _at(inbox, table, r, wanted))
        table.move_cursor(row=row)
        await pilot.press("enter")  # no settle: the reading is held back
        wizard = pilot.app.screen
        assert isinstance(wizard, ClarificationWizard)
        await wait_until(pilot, lambda: "reading and checking" in plain(wizard.query_one("#wiz-progress", Static)), "")
        assert "opening" in plain(wizard.query_one("#wiz-progress", Static))
        assert wizard.current is None and not wizard.query(QuestionStep)
        await pilot.press("ctrl+n")  # nothing to step to yet: ignored
        await pilot.press("escape")  # handled while the report is still being read
        assert pilot.app.screen is inbox, "Esc closes the wizard before the report is read"
        release.set()
        await settle(pilot)
        assert pilot.app.screen is inbox, "the reading that ends after the wizard closed is dropped"

        await pilot.press("enter")
        await settle(pilot)
        wizard = pilot.app.screen
        assert isinstance(wizard, ClarificationWizard) and read_on and "MainThread" not in read_on
        assert f"step 1 of {999 + 2} " in plain(wizard.query_one("#wiz-progress", Static))
        first = wizard.step
        assert isinstance(first, QuestionStep) and first.item.item_id == "CQ-001"
        await answer_question(pilot, first, {})
        await next_step(pilot)
        second = wizard.step
        assert isinstance(second, QuestionStep) and second.item.item_id == "CQ-002"
        assert list(wizard.query(QuestionStep)) == [second], "only the step on screen exists as widgets"
        assert "step 2 of 1001 " in plain(wizard.query_one("#wiz-progress", Static))
        await pilot.press("ctrl+b")
        await settle(pilot)
        again = wizard.step
        assert isinstance(again, QuestionStep) and again is not first and again.item.item_id == "CQ-001"
        assert again.query_one(RadioSet).pressed_index == 0, "the answer given is kept when the step is built again"
        assert list(wizard.query(QuestionStep)) == [again]


async def test_an_option_report_offering_no_comparison_is_answered_as_a_clarification(fresh_demo: Path) -> None:
    from okstra_tui.screens.wizard_attach import AttachDone
    from okstra_tui.screens.wizard_direction import wizard_for_report

    wanted = decision(fresh_demo, "direction-choice")
    report = Path(wanted.report_path or "")
    value = json.loads(report.read_text(encoding="utf-8"))
    value["optionCandidates"]["mode"] = "preselected-validation"
    report.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        task = Project(fresh_demo).find_task(wanted.task)
        assert task is not None
        wizard = wizard_for_report(task, report)
        assert isinstance(wizard, DirectionWizard)
        pilot.app.push_screen(wizard)
        await settle(pilot)
        assert "nothing to answer" in error_line(wizard), "no questions and no choice: said in the wizard"
        assert wizard.current is None and wizard.query_one("#wiz-next", Button).disabled, "only Cancel leads on"
        await pilot.press("escape")
        await settle(pilot)
        assert pilot.app.screen is not wizard

        _ask_many(report, 2)
        again = wizard_for_report(task, report)
        assert isinstance(again, DirectionWizard)
        pilot.app.push_screen(again)
        await settle(pilot)
        assert [s.kind for s in again.steps] == [QuestionStep, QuestionStep, ReviewStep, AttachDone]
        assert plain(again.query_one("#wiz-subject", Static)).startswith(ClarificationWizard.KIND)
        assert isinstance(again.step, QuestionStep) and again.selected(again.values) is None


def _at(inbox: InboxScreen, table: DataTable[object], row: int, wanted: PendingDecision) -> bool:
    table.move_cursor(row=row)
    got = inbox.selected()
    return got is not None and (got.kind, got.item, got.path) == (wanted.kind, wanted.item, wanted.path)


@pytest.mark.parametrize("kind", ["clarification", "direction-choice", "planning-prepare"])
async def test_a_report_changed_under_the_wizard_is_refused_and_reloaded(fresh_demo: Path, kind: str) -> None:
    wanted = decision(fresh_demo, kind)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        wizard = await _to_review(pilot, wanted)
        report = Path(wanted.report_path or "")
        _touch_report(report)
        changed = tree(fresh_demo)
        await next_step(pilot)
        assert wizard.written is None and wizard.step.WRITES, "the write is refused; the review is shown again"
        line = error_line(wizard)
        assert "changed on disk since this wizard opened; nothing was written" in line
        assert report.relative_to(fresh_demo).as_posix() in line
        assert tree(fresh_demo) == changed
        if kind != "planning-prepare":
            # The reloaded view shows the new digest; writing now records it.
            from okstra_core.digests import sha256_bytes

            digest = sha256_bytes(report.read_bytes())
            assert digest in plain(wizard.query_one("#review-facts", Static))
            await next_step(pilot)
            assert wizard.written is not None
            assert digest in wizard.written.path.read_text(encoding="utf-8")


async def test_a_revision_added_under_the_design_wizard_is_refused_and_reloaded(fresh_demo: Path) -> None:
    from okstra_core.workflows.design_prep import answers_text, confirm, design_item

    wanted = decision(fresh_demo, "design-prep")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        wizard = await _to_review(pilot, wanted)
        assert isinstance(wizard, DesignPrepWizard)
        facts = plain(wizard.query_one("#review-facts", Static))
        task = Project(fresh_demo).find_task(wanted.task)
        assert task is not None
        _report, item = design_item(task, wanted.item or "")
        other = confirm(
            fresh_demo, task, wanted.item or "", answers_text({f: "elsewhere" for f in item.fields or ["answer"]})
        )
        changed = tree(fresh_demo)
        await next_step(pilot)
        assert wizard.written is None and wizard.step.WRITES
        assert "design-prep-inputs changed on disk" in error_line(wizard)
        assert tree(fresh_demo) == changed
        revision = int(other.name.split("-r")[1].split("-")[0])
        reloaded = plain(wizard.query_one("#review-facts", Static))
        assert f"r{revision + 1} (the next" in reloaded and reloaded != facts
        await next_step(pilot)
        assert wizard.written is not None and f"-r{revision + 1}-" in wizard.written.path.name


# ----------------------------------------------------------- other entries


async def test_wizards_open_from_their_views_and_the_palette(fresh_demo: Path) -> None:
    clar = decision(fresh_demo, "clarification")
    design = decision(fresh_demo, "design-prep")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.navigate(Location("reports", clar.task_root, clar.report_path))
        await settle(pilot)
        app.screen.query_one("#rep-table", VirtualTable).focus()
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, ClarificationWizard)
        await pilot.press("escape")
        await settle(pilot)
        app.navigate(Location("design-prep", design.task_root))
        await settle(pilot)
        table = app.screen.query_one("#dp-table", VirtualTable)
        table.focus()
        table.cursor = next(i for i, row in enumerate(table.rows) if row.key == f"item:{design.item}")
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, DesignPrepWizard) and app.screen.prep_id == design.item
        await pilot.press("escape")
        await settle(pilot)
        commands = [c.title for c in app.get_system_commands(app.screen)]
        assert any(t.startswith("Decide: confirm design item") and str(design.item) in t for t in commands)
        assert "Inbox" in commands


async def test_options_and_questions_without_their_texts_open_the_wizard(fresh_demo: Path) -> None:
    from okstra_tui.screens.wizard_direction import wizard_for_report

    wanted = decision(fresh_demo, "direction-choice")
    report = Path(wanted.report_path or "")
    value = json.loads(report.read_text(encoding="utf-8"))
    for candidate in value["optionCandidates"]["candidates"]:
        for key in ("title", "summary", "risk"):
            candidate.pop(key, None)
    report.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        task = Project(fresh_demo).find_task(wanted.task)
        assert task is not None
        wizard = wizard_for_report(task, report)
        assert isinstance(wizard, DirectionWizard)
        pilot.app.push_screen(wizard)
        await settle(pilot)
        assert pilot.app.screen is wizard and isinstance(wizard.step, ChooseStep)
        shown = " ".join(plain(s) for s in wizard.query(Static))
        assert "None" not in shown and "(no title)" in shown
