"""``python -m okstra_tui.screenshots DIR``: an SVG of each main view of a fresh demo.

The same scenes drive the snapshot tests, so the README's pictures and the
tests show the same states.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.app import App
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

from okstra_core import layout, names
from okstra_core.store import Project
from okstra_core.workflows.common import Clock
from okstra_core.workflows.inbox import InboxKind

from .app import OkstraApp
from .navigation import Location, View
from .screens.base import ViewScreen
from .screens.wizard import WizardScreen

SIZE = (120, 40)
#: The default size of most terminals: every view is also checked there.
SMALL_SIZE = (80, 24)
#: The time the wizards take in pictures (a review's preview, a write's record); a real wizard takes now.
PREVIEW_TIME = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)

#: Folders and files, relative to a task folder, that pick the task a screenshot shows.
_RUNS = layout.RUNS_DIR
_PLANNING = f"{layout.RUNS_DIR}/{layout.IMPLEMENTATION_PLANNING}"
_TEAM_STATES = f"{layout.RUNS_DIR}/*/{layout.STATE_DIR}/team-state-*.json"

Scene = Callable[[Pilot[None]], Awaitable[None]]


async def workers_done(app: App[None]) -> None:
    """Wait until every worker the app has now is done (finished, failed or cancelled).

    Each worker is awaited on its own: ``WorkerManager.wait_for_complete`` gathers them and stops at the first
    cancelled one (an exclusive worker replaced by a newer one), leaving the others running. A failed worker
    still fails the caller.
    """
    for worker in list(app.workers):
        if worker.state == WorkerState.PENDING:
            continue  # not started (yet): nothing to wait for
        with contextlib.suppress(WorkerCancelled):
            await worker.wait()


async def settle(pilot: Pilot[None]) -> None:
    """Let workers finish and their results paint (the scenes and the workbench's tests wait with this)."""
    for _ in range(3):
        await workers_done(pilot.app)
        await pilot.pause()


def _app(pilot: Pilot[None]) -> OkstraApp:
    app = pilot.app
    assert isinstance(app, OkstraApp)
    return app


def _task_with(app: OkstraApp, predicate: Callable[[Path], bool]) -> Path:
    for ref in app.project.task_refs:
        if predicate(ref.root):
            return ref.root
    return app.project.task_refs[0].root


def _has(pattern: str) -> Callable[[Path], bool]:
    return lambda root: any(root.glob(pattern))


async def catalog(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("L")
    await settle(pilot)


async def catalog_unread(pilot: Pilot[None]) -> None:
    """The catalog after two tasks changed since the person last looked (the seen state says so; no store write)."""
    from okstra_tui.data import seen

    app = _app(pilot)
    await settle(pilot)
    root = app.project.root
    sigs = seen.signatures(root, [ref.root for ref in app.project.task_refs])
    changed = {"payments/refund-ledger", "search/index-rebuild"}
    marks = {key: "(before)" if key in changed else sig for key, sig in sigs.items()}
    seen.mark_seen(root, marks, now=PREVIEW_TIME, replace_all=True)
    screen = app.screen
    assert isinstance(screen, ViewScreen)
    screen.reload()
    await settle(pilot)


async def activity(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("A")
    await settle(pilot)


async def running(pilot: Pilot[None]) -> None:
    """The runs in progress, aged from a fixed time (the demo's running stage went quiet weeks before it)."""
    from .screens.running import RunningScreen

    await settle(pilot)
    await pilot.press("N")
    await settle(pilot)
    screen = _app(pilot).screen
    assert isinstance(screen, RunningScreen)
    screen.fixed_now = PREVIEW_TIME
    screen.refresh_ages()
    await settle(pilot)


async def task(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    staged = _has(f"{_RUNS}/{layout.IMPLEMENTATION}/{layout.STAGE_DIR_PREFIX}*")
    # A task of many runs over days, with a fix cycle: its picture has something to show.
    app.navigate(
        Location(View.TASK, _task_with(app, lambda root: staged(root) and layout.fix_cycles_path(root).exists()))
    )
    await settle(pilot)


async def runs(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    root = _task_with(app, _has(_TEAM_STATES))
    team_state = sorted(root.glob(_TEAM_STATES))[-1]
    app.navigate(Location(View.RUNS, root, team_state.parent.parent, artifact=team_state))
    await settle(pilot)


async def convergence(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    app.navigate(Location(View.CONVERGENCE, _task_with(app, _has(f"{_RUNS}/*/{layout.STATE_DIR}/convergence-round-*"))))
    await settle(pilot)


async def design_prep(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    app.navigate(Location(View.DESIGN_PREP, _task_with(app, _has(f"{_PLANNING}/{layout.DESIGN_PREP_INPUTS}/*"))))
    await settle(pilot)
    await pilot.press("down", "down")
    await settle(pilot)


async def reports(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    app.navigate(
        Location(View.REPORTS, _task_with(app, _has(f"{layout.INSTRUCTION_SET_DIR}/{layout.SELECTED_DIRECTION_FILE}")))
    )
    await settle(pilot)


def _reports(root: Path) -> list[Path]:
    return sorted(root.glob(f"{_PLANNING}/{layout.REPORTS_DIR}/final-report-*{names.REPORT_DATA_SUFFIX}"))


async def file(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    root = _task_with(app, _has(f"{_PLANNING}/{layout.REPORTS_DIR}/*"))
    app.navigate(Location(View.FILE, root, layout.instruction_set_dir(root) / layout.TASK_BRIEF_FILE))
    await settle(pilot)


async def diff(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    root = _task_with(app, lambda r: len(_reports(r)) >= 2)
    left, right = _reports(root)[:2]
    app.navigate(Location(View.DIFF, root, left, partner=right))
    await settle(pilot)


async def checks(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("x")
    await settle(pilot)


async def managers(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("m")
    await settle(pilot)


async def managers_stale(pilot: Pilot[None]) -> None:
    """The demo of three projects: the manager's task with each child as its own project says it now, billing's
    snapshot stale and the command that refreshes it (scrolled into view on a small terminal)."""
    await managers(pilot)
    await pilot.press("down", "down", "down")  # the manager, its projects, its task group, its task
    await settle(pilot)
    body = pilot.app.screen.query_one("#mgr-body", VerticalScroll)
    # The details mount many widgets: on a loaded machine their layout (and the scrollbar) takes a few frames.
    sizes: list[object] = []
    while len(sizes) < 3 or len(set(sizes[-3:])) > 1:
        sizes.append((body.virtual_size, body.scrollable_content_region))
        await pilot.pause(0.05)
        if len(sizes) > 100:
            break
    live = list(body.query(".live-children"))
    top, bottom = live[0].virtual_region.y, live[-1].virtual_region.bottom
    if top < body.scroll_y or bottom > body.scroll_y + body.scrollable_content_region.height:
        body.scroll_to_widget(live[0], animate=False, top=True)
    await settle(pilot)


async def help_screen(pilot: Pilot[None]) -> None:
    await task(pilot)
    await pilot.press("question_mark")
    await settle(pilot)


async def home(pilot: Pilot[None]) -> None:
    """Home over the demo's manager home and a named root that is gone; the demo's folder is shown as "…" (the
    picture says the same wherever the demo was written)."""
    await _home_from(pilot, (Path("/nonexistent/retired-project"),))


async def home_projects(pilot: Pilot[None]) -> None:
    """Home over the demo of three projects (the projects' folders shown from "…", wherever the demo was written),
    with the roots opened before left out."""
    await _home_from(pilot, ())


async def _home_from(pilot: Pilot[None], named: tuple[Path, ...]) -> None:
    """Home over the manager home, the roots *named* and none of the roots opened before, its ages from a fixed
    time."""
    app = _app(pilot)
    app.root_base = (app.project.root.parent, "…")
    app.remembered = False
    app.named_roots = named
    await settle(pilot)
    await pilot.press("H")
    await settle(pilot)
    from .screens.home import HomeScreen

    screen = app.screen
    assert isinstance(screen, HomeScreen)
    screen.fixed_now = PREVIEW_TIME  # ages and stalled marks from a fixed time
    screen.refresh_ages()
    await settle(pilot)


async def inbox(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("i")
    await settle(pilot)


async def insights(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("I")
    await settle(pilot)
    await pilot.press("3")  # the funnel: where the demo's tasks stop
    await settle(pilot)


async def _open_decision(pilot: Pilot[None], kind: InboxKind) -> WizardScreen:
    """From the inbox, Enter on the first decision of *kind*: its wizard, at step 1."""
    from textual.widgets import DataTable

    from .screens.inbox import InboxScreen

    await inbox(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, InboxScreen)
    table = screen.query_one("#inbox-table", DataTable)
    for row in range(table.row_count):
        table.move_cursor(row=row)
        found = screen.selected()
        if found is not None and found.kind == kind and found.detail != "attach-pending":
            break
    await pilot.press("enter")
    await settle(pilot)
    wizard = pilot.app.screen
    assert isinstance(wizard, WizardScreen)
    # A review previews a time and a write records one; a fixed clock keeps the picture the same.
    wizard.clock = Clock(start=PREVIEW_TIME)
    return wizard


async def _fill_until(pilot: Pilot[None], wizard: WizardScreen, stop: Callable[[WizardScreen], bool]) -> None:
    """Answer each step the way a person would (first option, a short text) until *stop* holds."""
    from textual.widgets import RadioButton, TextArea

    from .screens.wizard_design import FieldStep
    from .screens.wizard_direction import ChooseStep
    from .screens.wizard_steps import QuestionStep

    while not stop(wizard) and not wizard.step.WRITES:
        step = wizard.step
        if isinstance(step, ChooseStep):
            step.choose(step.oc.recommendation or step.oc.candidates[0].option_id)
        elif isinstance(step, QuestionStep):
            if step.item.options:
                await pilot.click(step.query(RadioButton).first())
            else:
                step.query_one(TextArea).text = "Only the gross amounts; net is derived downstream."
        elif isinstance(step, FieldStep):
            step.query_one(TextArea).text = f"{step.name_}: as the request proposes."
        await pilot.press("ctrl+n")
        await settle(pilot)


async def wizard_clarification_question(pilot: Pilot[None]) -> None:
    wizard = await _open_decision(pilot, "clarification")
    from .screens.wizard_steps import QuestionStep

    await _fill_until(pilot, wizard, lambda w: isinstance(w.step, QuestionStep) and bool(w.step.item.options))


async def wizard_clarification_review(pilot: Pilot[None]) -> None:
    wizard = await _open_decision(pilot, "clarification")
    await _fill_until(pilot, wizard, lambda w: False)


async def wizard_direction_choose(pilot: Pilot[None]) -> None:
    await _open_decision(pilot, "direction-choice")


async def wizard_direction_chosen(pilot: Pilot[None]) -> None:
    """The recommended direction chosen (its mark reads without colour)."""
    from .screens.wizard_direction import ChooseStep

    wizard = await _open_decision(pilot, "direction-choice")
    step = wizard.step
    assert isinstance(step, ChooseStep)
    step.choose(step.oc.recommendation or step.oc.candidates[0].option_id)
    await settle(pilot)


async def wizard_direction_review(pilot: Pilot[None]) -> None:
    wizard = await _open_decision(pilot, "direction-choice")
    await _fill_until(pilot, wizard, lambda w: False)


async def wizard_prepare(pilot: Pilot[None]) -> None:
    await _open_decision(pilot, "planning-prepare")


async def wizard_design_request(pilot: Pilot[None]) -> None:
    await _open_decision(pilot, "design-prep")


async def wizard_design_field(pilot: Pilot[None]) -> None:
    wizard = await _open_decision(pilot, "design-prep")
    await pilot.press("ctrl+n")
    await settle(pilot)
    await pilot.press("ctrl+n")  # empty: the inline refusal shows
    await settle(pilot)
    del wizard


async def wizard_design_review(pilot: Pilot[None]) -> None:
    wizard = await _open_decision(pilot, "design-prep")
    await _fill_until(pilot, wizard, lambda w: False)


async def _write(pilot: Pilot[None], kind: InboxKind) -> None:
    """Answer the decision's wizard, write at its review, and stay on the step after the write."""
    wizard = await _open_decision(pilot, kind)
    await _fill_until(pilot, wizard, lambda w: False)
    assert wizard.step.WRITES
    await pilot.press("ctrl+n")
    await settle(pilot)
    assert wizard.step.FINAL and wizard.written is not None


async def wizard_clarification_written(pilot: Pilot[None]) -> None:
    await _write(pilot, "clarification")


async def wizard_direction_written(pilot: Pilot[None]) -> None:
    await _write(pilot, "direction-choice")


async def write_log(pilot: Pilot[None]) -> None:
    """A direction chosen in its wizard, then the write log (W): the write with its command line."""
    await _write(pilot, "direction-choice")
    await pilot.press("escape")
    await settle(pilot)
    pilot.app.clear_notifications()
    await pilot.press("W")
    await settle(pilot)


async def wizard_prepare_written(pilot: Pilot[None]) -> None:
    await _write(pilot, "planning-prepare")


async def wizard_design_written(pilot: Pilot[None]) -> None:
    await _write(pilot, "design-prep")


#: What the Search scenes type.
SEARCH_QUERY = "retry kind:finding"


async def search(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await _search_for(pilot)


async def _search_for(pilot: Pilot[None]) -> None:
    """ctrl+f, then the Search scenes' query typed."""
    await pilot.press("ctrl+f")
    await settle(pilot)
    await pilot.press(*("space" if c == " " else c for c in SEARCH_QUERY))
    await settle(pilot)


async def search_match(pilot: Pilot[None]) -> None:
    """A hit opened at its match (the third hit: a finding of an analysis report), then the next match."""
    await search(pilot)
    await pilot.press("down", "down", "down", "enter")
    await settle(pilot)
    await pilot.press("n")
    await settle(pilot)


async def search_all(pilot: Pilot[None]) -> None:
    """ctrl+f on Home: the Search scenes' query over every project of Home's list (one of them gone)."""
    await home(pilot)
    await _search_for(pilot)


async def insights_all(pilot: Pilot[None]) -> None:
    """I on Home: the numbers of every project of Home's list side by side (one of them gone)."""
    await home(pilot)
    await pilot.press("I")
    await settle(pilot)


#: View name -> how to get there from start.
SCENES: dict[str, Scene] = {
    "home": home,
    "catalog": catalog,
    "catalog-unread": catalog_unread,
    "activity": activity,
    "running": running,
    "task": task,
    "runs": runs,
    "convergence": convergence,
    "design-prep": design_prep,
    "reports": reports,
    "file": file,
    "diff": diff,
    "checks": checks,
    "managers": managers,
    "help": help_screen,
    "inbox": inbox,
    "search": search,
    "search-match": search_match,
    "insights": insights,
    "search-all": search_all,
    "insights-all": insights_all,
    "wizard-clarification-question": wizard_clarification_question,
    "wizard-clarification-review": wizard_clarification_review,
    "wizard-direction-choose": wizard_direction_choose,
    "wizard-direction-chosen": wizard_direction_chosen,
    "wizard-direction-review": wizard_direction_review,
    "wizard-prepare": wizard_prepare,
    "wizard-design-request": wizard_design_request,
    "wizard-design-field": wizard_design_field,
    "wizard-design-review": wizard_design_review,
}

#: Scenes that write into the project (the step after a successful write): each needs its own copy of the demo.
WRITING_SCENES: dict[str, Scene] = {
    "wizard-clarification-written": wizard_clarification_written,
    "wizard-direction-written": wizard_direction_written,
    "wizard-prepare-written": wizard_prepare_written,
    "wizard-design-written": wizard_design_written,
    "write-log": write_log,
}

#: Scenes of the demo of three projects (``okstra demo --projects``), opened on its shop with its manager home.
PROJECTS_SCENES: dict[str, Scene] = {
    "home-projects": home_projects,
    "managers-stale": managers_stale,
}

#: Scenes whose 80x24 picture is kept in screenshots/ too (the snapshot tests draw every scene at 80x24).
SMALL_PICTURES: tuple[str, ...] = ("inbox", "insights", "wizard-clarification-question", "wizard-direction-choose")


async def capture(root: Path, name: str, scene: Scene, out: Path, size: tuple[int, int] = SIZE) -> Path:
    """Drive one scene headless and save its SVG."""
    project = Project.open(root)
    assert isinstance(project, Project)
    app = OkstraApp(project)
    async with app.run_test(size=size) as pilot:
        await scene(pilot)
        target = out / f"{name}.svg"
        app.save_screenshot(filename=target.name, path=str(out))
    return target


def main(argv: list[str] | None = None) -> int:
    """Write ``<view>.svg`` for every main view into the given folder."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    from okstra_core.demo import generate

    with tempfile.TemporaryDirectory(prefix="okstra-shots-") as tmp:
        root = generate(Path(tmp) / "project")
        os.environ["OKSTRA_HOME"] = str(layout.demo_home(root))
        # The scenes' seen marks and write-log entries go to a scratch state folder, not the user's.
        os.environ["OKSTRA_STATE_DIR"] = str(Path(tmp) / "user-state")
        for name, scene in SCENES.items():
            path = asyncio.run(capture(root, name, scene, out))
            print(path)
        for name in SMALL_PICTURES:
            small = f"{name}-{SMALL_SIZE[0]}x{SMALL_SIZE[1]}"
            path = asyncio.run(capture(root, small, SCENES[name], out, SMALL_SIZE))
            print(path)
        for name, scene in WRITING_SCENES.items():
            copy = Path(tmp) / name / "project"
            shutil.copytree(root, copy, symlinks=True)
            os.environ["OKSTRA_HOME"] = str(layout.demo_home(copy))
            path = asyncio.run(capture(copy, name, scene, out))
            print(path)
        _capture_projects(Path(tmp) / "projects", out)
    return 0


def _capture_projects(target: Path, out: Path) -> None:
    """The scenes of the demo of three projects, written into *target*."""
    from okstra_core.demo.projects import HOME_DIR, SHOP_DIR, generate_projects

    base = generate_projects(target)
    os.environ["OKSTRA_HOME"] = str(base / HOME_DIR)
    for name, scene in PROJECTS_SCENES.items():
        print(asyncio.run(capture(base / SHOP_DIR, name, scene, out)))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
